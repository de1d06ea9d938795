/**
 * THE table definition: attribute names, key builders and the seven GSIs.
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
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { placeName, type PlaceKey } from '../../core/place.js';
import type { ProfileList } from '../../core/read-items.js';

export const PK = 'pk';
export const SK = 'sk';

export interface IndexDefinition {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  /** What it serves; rendered into docs/data-model.md. */
  readonly purpose: string;
  /**
   * What the index copies of its items: `ALL` (the read needs nothing else) or
   * `KEYS_ONLY` (the read fetches the items by key: an index entry is ~150 B,
   * and an edit that moves no key writes nothing to the index).
   */
  readonly projection: 'ALL' | 'KEYS_ONLY';
}

export const INDEXES = {
  /** Event by id, and its guests in RSVP order (all statuses); a user by username. */
  event: {
    name: 'event-index',
    partitionKey: 'gsi1pk',
    sortKey: 'gsi1sk',
    purpose: 'public event by id; its guests of every status in rsvp_date order; a user by username',
    projection: 'ALL',
  },
  /** A user's hosted events and profile events, by start date. */
  userEvents: {
    name: 'user-events-index',
    partitionKey: 'gsi2pk',
    sortKey: 'gsi2sk',
    purpose: "a user's hosted or profile events, in start_date order",
    projection: 'ALL',
  },
  /** An event's guests of one RSVP status, in RSVP order. */
  guest: {
    name: 'guest-index',
    partitionKey: 'gsi3pk',
    sortKey: 'gsi3sk',
    purpose: "an event's guests of one rsvp status, in rsvp_date order",
    projection: 'ALL',
  },
  /** The same lists as user-events-index, by creation time, so the created-ordered pages read only what they show. */
  userCreated: {
    name: 'user-created-index',
    partitionKey: 'gsi4pk',
    sortKey: 'gsi4sk',
    purpose: "a user's hosted or profile events, in created_at order",
    projection: 'ALL',
  },
  /*
   * Discovery (PRODUCT P17): a public event's place queries, one index per
   * kind of query (placeQueriesOf), each sharded (PLACE_SHARDS) and keyed by
   * local start date-time then id. Keys only: the route reads the event
   * items by key afterwards (docs/finding-events.md).
   */
  /** Events at a country and city, by local start. */
  place: {
    name: 'place-index',
    partitionKey: 'gsi5pk',
    sortKey: 'gsi5sk',
    purpose: 'public events at a country and city, in local start order (keys only)',
    projection: 'KEYS_ONLY',
  },
  /** Events in a country, by local start. */
  country: {
    name: 'country-index',
    partitionKey: 'gsi6pk',
    sortKey: 'gsi6sk',
    purpose: 'public events in a country, in local start order (keys only)',
    projection: 'KEYS_ONLY',
  },
  /** Events in a city (any country), by local start. */
  city: {
    name: 'city-index',
    partitionKey: 'gsi7pk',
    sortKey: 'gsi7sk',
    purpose: 'public events in a city of any country, in local start order (keys only)',
    projection: 'KEYS_ONLY',
  },
} as const satisfies Record<string, IndexDefinition>;

export type IndexName = keyof typeof INDEXES;

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
  apiKey: (keyHash: string) => ({ [PK]: `APIKEY#${keyHash}`, [SK]: 'APIKEY' }),
  /** A user's active-key counter: the 10-key limit is a conditional update of it. */
  keyCounter: (userId: string) => ({ [PK]: `USERKEYS#${userId}`, [SK]: 'COUNTER' }),
  /** A key's management record, listed per user; holds the hash, never shown. */
  keyRecord: (userId: string, keyId: string) => ({ [PK]: `USERKEYS#${userId}`, [SK]: `KEY#${keyId}` }),
  /** key id → owner, so `revoke KEY_ID` needs no scan. */
  keyPointer: (keyId: string) => ({ [PK]: `KEYID#${keyId}`, [SK]: 'KEY' }),
  /**
   * One create request of the key-management API, by its user and idempotency key: a retry finds the key it made. Per
   * user, so one user's idempotency key never meets (nor reveals) another's; neither part holds a `#`.
   */
  keyRequest: (userId: string, idempotencyKey: string) => ({ [PK]: `KEYREQ#${userId}#${idempotencyKey}`, [SK]: 'REQUEST' }),
  /** The local server's daily request count of a key (API Gateway's usage plan in AWS). */
  quota: (keyId: string, utcDay: string) => ({ [PK]: `QUOTA#${keyId}`, [SK]: utcDay }),
};

export const LINK_PREFIX = 'LINK#';
export const GUEST_SEQ_PREFIX = 'SEQ#';
export const GUEST_COUNT_PREFIX = 'COUNT#';
export const GUEST_COUNT_SUMMARY_PREFIX = 'COUNTS#';
/**
 * Guest counts are kept per bucket of guests, so that an RSVP recounts one
 * bucket (about guests / 64 tiny entries) and the event sums 64 summaries at
 * most: the same cost on an event of 10 or 10,000 guests.
 */
export const GUEST_COUNT_BUCKETS = 64;

/** 32-bit FNV-1a of a string's UTF-16 code units: stable across runtimes, cheap, spread enough for shards. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A user's count bucket: FNV-1a of the id, two decimal digits (stable across runtimes). */
export function countBucket(userId: string): string {
  return String(fnv1a(userId) % GUEST_COUNT_BUCKETS).padStart(2, '0');
}

