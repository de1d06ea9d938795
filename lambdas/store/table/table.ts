/**
 * THE table definition: attribute names, key builders and the seven GSIs,
 * in parts (indexes.ts, guest-partitions.ts, place-keys.ts) re-exported here.
 * Imported by the store (reads and the writer), by `lib/` (CDK) and by the local
 * server (dynalite's CreateTable), so there is exactly one definition.
 * docs/data-model.md explains every access pattern built on it.
 *
 * Privacy by construction: the GSI key attributes are written only on items the
 * public read paths may see (public + published events, their linked RSVPs, and
 * profile entries). Every read of event or guest data starts from a GSI, so a
 * private or draft event, and an anonymous RSVP, has no key any read can reach.
 * The base-table reads of the list routes are a list's tally (tally.ts: counts
 * and event ids of public events only, never returned) and, for a profile
 * list, the event items its entries point at, of which only those in the event
 * index are shown (repository.ts); for discovery, the event items its
 * keys-only place indexes point at, each shown only while it still carries
 * the entry that led to it (search.ts).
 */
import type { ProfileList } from '../../core/read-items.js';
import { INDEXES, PK, SK } from './indexes.js';
import { countBucket, guestPartitionOf, guestShardPartition, shardOfBucket, GUEST_SHARDS_SORT_KEY } from './guest-partitions.js';
import { placeIndexOf, placePartition, placeShard, placeSortKey } from './place-keys.js';
import type { PlaceKey } from '../../core/place.js';

export * from './indexes.js';
export * from './fnv1a.js';
export * from './guest-partitions.js';
export * from './place-keys.js';

export type { ProfileList };

/**
 * Base-table keys. An event's partition holds its own source, item and
 * derivation counter, and its guest counts' bucket summaries; its guests'
 * items (each RSVP's source, derivation counter, RSVP item, profile entry and
 * count entry) are in one of its GUEST_SHARDS guest partitions, by the
 * guest's count bucket (guestShard), so that a burst of RSVPs on one event
 * spreads its writes over several partitions instead of meeting DynamoDB's
 * per-partition limit (docs/data-model.md, "An event's guests in shards").
 * Each derivation reads its unit's few items by key (derivation.ts). A user's
 * partition holds the user (the source and the item the API reads, by id) and
 * one link per event the user touches, so a user change finds every event it
 * affects without a scan.
 */
