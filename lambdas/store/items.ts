/**
 * The shapes of table items. Payload attributes use the contract's field names
 * (snake_case) with datetimes normalised to `toISOString()`; key attributes are
 * the generic ones from table.ts. No item holds an e-mail, a phone number or an
 * anonymous guest: the read model never stores what it must never return.
 */
import type { Scope } from '../core/dataset.js';

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
}

export interface GuestCounts {
  yes: number;
  maybe: number;
  no: number;
}

export interface EventItem extends EventPayload {
  type: 'EVENT';
  /** Linked-user RSVPs per status; anonymous RSVPs are not counted (PRODUCT P9). */
  guest_counts: GuestCounts;
}

export interface ProfileEntryItem extends EventPayload {
  type: 'PROFILE_ENTRY';
  member_id: string;
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

export interface UserItem {
  type: 'USER';
  user_id: string;
  username: string;
}

export interface ApiKeyItem {
  type: 'API_KEY';
  key_id: string;
  user_id: string;
  name: string;
  scopes: Scope[];
  revoked: boolean;
  /** Value of the key's API Gateway plan key (non-secret); set when provisioned in AWS. */
  usage_identifier?: string;
}

/** Key management record (lambdas/store/table.ts keys.keyRecord). */
export interface KeyRecordItem {
  type: 'KEY_RECORD';
  key_id: string;
  key_hash: string;
  user_id: string;
  name: string;
  scopes: Scope[];
  /** null for keys seeded from a dataset, which records no creation time. */
  created_at: string | null;
  revoked: boolean;
  revoked_at?: string;
  /** The API Gateway API key's id (AWS only). */
  plan_key_id?: string;
}

export interface KeyPointerItem {
  type: 'KEY_POINTER';
  key_id: string;
  user_id: string;
}

export interface KeyCounterItem {
  type: 'KEY_COUNTER';
  user_id: string;
  active: number;
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
}

export type TableItem = (EventItem | ProfileEntryItem | RsvpItem | UserItem | ApiKeyItem | KeyRecordItem | KeyPointerItem | KeyCounterItem) &
  TableKeys;