/**
 * An event's guest partitions: a guest's items are in shard `countBucket mod
 * GUEST_SHARDS`, so a count bucket's entries are in one partition (one Query
 * recounts it). Eight: a burst at the recommended ingest pace (about 430
 * RSVPs/s, docs/performance.md) writes about 9 items per RSVP over the 8
 * shards, about 480 write units a second per shard on average (550 in the
 * busiest measured), about half of a partition's 1,000; an event-wide walk
 * of its guests (an event's fan-out, a deletion's cascade) is 8 Queries at
 * once, one round trip.
 *
 * Part of every guest item's key: changing it (or countBucket) moves every
 * guest item, and a table written before needs a fresh load.
 */
export const GUEST_SHARDS = 8;

/** The shard that holds a count bucket's entries (every user of the bucket is in it). */
export function shardOfBucket(bucket: string): number {
  return Number(bucket) % GUEST_SHARDS;
}

/** A guest's shard of an event (0 to GUEST_SHARDS - 1). */
export function guestShard(userId: string): number {
  return shardOfBucket(countBucket(userId));
}

/** The partition key of an event's guest shard. */
export function guestShardPartition(eventId: string, shard: number): string {
  return `EVENT#${eventId}#G${shard}`;
}

/** The event and the shard whose guest partition this is (guestShardPartition), or undefined for any other partition. */
export function guestShardOfPartition(pk: string): { eventId: string; shard: number } | undefined {
  const found = /^EVENT#(.+)#G(\d+)$/.exec(pk);
  return found ? { eventId: found[1]!, shard: Number(found[2]) } : undefined;
}

/** The partition of a guest's items in an event. */
export function guestPartitionOf(eventId: string, userId: string): string {
  return guestShardPartition(eventId, guestShard(userId));
}

export const GUEST_SHARDS_SORT_KEY = 'SHARDS';

/** The attribute of an event's guest shards record (keys.guestShards) that marks shard `shard` occupied. */
export function shardMark(shard: number): string {
  return `g${shard}`;
}

/** Every guest shard of an event, in order. */
export function guestShardPartitions(eventId: string): string[] {
  return Array.from({ length: GUEST_SHARDS }, (_, shard) => guestShardPartition(eventId, shard));
}

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
 * The shards of each place query's partition: an event is in shard
 * FNV-1a(id) mod PLACE_SHARDS, so a load or resync of 100,000 events in one
 * city spreads its index writes over four partitions per index (under 1,000
 * WCU/s each at the documented load rate: docs/data-model.md, "Discovery"),
 * and a page reads the four at once, one round trip.
 *
 * Part of every place key: changing it moves every entry (a fresh load).
 */
export const PLACE_SHARDS = 4;

/** The place shard of an event (0 to PLACE_SHARDS - 1). */
export function placeShard(eventId: string): number {
  return fnv1a(eventId) % PLACE_SHARDS;
}

/** The index that answers a place query: both parts, the country alone, or the city alone. */
export function placeIndexOf(query: PlaceKey): IndexDefinition {
  if (query.country !== undefined && query.city !== undefined) return INDEXES.place;
  return query.country !== undefined ? INDEXES.country : INDEXES.city;
}

/** The partition of one shard of a place query (placeName escapes the parts). */
export function placePartition(query: PlaceKey, shard: number): string {
  return `PLACE#${placeName(query)}#${shard}`;
}

/** Every shard's partition of a place query, in order. */
export function placePartitions(query: PlaceKey): string[] {
  return Array.from({ length: PLACE_SHARDS }, (_, shard) => placePartition(query, shard));
}

/**
 * A place index entry's sort key: the event's local start date-time
 * (`YYYY-MM-DDTHH:mm:ss`, fixed width) then its id, so key order is the
 * order discovery answers in (PRODUCT P17).
 */
export function placeSortKey(localStart: string, eventId: string): string {
  return `${localStart}#${eventId}`;
}

/**
 * Sort-key bounds of a window of local dates (inclusive `YYYY-MM-DD`): a
 * bare date sorts before every date-time of that day, and `T~` after every
 * one (`~` is above every digit).
 */
export const placeSortBounds = (from: string, to: string) => ({ lower: from, upper: `${to}T~` });

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

/** The table as CreateTable input: used verbatim by dynalite, mirrored by CDK. */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const indexAttributes = Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]);
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [PK, SK, ...indexAttributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: PK, KeyType: 'HASH' },
      { AttributeName: SK, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: Object.values(INDEXES).map((i) => ({
      IndexName: i.name,
      KeySchema: [
        { AttributeName: i.partitionKey, KeyType: 'HASH' },
        { AttributeName: i.sortKey, KeyType: 'RANGE' },
      ],
      // ALL: the index read returns the whole public item, so it needs no
      // second trip to the base table; KEYS_ONLY: the read fetches the items
      // by key (see docs/data-model.md).
      Projection: { ProjectionType: i.projection },
    })),
  };
}

/**
 * Time-to-live attribute (epoch seconds): DynamoDB deletes an item some time
 * after it. Set on the local quota's day counters and on derived tombstones,
 * which only matter while an older derivation might still be writing.
 */
export const TTL_ATTRIBUTE = 'expires_at';