export const keys = {
  user: (userId: string) => ({ [PK]: `USER#${userId}`, [SK]: 'USER' }),
  /** "This user hosts or answered this event": the fan-out list of a user change. */
  userEventLink: (userId: string, eventId: string) => ({ [PK]: `USER#${userId}`, [SK]: `${LINK_PREFIX}${eventId}` }),
  event: (eventId: string) => ({ [PK]: `EVENT#${eventId}`, [SK]: 'EVENT' }),
  eventSource: (eventId: string) => ({ [PK]: `EVENT#${eventId}`, [SK]: 'SRC' }),
  rsvpSource: (eventId: string, userId: string) => ({ [PK]: guestPartitionOf(eventId, userId), [SK]: `${RSVP_SOURCE_PREFIX}${userId}` }),
  /** The event's derivation counter: each derivation takes the next number (see docs/data-model.md). */
  derivationSeq: (eventId: string) => ({ [PK]: `EVENT#${eventId}`, [SK]: 'SEQ' }),
  /**
   * The event's record of its occupied guest shards (items.ts, GuestShardsItem): a shard is marked before the first
   * item is written in it and never unmarked, so an event-wide walk queries only the marked shards (guest-shards.ts).
   */
  guestShards: (eventId: string) => ({ [PK]: `EVENT#${eventId}`, [SK]: GUEST_SHARDS_SORT_KEY }),
  rsvp: (eventId: string, userId: string) => ({ [PK]: guestPartitionOf(eventId, userId), [SK]: `RSVP#${userId}` }),
  profileEntry: (eventId: string, userId: string) => ({ [PK]: guestPartitionOf(eventId, userId), [SK]: `PROFILE#${userId}` }),
  /** One guest's derivation counter: a guest's items (RSVP, profile entry, count entry) are derived on their own (derivation.ts). */
  guestSeq: (eventId: string, userId: string) => ({ [PK]: guestPartitionOf(eventId, userId), [SK]: `${GUEST_SEQ_PREFIX}${userId}` }),
  /** What one guest adds to the event's guest counts, in the guest's count bucket. */
  guestCount: (eventId: string, userId: string) => ({ [PK]: guestPartitionOf(eventId, userId), [SK]: `${GUEST_COUNT_PREFIX}${countBucket(userId)}#${userId}` }),
  /** A count bucket's totals per status, recounted from its entries (guest-counts.ts). */
  guestCountSummary: (eventId: string, bucket: string) => ({ [PK]: `EVENT#${eventId}`, [SK]: `${GUEST_COUNT_SUMMARY_PREFIX}${bucket}` }),
  /**
   * A count bucket's recount ticket (guest-counts.ts), in the bucket's guest
   * shard beside its entries rather than on the summary in the event's
   * partition: a new RSVP then writes one item there (its count), not two,
   * so a burst on one event keeps that partition at about 430 write units a
   * second at the ingest's pace (docs/data-model.md, "Partitions under the
   * change path"). Bookkeeping: never derived, never removed (a recount's
   * count is refused unless its ticket is above the summary's `counted`).
   */
  guestCountTicket: (eventId: string, bucket: string) => ({ [PK]: guestShardPartition(eventId, shardOfBucket(bucket)), [SK]: `${GUEST_COUNT_TICKET_PREFIX}${bucket}` }),
  apiKey: (keyHash: string) => ({ [PK]: `APIKEY#${keyHash}`, [SK]: 'APIKEY' }),
  /** A user's active-key counter: the 10-key limit is a conditional update of it. */
  keyCounter: (userId: string) => ({ [PK]: `USERKEYS#${userId}`, [SK]: 'COUNTER' }),
  /** How far a user's deletion has closed their keys (lambdas/store/keys/user-keys.ts): there only between two calls of a close. */
  keyClose: (userId: string) => ({ [PK]: `USERKEYS#${userId}`, [SK]: 'CLOSE' }),
  /** A key's management record, listed per user; holds the hash, never shown. */
  keyRecord: (userId: string, keyId: string) => ({ [PK]: `USERKEYS#${userId}`, [SK]: `KEY#${keyId}` }),
  /** key id → owner, so `revoke KEY_ID` needs no scan. */
  keyPointer: (keyId: string) => ({ [PK]: `KEYID#${keyId}`, [SK]: 'KEY' }),
  /**
   * One create request of the key-management API, by its user and idempotency key: a retry finds the key it made. Per
   * user, so one user's idempotency key never meets (nor reveals) another's; neither part holds a `#`.
   */
  keyRequest: (userId: string, idempotencyKey: string) => ({ [PK]: `KEYREQ#${userId}#${idempotencyKey}`, [SK]: 'REQUEST' }),
  /** Where the plan-key sweep's pass has got to (lambdas/store/keys/plan-key-sweep.ts): one item. */
  keySweep: () => ({ [PK]: 'KEYSWEEP#PLAN', [SK]: 'PROGRESS' }),
  /** The local server's daily request count of a key (API Gateway's usage plan in AWS). */
  quota: (keyId: string, utcDay: string) => ({ [PK]: `QUOTA#${keyId}`, [SK]: utcDay }),
};

export const LINK_PREFIX = 'LINK#';
export const GUEST_SEQ_PREFIX = 'SEQ#';
export const GUEST_COUNT_PREFIX = 'COUNT#';
export const GUEST_COUNT_SUMMARY_PREFIX = 'COUNTS#';
export const GUEST_COUNT_TICKET_PREFIX = 'TICKET#';
export const GUEST_COUNT_TICKET_TYPE = 'GUEST_COUNT_TICKET';

