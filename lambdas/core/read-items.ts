/**
 * The shapes of the items the read routes map to Public and Embed objects:
 * what the store's ports return (ports.ts) and the mappers read. They live in
 * the core, below the store, because the core names them; the store's item
 * shapes (lambdas/store/table/items.ts) hand them on with the bookkeeping items
 * beside them. Payload attributes use the contract's field names (snake_case)
 * with datetimes normalised to `toISOString()`; none holds an e-mail, a phone
 * number or an anonymous guest.
 */
import type { Scope } from './dataset.js';

/** A user's two lists in user-events-index: the events they host (HOSTED) and their profile's entries (PROFILE). */
export type ProfileList = 'HOSTED' | 'PROFILE';

export type VerificationStatus = 'verified' | 'id_verified' | null;
export type RsvpStatus = 'yes' | 'maybe' | 'no';

export interface CreatorSnapshot {
  id: string;
  username: string;
  image: string | null;
  verification_status: VerificationStatus;
}

/** The public part of an event, as copied onto every item that lists it. */
export interface EventPayload {
  event_id: string;
  title: string;
  description: string | null;
  cover: string | null;
  location: { name: string; city: string | null; country: string | null } | null;
  start_date: string;
  end_date: string | null;
  timezone: string;
  status: string;
  visibility: string;
  cost: number | null;
  created_at: string;
  links: { spotify_url: string | null; wavlake_url: string | null };
  contributions: { cashapp: string | null; venmo: string | null; paypal: string | null; btc_lightning: string | null };
  creator: CreatorSnapshot;
  /**
   * The event's calendar history (calendar-revision.ts): how many changes of
   * what a calendar shows it has had (SEQUENCE) and when the last was applied
   * (LAST-MODIFIED, DTSTAMP). Absent until the first such change: SEQUENCE 0,
   * stamped with `created_at`.
   */
  sequence?: number;
  modified_at?: string;
}

/** An event's calendar history as its source item keeps it (the change path counts it; derive.ts copies it onto the event item). */
export interface CalendarRevision {
  sequence: number;
  at: string;
}

export interface GuestCounts {
  yes: number;
  maybe: number;
  no: number;
}

/**
 * The event as the read routes show it. Its guest counts are not on it: an
 * RSVP would rewrite the whole event item (up to 34 KB) for three numbers,
 * on the partition every guest of a popular event writes to. The guest list
 * reads them from the count buckets' summaries beside it (repository.ts,
 * getGuestCounts).
 */
export interface EventItem extends EventPayload {
  type: 'EVENT';
}

export interface GuestSnapshot {
  id: string;
  username: string;
  name: string | null;
  image: string | null;
  verification_status: VerificationStatus;
}

export interface RsvpItem {
  type: 'RSVP';
  event_id: string;
  rsvp_status: RsvpStatus;
  rsvp_date: string;
  guest: GuestSnapshot;
}

/** The authorizer's item of a usable key (keys.apiKey, by the key's hash). */
export interface LiveApiKeyItem {
  type: 'API_KEY';
  key_id: string;
  user_id: string;
  name: string;
  scopes: Scope[];
  revoked: false;
  /** Value of the key's API Gateway plan key (non-secret); set when provisioned in AWS. */
  usage_identifier?: string;
}

/**
 * The authorizer's item of a revoked key: what it held, or only the key id
 * (revoked before its create wrote it, or its user deleted). It stays, so
 * that no create can put the key back (lambdas/store/keys/key-store.ts).
 */
export interface RevokedApiKeyItem extends Partial<Omit<LiveApiKeyItem, 'type' | 'key_id' | 'revoked'>> {
  type: 'API_KEY';
  key_id: string;
  revoked: true;
  revoked_at?: string;
}

export type ApiKeyItem = LiveApiKeyItem | RevokedApiKeyItem;
