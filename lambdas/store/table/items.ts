/**
 * The shapes of table items. Payload attributes use the contract's field names
 * (snake_case) with datetimes normalised to `toISOString()`; key attributes are
 * the generic ones from table.ts. No item holds an e-mail, a phone number or an
 * anonymous guest: the read model never stores what it must never return.
 */
import type { Scope, SourceEvent } from '../../core/dataset.js';
import type { ApiKeyItem, CalendarRevision, EventItem, GuestCounts, RsvpItem, RsvpStatus, VerificationStatus } from '../../core/read-items.js';

// The items the read routes map live in the core, which the ports return them by; the store writes and reads them.
export type { ApiKeyItem, CalendarRevision, CreatorSnapshot, EventItem, EventPayload, GuestCounts, GuestSnapshot, LiveApiKeyItem, RevokedApiKeyItem, RsvpItem, RsvpStatus, VerificationStatus } from '../../core/read-items.js';

/**
 * A member's entry in their profile list: where the event is listed, no
 * copy of it. The list reads the event items it points at, so an edit of an
 * event rewrites its own item only, however many members list it.
 */
export interface ProfileEntryItem {
  type: 'PROFILE_ENTRY';
  event_id: string;
  member_id: string;
  start_date: string;
  created_at: string;
}

/** What one linked guest adds to the event's guest counts (no guest data). */
export interface GuestCountItem {
  type: 'GUEST_COUNT';
  rsvp_status: RsvpStatus;
}

/** One count bucket's guests per status (recounted from its entries). */
export interface GuestCountSummaryItem extends GuestCounts {
  type: 'GUEST_COUNT_SUMMARY';
  /** Recount bookkeeping, as on tally summaries. */
  ticket?: number;
  counted?: number;
}


/**
 * A user as the API may show them: the user's source record without its
 * private fields. Stored by id; while the user exists it is indexed by
 * username (userByName), which is how the API and the key manager find it.
 */
export interface UserRecord {
  id: string;
  username: string;
  name: string | null;
  image: string | null;
  verification_status: VerificationStatus;
}

/** Versions and pending work of a source item (PRODUCT P14); bookkeeping, never returned. */
export interface SourceBookkeeping {
  /** The version of the last change applied to the entity; 0 for records loaded from a dataset. */
  version: number;
  /** A tombstone: the entity was deleted at `version` and keeps it, so older changes stay stale. */
  deleted?: true;
  /** Set while the change's derivations (or cascade) are not finished; a redelivery finishes them. */
  pending?: true;
}

export interface UserItem extends SourceBookkeeping {
  type: 'USER';
  user_id: string;
  /** Absent on a tombstone. */
  user?: UserRecord;
}

/** An event's source record as the web product sent it (the contract's fields; none of them private). */
export type EventRecord = SourceEvent;

export interface EventSourceItem extends SourceBookkeeping {
  type: 'EVENT_SOURCE';
  event_id: string;
  /** Absent on a tombstone. */
  event?: EventRecord;
  /** The event's calendar history (lambdas/core/calendar-revision.ts): absent until the first revision; a tombstone keeps it. */
  revision?: CalendarRevision;
}

/** A linked user's RSVP as the source sent it, without the private fields. */
export interface RsvpRecord {
  event_id: string;
  user_id: string;
  status: RsvpStatus;
  rsvp_date: string;
}

export interface RsvpSourceItem extends SourceBookkeeping {
  type: 'RSVP_SOURCE';
  event_id: string;
  user_id: string;
  /** Absent on a tombstone. */
  rsvp?: RsvpRecord;
}

/** The user hosts or answered the event (or once did): a user change re-derives it. */
export interface UserEventLinkItem {
  type: 'USER_EVENT_LINK';
  user_id: string;
  event_id: string;
}

/** The event's derivation counter. */
export interface DerivationSeqItem {
  type: 'DERIVATION_SEQ';
  seq: number;
}

/**
 * Which of the event's guest shards may hold items (keys.guestShards): `g{s}` (table.ts, shardMark) is true once
 * shard s was marked, which every writer does before it writes the shard's first item; a mark is never removed
 * (docs/data-model.md, "An event's guests in shards"). Bookkeeping, never returned.
 */
export type GuestShardsItem = { type: 'GUEST_SHARDS' } & { [mark: `g${number}`]: true };

/** Stands where a derived item was removed, so an older derivation cannot write it back. */
export interface DerivedTombstoneItem {
  type: 'TOMBSTONE';
}

/** Which derivation wrote a derived item (bookkeeping): a write only replaces an older one. */
export interface DerivationStamp {
  gen?: number;
  /** The item's tally entry moved (tally.ts) and the move is not finished: the next derivation finishes it. */
  tally_pending?: true;
  /** Where the entry was before this version of the item (absent: it had none). */
  tally_from?: { pk: string; sk: string };
}

