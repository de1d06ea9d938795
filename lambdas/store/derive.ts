/**
 * THE derivation: source records → table items. The full load (writer.ts) and
 * every change (applier.ts) call these same functions, so the two ways in
 * cannot drift (PRODUCT P13, P14).
 *
 * Visibility is decided here, once: only a `published` + `public` event gets
 * GSI key attributes, profile entries and guest index entries; everything else
 * is stored without them and so cannot be reached by any read path. Private
 * fields (e-mail, phone, an anonymous guest's name) never get past the record
 * constructors below.
 */
import type { SourceEvent, SourceRsvp, SourceUser } from '../core/dataset.js';
import { toIso } from '../core/dates.js';
import type {
  CreatorSnapshot,
  DerivedItem,
  EventItem,
  EventPayload,
  EventRecord,
  EventSourceItem,
  GuestCounts,
  GuestSnapshot,
  ProfileEntryItem,
  RsvpItem,
  RsvpRecord,
  RsvpSourceItem,
  TableItem,
  UserEventLinkItem,
  UserItem,
  UserRecord,
} from './items.js';
import { indexKeys, keys } from './table.js';

export function isPubliclyVisible(event: Pick<SourceEvent, 'status' | 'visibility'>): boolean {
  return event.status === 'published' && event.visibility === 'public';
}

const iso = (value: string): string => toIso(new Date(value));

/** The public part of a user's record; e-mail and phone are dropped here. */
export function userRecord(user: SourceUser): UserRecord {
  return {
    id: user.id,
    username: user.username,
    name: user.name ?? null,
    image: user.image ?? null,
    verification_status: user.verification_status ?? null,
  };
}

/** A linked RSVP's record; the guest's name, e-mail and phone are dropped here. */
export function rsvpRecord(rsvp: SourceRsvp & { user_id: string }): RsvpRecord {
  return { event_id: rsvp.event_id, user_id: rsvp.user_id, status: rsvp.status, rsvp_date: rsvp.rsvp_date };
}

// --- source items -----------------------------------------------------------

export function userItem(user: UserRecord, version: number): TableItem {
  const item: UserItem = { type: 'USER', user_id: user.id, user, version };
  return { ...keys.user(user.id), ...indexKeys.userByName(user.username), ...item };
}

export function eventSourceItem(event: EventRecord, version: number): TableItem {
  const item: EventSourceItem = { type: 'EVENT_SOURCE', event_id: event.id, event, version };
  return { ...keys.eventSource(event.id), ...item };
}

export function rsvpSourceItem(rsvp: RsvpRecord, version: number): TableItem {
  const item: RsvpSourceItem = { type: 'RSVP_SOURCE', event_id: rsvp.event_id, user_id: rsvp.user_id, rsvp, version };
  return { ...keys.rsvpSource(rsvp.event_id, rsvp.user_id), ...item };
}

export function userEventLink(userId: string, eventId: string): TableItem {
  const item: UserEventLinkItem = { type: 'USER_EVENT_LINK', user_id: userId, event_id: eventId };
  return { ...keys.userEventLink(userId, eventId), ...item };
}

// --- derived items ----------------------------------------------------------

function creatorSnapshot(user: UserRecord): CreatorSnapshot {
  return { id: user.id, username: user.username, image: user.image, verification_status: user.verification_status };
}

function guestSnapshot(user: UserRecord): GuestSnapshot {
  return { ...creatorSnapshot(user), name: user.name };
}

export function eventPayload(event: EventRecord, creator: UserRecord): EventPayload {
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

/** Everything one event's sources give the read model. */
export interface AggregateSources {
  event: EventRecord;
  /** The event's creator; undefined while the creator is unknown or deleted (nothing is derived then). */
  creator: UserRecord | undefined;
  /** The event's linked RSVPs (anonymous ones are never stored). */
  rsvps: readonly RsvpRecord[];
  /** Users by id: at least every RSVP's user that exists. */
  users: ReadonlyMap<string, UserRecord>;
}

/**
 * The derived items of one event: the event item (creator snapshot, guest
 * counts), one item per RSVP of an existing user (guest snapshot), and, for a
 * public event, one profile entry per member (the creator and yes/maybe
 * guests, PRODUCT P7). Deterministic: items come sorted by key.
 */
export function deriveEventAggregate({ event, creator, rsvps, users }: AggregateSources): DerivedItem[] {
  // A creator that is unknown or deleted: the event is on its way out (its
  // delete cascades), so it derives nothing anyone could read.
  if (!creator) return [];
  const visible = isPubliclyVisible(event);
  const payload = eventPayload(event, creator);
  const counts: GuestCounts = { yes: 0, maybe: 0, no: 0 };
  const members = new Map<string, UserRecord>([[creator.id, creator]]);
  const items: DerivedItem[] = [];

  for (const rsvp of [...rsvps].sort((a, b) => cmp(a.user_id, b.user_id))) {
    const guest = users.get(rsvp.user_id);
    if (!guest) continue; // the guest's deletion is cascading; nothing to show
    const rsvpDate = iso(rsvp.rsvp_date);
    const item: RsvpItem = { type: 'RSVP', event_id: event.id, rsvp_status: rsvp.status, rsvp_date: rsvpDate, guest: guestSnapshot(guest) };
    items.push({
      ...keys.rsvp(event.id, guest.id),
      ...(visible
        ? { ...indexKeys.guestOfEvent(event.id, rsvpDate, guest.id), ...indexKeys.guestByStatus(event.id, rsvp.status, rsvpDate, guest.id) }
        : {}),
      ...item,
    });
    counts[rsvp.status]++;
    if (rsvp.status === 'yes' || rsvp.status === 'maybe') members.set(guest.id, guest);
  }

  const eventItem: EventItem = { type: 'EVENT', ...payload, guest_counts: counts };
  items.push({
    ...keys.event(event.id),
    ...(visible
      ? {
          ...indexKeys.eventById(event.id),
          ...indexKeys.userEvent(creator.username, 'HOSTED', payload.start_date, event.id),
          ...indexKeys.userEventByCreation(creator.username, 'HOSTED', payload.created_at, event.id),
        }
      : {}),
    ...eventItem,
  });

  // Profile = own public events + public events answered yes/maybe, each once (PRODUCT P7).
  if (visible) {
    for (const member of [...members.values()].sort((a, b) => cmp(a.id, b.id))) {
      const entry: ProfileEntryItem = { type: 'PROFILE_ENTRY', ...payload, member_id: member.id };
      items.push({
        ...keys.profileEntry(event.id, member.id),
        ...indexKeys.userEvent(member.username, 'PROFILE', payload.start_date, event.id),
        ...indexKeys.userEventByCreation(member.username, 'PROFILE', payload.created_at, event.id),
        ...entry,
      });
    }
  }
  return items.sort((a, b) => cmp(a.sk, b.sk));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
