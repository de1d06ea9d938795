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
import type { SourceEvent, SourceRsvp, SourceUser } from '../../core/dataset.js';
import { toIso } from '../../core/dates.js';
import type {
  CalendarRevision,
  CreatorSnapshot,
  DerivationSeqItem,
  DerivedItem,
  EventItem,
  EventPayload,
  EventRecord,
  EventSourceItem,
  GuestCountItem,
  GuestCountSummaryItem,
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
} from '../table/items.js';
import { localDateTime } from '../../core/local-time.js';
import { placeOf, placeQueriesOf } from '../../core/place.js';
import { GUEST_COUNT_PREFIX, guestShardOfPartition, indexKeys, keys } from '../table/table.js';
import { shardRecordOf } from './shard-record.js';

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

/** An event's source item; `revision` is its calendar history (lambdas/core/calendar-revision.ts), absent until the first revision. */
export function eventSourceItem(event: EventRecord, version: number, revision?: CalendarRevision): TableItem {
  const item: EventSourceItem = { type: 'EVENT_SOURCE', event_id: event.id, event, version, ...(revision ? { revision } : {}) };
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

export function eventPayload(event: EventRecord, creator: UserRecord, revision?: CalendarRevision): EventPayload {
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
    ...(revision ? { sequence: revision.sequence, modified_at: revision.at } : {}),
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
  /** The event's calendar history, where the table has one (a resync keeps it: local/resync.ts); none as loaded. */
  revision?: CalendarRevision;
}

/**
 * The derived items of one event, as the full load writes them: the event
 * item, and per guest (every RSVP's user, and the creator) what
 * deriveGuestItems gives, plus the count buckets' summaries. The change path
 * derives the same pieces one at a time (derivation.ts): the event item from
 * the event and its creator, a guest's items from that guest's sources alone,
 * a bucket's summary from its entries (guest-counts.ts).
 * Deterministic: items come sorted by key.
 */
export function deriveEventAggregate({ event, creator, rsvps, users, revision }: AggregateSources): TableItem[] {
  if (!creator) return [];
  const byUser = new Map(rsvps.map((r) => [r.user_id, r]));
  const items: TableItem[] = [];
  for (const userId of new Set([creator.id, ...byUser.keys()])) {
    items.push(...deriveGuestItems({ event, creator, rsvp: byUser.get(userId), user: userId === creator.id ? creator : users.get(userId) }));
    // Every guest with items has a counter: an event change finds its guests by their counters (settle.ts).
    const counter: DerivationSeqItem = { type: 'DERIVATION_SEQ', seq: 0 };
    items.push({ ...keys.guestSeq(event.id, userId), ...counter });
  }
  items.push(...guestCountSummaries(event.id, items), ...deriveEventItem({ event, creator, revision }));
  return items.sort((a, b) => cmp(a.sk, b.sk));
}

/**
 * The event item: the public fields, the creator snapshot and the calendar
 * history its source item keeps (its guest counts are the count buckets'
 * summaries, read beside it: items.ts). A creator that is unknown or
 * deleted: the event is on its way out (its delete cascades), so it derives
 * nothing anyone could read.
 */
export function deriveEventItem({ event, creator, revision }: { event: EventRecord | undefined; creator: UserRecord | undefined; revision?: CalendarRevision | undefined }): DerivedItem[] {
  if (!event || !creator) return [];
  const payload = eventPayload(event, creator, revision);
  const eventItem: EventItem = { type: 'EVENT', ...payload };
  return [
    {
      ...keys.event(event.id),
      ...(isPubliclyVisible(event)
        ? {
            ...indexKeys.eventById(event.id),
            ...indexKeys.userEvent(creator.username, 'HOSTED', payload.start_date, event.id),
            ...indexKeys.userEventByCreation(creator.username, 'HOSTED', payload.created_at, event.id),
            ...placeIndexKeys(payload),
          }
        : {}),
      ...eventItem,
    },
  ];
}

/**
 * The event's entries in the place indexes (PRODUCT P17): one per place
 * query it answers (country and city, country, city), at its local start.
 * Part of the event item, so a move, a hide or a delete takes the old
 * entries away in the very write that changes the item.
 */
export function placeIndexKeys(payload: Pick<EventPayload, 'event_id' | 'location' | 'start_date' | 'timezone'>): Record<string, string> {
  const localStart = localDateTime(Date.parse(payload.start_date), payload.timezone);
  return Object.assign({}, ...placeQueriesOf(placeOf(payload.location)).map((query) => indexKeys.eventAtPlace(query, localStart, payload.event_id))) as Record<string, string>;
}

/** What a guest's items depend on of their event: when it changes, every guest is derived again; otherwise none is. */
export function guestProjection(event: EventRecord | undefined): string | null {
  if (!event) return null;
  return JSON.stringify([event.creator_id, isPubliclyVisible(event), iso(event.start_date), iso(event.created_at)]);
}

/**
 * One user's items in one event (the user answered it, or created it): the
 * RSVP item (guest snapshot) and its count entry, while the user has a live
 * RSVP; the profile entry while the event is public and the user is a member
 * (the creator, or a yes/maybe guest: PRODUCT P7). Nothing while the event or
 * its creator is gone.
 */
export function deriveGuestItems({ event, creator, rsvp, user }: { event: EventRecord | undefined; creator: UserRecord | undefined; rsvp: RsvpRecord | undefined; user: UserRecord | undefined }): DerivedItem[] {
  if (!event || !creator || !user) return [];
  const visible = isPubliclyVisible(event);
  const items: DerivedItem[] = [];
  if (rsvp) {
    const rsvpDate = iso(rsvp.rsvp_date);
    const item: RsvpItem = { type: 'RSVP', event_id: event.id, rsvp_status: rsvp.status, rsvp_date: rsvpDate, guest: guestSnapshot(user) };
    items.push({
      ...keys.rsvp(event.id, user.id),
      ...(visible ? { ...indexKeys.guestOfEvent(event.id, rsvpDate, user.id), ...indexKeys.guestByStatus(event.id, rsvp.status, rsvpDate, user.id) } : {}),
      ...item,
    });
    const count: GuestCountItem = { type: 'GUEST_COUNT', rsvp_status: rsvp.status };
    items.push({ ...keys.guestCount(event.id, user.id), ...count });
  }
  const member = user.id === event.creator_id || rsvp?.status === 'yes' || rsvp?.status === 'maybe';
  if (visible && member) {
    const start = iso(event.start_date);
    const created = iso(event.created_at);
    const entry: ProfileEntryItem = { type: 'PROFILE_ENTRY', event_id: event.id, member_id: user.id, start_date: start, created_at: created };
    items.push({
      ...keys.profileEntry(event.id, user.id),
      ...indexKeys.userEvent(user.username, 'PROFILE', start, event.id),
      ...indexKeys.userEventByCreation(user.username, 'PROFILE', created, event.id),
      ...entry,
    });
  }
  return items;
}

/** The summaries of the count buckets that hold entries (a fresh load has none for an empty bucket). */
export function guestCountSummaries(eventId: string, items: readonly { sk: string; type: string; rsvp_status?: unknown }[]): TableItem[] {
  const buckets = new Map<string, GuestCounts>();
  for (const item of items) {
    if (item.type !== 'GUEST_COUNT') continue;
    const bucket = item.sk.slice(GUEST_COUNT_PREFIX.length).split('#')[0]!;
    const counts = buckets.get(bucket) ?? { yes: 0, maybe: 0, no: 0 };
    counts[item.rsvp_status as keyof GuestCounts]++;
    buckets.set(bucket, counts);
  }
  return [...buckets].map(([bucket, counts]) => {
    const summary: GuestCountSummaryItem = { type: 'GUEST_COUNT_SUMMARY', ...counts };
    return { ...keys.guestCountSummary(eventId, bucket), ...summary };
  });
}

/**
 * The record of the guest shards these items of one event occupy (shard-record.ts): the full load writes it with the
 * event's sources and derived items, so a loaded table marks every shard it wrote in, as the change path does.
 */
export function guestShardsRecord(eventId: string, items: readonly { pk: string }[]): TableItem[] {
  return shardRecordOf(eventId, items.flatMap((i) => {
    const at = guestShardOfPartition(i.pk);
    return at?.eventId === eventId ? [at.shard] : [];
  }));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