/** One item of a user's list, counted (tally.ts). Holds no event data. */
export interface TallyEntryItem {
  type: 'TALLY_ENTRY';
  event_id: string;
}

/** How many entries a day holds, days a month, months a year (tally.ts). */
export interface TallySummaryItem {
  type: 'TALLY_SUMMARY';
  count?: number;
  /** Recount bookkeeping (tally-recount.ts): the last ticket handed out, and the ticket of the count stored. */
  ticket?: number;
  counted?: number;
}


/**
 * Key management record (keys.keyRecord): a key's, or a tombstone (only id
 * and revocation) that a retire wrote before the key's create could, or what
 * an erased key keeps once its user is deleted.
 */
export interface KeyRecordItem {
  type: 'KEY_RECORD';
  key_id: string;
  key_hash?: string;
  user_id?: string;
  name?: string;
  scopes?: Scope[];
  /** null for keys seeded from a dataset, which records no creation time. */
  created_at?: string | null;
  revoked: boolean;
  revoked_at?: string;
  /** Which retire revoked it: a retire retried after a lost answer recognises its own write. */
  revoke_id?: string;
  /** Who revoked it (key-store.ts RetiredBy), for its audit line. */
  revoked_by?: string;
  /** Its revoke's audit line is claimed (the claimant's id): written once, whoever finishes the revoke (key-store.ts). */
  audited?: string;
  /** The value of its plan key, chosen before the plan key is made (AWS only). */
  usage_identifier?: string;
  /** The API Gateway API key's id, recorded before it joins the usage plan (AWS only). */
  plan_key_id?: string;
  /** The key became usable (its authorizer item was written): reconcile leaves its slot alone. */
  confirmed?: true;
  /** The user version its create read (absent: seeded, or made before it was recorded): the deletion it belongs to (key-rules.ts). */
  user_version?: number;
  /** Its user was deleted: it keeps only its id and that it is revoked. */
  erased?: true;
}

/** Written by earlier versions (key id → owner); no longer written or read, and harmless. */
export interface KeyPointerItem {
  type: 'KEY_POINTER';
  key_id: string;
  user_id: string;
}

/** A create request of the key-management API (keys.keyRequest): what it asked for and the key id it made. */
export interface KeyRequestItem {
  type: 'KEY_REQUEST';
  user_id: string;
  /** SHA-256 of the trimmed name: enough to tell a retry from another request, without keeping the name. */
  name_hash: string;
  /** Sorted, so the same set compares equal whatever order a retry sends. */
  scopes: Scope[];
  key_id: string;
  /** `pending` until the key is usable; a create that made no key deletes the item. */
  state: 'pending' | 'done';
  requested_at: string;
  /** TTL (epoch seconds): the end of the idempotency window. */
  expires_at: number;
}

/**
 * A user's key slots (key-rules.ts): every key active or being made, by id,
 * with when its slot was taken; the day's creates; the deletion's version.
 * Written whole, conditional on `rev` (lambdas/store/keys/key-store.ts).
 */
export interface KeyCounterItem {
  type: 'KEY_COUNTER';
  user_id: string;
  /** How many keys hold a slot (the size of `holders`, for people reading the table). */
  active: number;
  /** Absent on counters written before slots were named (rebuilt from the records when read). */
  holders?: Record<string, string>;
  rev?: number;
  day?: string;
  created?: number;
  closed_version?: number;
  /** Key id → the user version its create read (key-rules.ts, Slots.versions); absent when no holder recorded one. */
  holder_versions?: Record<string, number>;
}

/** Base keys always; GSI keys only on what the public read paths may reach. */
export interface TableKeys {
  pk: string;
  sk: string;
  gsi1pk?: string;
  gsi1sk?: string;
  gsi2pk?: string;
  gsi2sk?: string;
  gsi3pk?: string;
  gsi3sk?: string;
  gsi4pk?: string;
  gsi4sk?: string;
  /** Discovery's place, country and city indexes (table.ts, PRODUCT P17). */
  gsi5pk?: string;
  gsi5sk?: string;
  gsi6pk?: string;
  gsi6sk?: string;
  gsi7pk?: string;
  gsi7sk?: string;
}

/** Items derived from an event's sources: what the read paths serve. */
export type DerivedItem = (EventItem | ProfileEntryItem | RsvpItem | GuestCountItem) & TableKeys;

export type TableItem = (
  | EventItem
  | ProfileEntryItem
  | RsvpItem
  | UserItem
  | EventSourceItem
  | RsvpSourceItem
  | UserEventLinkItem
  | DerivationSeqItem
  | GuestShardsItem
  | DerivedTombstoneItem
  | TallyEntryItem
  | TallySummaryItem
  | GuestCountItem
  | GuestCountSummaryItem
  | ApiKeyItem
  | KeyRecordItem
  | KeyPointerItem
  | KeyCounterItem
  | KeyRequestItem
) &
  TableKeys &
  DerivationStamp & { expires_at?: number };
