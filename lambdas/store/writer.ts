/**
 * The one writer: turns source records (the dataset contract) into table items.
 * Local runs, tests and real imports all go through it (PRODUCT P13).
 *
 * Visibility is decided here, once: only a `published` + `public` event gets GSI
 * key attributes (and profile entries and guest index entries); everything else
 * is stored without them and so cannot be reached by any read path.
 */
import { hashApiKey, keyIdFromHash } from '../core/api-key.js';
import { SCOPES, type Dataset, type SourceEvent, type SourceUser } from '../core/dataset.js';
import { toIso } from '../core/dates.js';
import type {
  ApiKeyItem,
  CreatorSnapshot,
  EventItem,
  EventPayload,
  GuestCounts,
  GuestSnapshot,
  KeyCounterItem,
  KeyPointerItem,
  KeyRecordItem,
  ProfileEntryItem,
  RsvpItem,
  TableItem,
  UserItem,
} from './items.js';
import { indexKeys, keys } from './table.js';

export interface WriteSummary {
  users: number;
  events: { public: number; hidden: number };
  rsvps: { linked: number; anonymous: number };
  profileEntries: number;
  apiKeys: number;
  items: number;
}

export function isPubliclyVisible(event: Pick<SourceEvent, 'status' | 'visibility'>): boolean {
  return event.status === 'published' && event.visibility === 'public';
}

const iso = (value: string): string => toIso(new Date(value));

function creatorSnapshot(user: SourceUser): CreatorSnapshot {
  return { id: user.id, username: user.username, image: user.image ?? null, verification_status: user.verification_status ?? null };
}

function guestSnapshot(user: SourceUser): GuestSnapshot {
  return { ...creatorSnapshot(user), name: user.name ?? null };
}

export function eventPayload(event: SourceEvent, creator: SourceUser): EventPayload {
  return {
    event_id: event.id,
    title: event.title,
    description: event.description ?? null,
    cover: event.cover ?? null,
    location: event.location
      ? { name: event.location.name, city: event.location.city ?? null, country: event.location.country ?? null }
      : null,
    start_date: iso(event.start_date),
    end_date: event.end_date ? iso(event.end_date) : null,
    timezone: event.timezone,
    status: event.status,
    visibility: event.visibility,
    cost: event.cost ?? null,
    created_at: iso(event.created_at),
    links: { spotify_url: event.links?.spotify_url ?? null, wavlake_url: event.links?.wavlake_url ?? null },
    contributions: {
      cashapp: event.contributions?.cashapp ?? null,
      venmo: event.contributions?.venmo ?? null,
      paypal: event.contributions?.paypal ?? null,
      btc_lightning: event.contributions?.btc_lightning ?? null,
    },
    creator: creatorSnapshot(creator),
  };
}

/**
 * Items for a dataset that has passed `validateDataset` (references resolve).
 * Deterministic: the same dataset always gives the same items in the same order.
 */