export const RSVP_SOURCE_PREFIX = 'SRC#RSVP#';
/** Sort keys of the items derived from an event's sources (everything else in its partition is bookkeeping or source). */
export const DERIVED_SORT_KEYS = { event: 'EVENT', rsvpPrefix: 'RSVP#', profilePrefix: 'PROFILE#' } as const;

export const KEY_RECORD_PREFIX = 'KEY#';

/**
 * GSI keys. Sort keys start with a fixed-width ISO datetime so string order is
 * time order; the id after `#` makes them unique and breaks ties by id.
 */
export const indexKeys = {
  /** A live user by username, lower-cased: lookups are case-insensitive (PRODUCT P5). */
  userByName: (username: string) => ({
    [INDEXES.event.partitionKey]: `USERNAME#${username.toLowerCase()}`,
    [INDEXES.event.sortKey]: 'USER',
  }),
  eventById: (eventId: string) => ({
    [INDEXES.event.partitionKey]: `EVENT#${eventId}`,
    [INDEXES.event.sortKey]: 'EVENT',
  }),
  guestOfEvent: (eventId: string, rsvpDate: string, userId: string) => ({
    [INDEXES.event.partitionKey]: `EVENT#${eventId}`,
    [INDEXES.event.sortKey]: `GUEST#${rsvpDate}#${userId}`,
  }),
  guestByStatus: (eventId: string, status: string, rsvpDate: string, userId: string) => ({
    [INDEXES.guest.partitionKey]: guestPartition(eventId, status),
    [INDEXES.guest.sortKey]: `${rsvpDate}#${userId}`,
  }),
  userEvent: (username: string, list: ProfileList, startDate: string, eventId: string) => ({
    [INDEXES.userEvents.partitionKey]: userEventsPartition(username, list),
    [INDEXES.userEvents.sortKey]: `${startDate}#${eventId}`,
  }),
  userEventByCreation: (username: string, list: ProfileList, createdAt: string, eventId: string) => ({
    [INDEXES.userCreated.partitionKey]: userEventsPartition(username, list),
    [INDEXES.userCreated.sortKey]: `${createdAt}#${eventId}`,
  }),
  /** An event's entry for one of its place queries (placeQueriesOf), in that query's index. */
  eventAtPlace: (query: PlaceKey, localStart: string, eventId: string) => {
    const index = placeIndexOf(query);
    return { [index.partitionKey]: placePartition(query, placeShard(eventId)), [index.sortKey]: placeSortKey(localStart, eventId) };
  },
};

export const GUEST_SORT_PREFIX = 'GUEST#';

/**
 * What an event-index entry stands for, from its sort key (indexKeys: `EVENT`, `GUEST#…`, `USER`): the index copies
 * no `type` (indexes.ts), so whoever reads its entries whole tells them apart by this.
 */
export function eventIndexEntryKind(entry: Record<string, unknown>): 'EVENT' | 'RSVP' | 'USER' {
  const sk = String(entry[INDEXES.event.sortKey]);
  return sk === indexKeys.eventById('')[INDEXES.event.sortKey] ? 'EVENT' : sk.startsWith(GUEST_SORT_PREFIX) ? 'RSVP' : 'USER';
}

export function guestPartition(eventId: string, status: string): string {
  return `EVENT#${eventId}#${status}`;
}

export function userEventsPartition(username: string, list: ProfileList): string {
  return `USER#${username.toLowerCase()}#${list}`;
}

/**
 * Sort-key bounds over `${startIso}#${eventId}`. `#` is 0x23, so a bare
 * `${iso}` sorts before every `${iso}#id` and `${iso}$` after every one.
 */
export const sortKeyBounds = {
  /** Lowest key of an event starting at or after `iso`. */
  startingAtOrAfter: (iso: string): string => iso,
  /** Highest key of an event starting at or before `iso`. */
  startingAtOrBefore: (iso: string): string => `${iso}$`,
  /** Keys of events starting strictly before `iso` are below this (no key equals it). */
  startingBefore: (iso: string): string => iso,
};