export function datasetToItems(dataset: Dataset): { items: TableItem[]; summary: WriteSummary } {
  const usersById = new Map(dataset.users.map((u) => [u.id, u]));
  const userOf = (id: string): SourceUser => {
    const user = usersById.get(id);
    if (!user) throw new Error(`writer: unknown user ${id}; validate the dataset first`);
    return user;
  };
  const eventsById = new Map(dataset.events.map((e) => [e.id, e]));
  const rsvps = dataset.rsvps ?? [];

  const items: TableItem[] = [];
  const summary: WriteSummary = {
    users: 0,
    events: { public: 0, hidden: 0 },
    rsvps: { linked: 0, anonymous: 0 },
    profileEntries: 0,
    apiKeys: 0,
    items: 0,
  };

  for (const user of dataset.users) {
    const item: UserItem = { type: 'USER', user_id: user.id, username: user.username };
    items.push({ ...keys.user(user.username), ...item });
    summary.users++;
  }

  const guestCounts = new Map<string, GuestCounts>();
  const members = new Map<string, Set<string>>(); // eventId → profile members (creator + yes/maybe)
  for (const event of dataset.events) {
    guestCounts.set(event.id, { yes: 0, maybe: 0, no: 0 });
    members.set(event.id, new Set([event.creator_id]));
  }

  for (const rsvp of rsvps) {
    if (rsvp.user_id == null) {
      // Anonymous guests are never returned or counted: nothing is stored for them.
      summary.rsvps.anonymous++;
      continue;
    }
    const event = eventsById.get(rsvp.event_id);
    if (!event) throw new Error(`writer: unknown event ${rsvp.event_id}; validate the dataset first`);
    const guest = userOf(rsvp.user_id);
    const visible = isPubliclyVisible(event);
    const rsvpDate = iso(rsvp.rsvp_date);
    const item: RsvpItem = {
      type: 'RSVP',
      event_id: event.id,
      rsvp_status: rsvp.status,
      rsvp_date: rsvpDate,
      guest: guestSnapshot(guest),
    };
    items.push({
      ...keys.rsvp(event.id, guest.id),
      ...(visible
        ? {
            ...indexKeys.guestOfEvent(event.id, rsvpDate, guest.id),
            ...indexKeys.guestByStatus(event.id, rsvp.status, rsvpDate, guest.id),
          }
        : {}),
      ...item,
    });
    summary.rsvps.linked++;
    const counts = guestCounts.get(event.id);
    if (counts) counts[rsvp.status]++;
    if (rsvp.status === 'yes' || rsvp.status === 'maybe') members.get(event.id)?.add(guest.id);
  }

  for (const event of dataset.events) {
    const creator = userOf(event.creator_id);
    const payload = eventPayload(event, creator);
    const visible = isPubliclyVisible(event);
    const item: EventItem = { type: 'EVENT', ...payload, guest_counts: guestCounts.get(event.id) ?? { yes: 0, maybe: 0, no: 0 } };
    items.push({
      ...keys.event(event.id),
      ...(visible
        ? {
            ...indexKeys.eventById(event.id),
            ...indexKeys.userEvent(creator.username, 'HOSTED', payload.start_date, event.id),
          }
        : {}),
      ...item,
    });
    if (!visible) {
      summary.events.hidden++;
      continue;
    }
    summary.events.public++;
    // Profile = own public events + public events answered yes/maybe, each once (PRODUCT P7).
    for (const memberId of [...(members.get(event.id) ?? [])].sort()) {
      const member = userOf(memberId);
      const entry: ProfileEntryItem = { type: 'PROFILE_ENTRY', ...payload, member_id: member.id };
      items.push({
        ...keys.profileEntry(event.id, member.id),
        ...indexKeys.userEvent(member.username, 'PROFILE', payload.start_date, event.id),
        ...entry,
      });
      summary.profileEntries++;
    }
  }

  // Seeded keys get the same records as keys made by the key manager, so they
  // are listed, revocable and counted against the 10-active-keys limit.
  const activeKeys = new Map<string, number>();
  for (const apiKey of dataset.api_keys ?? []) {
    const keyHash = hashApiKey(apiKey.key);
    const keyId = keyIdFromHash(keyHash);
    const scopes = [...(apiKey.scopes ?? SCOPES)];
    const revoked = apiKey.revoked ?? false;
    const item: ApiKeyItem = { type: 'API_KEY', key_id: keyId, user_id: apiKey.user_id, name: apiKey.name, scopes, revoked };
    const record: KeyRecordItem = {
      type: 'KEY_RECORD',
      key_id: keyId,
      key_hash: keyHash,
      user_id: apiKey.user_id,
      name: apiKey.name,
      scopes,
      created_at: null,
      revoked,
    };
    const pointer: KeyPointerItem = { type: 'KEY_POINTER', key_id: keyId, user_id: apiKey.user_id };
    items.push({ ...keys.apiKey(keyHash), ...item }, { ...keys.keyRecord(apiKey.user_id, keyId), ...record }, { ...keys.keyPointer(keyId), ...pointer });
    if (!revoked) activeKeys.set(apiKey.user_id, (activeKeys.get(apiKey.user_id) ?? 0) + 1);
    summary.apiKeys++;
  }
  for (const [userId, active] of activeKeys) {
    const counter: KeyCounterItem = { type: 'KEY_COUNTER', user_id: userId, active };
    items.push({ ...keys.keyCounter(userId), ...counter });
  }

  summary.items = items.length;
  return { items, summary };
}
