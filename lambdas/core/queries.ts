/**
 * The Public API's use cases: rules from the spec and PRODUCT P5-P9 over the
 * EventReader port. Pure apart from the port; `now` is passed in.
 */
import { BadRequestError, MESSAGES, NotFoundError } from './errors.js';
import { isPublicPayload, toGuest, toPublicEvent, type Guest, type PublicEvent } from './event-mapper.js';
import { byCreatedDescending, byStartAscending, byStartDescending } from './ordering.js';
import { UNPAGINATED_MAX_BYTES, UNPAGINATED_MAX_EVENTS } from './list-bounds.js';
import { paginate, type Pagination } from './pagination.js';
import type { GuestStatusFilter, EventType, StartBounds } from './params.js';
import type { EventReader, ListOrder, StartWindow } from './ports.js';
import type { EventItem, EventPayload } from './read-items.js';
import type { ProfileList } from './read-items.js';
import { responseBytes } from './response-size.js';

export interface PagedEvents {
  events: PublicEvent[];
  pagination: Pagination;
}

/** The event if it is public and published; otherwise the spec's 404. */
export async function requirePublicEvent(reader: EventReader, eventId: string): Promise<EventItem> {
  const event = await reader.getPublicEvent(eventId);
  if (!event || !isPublicPayload(event)) throw new NotFoundError();
  return event;
}

export async function getEvent(reader: EventReader, eventId: string, siteUrl: string): Promise<PublicEvent> {
  return toPublicEvent(await requirePublicEvent(reader, eventId), siteUrl);
}

export async function getGuests(
  reader: EventReader,
  q: { eventId: string; status: GuestStatusFilter; limit: number; offset: number },
): Promise<{ guests: Guest[]; pagination: Pagination }> {
  // The counts are read beside the event (one round trip) and shown only if it is public.
  const [, counts] = await Promise.all([requirePublicEvent(reader, q.eventId), reader.getGuestCounts(q.eventId)]);
  const total = q.status === 'all' ? counts.yes + counts.maybe + counts.no : counts[q.status];
  const pagination = { limit: q.limit, offset: q.offset, total };
  // The counts say when a page is empty, which saves the second round trip.
  if (q.offset >= total) return { guests: [], pagination };
  // DynamoDB cannot skip: the first `offset` guests are read and dropped.
  const items = await reader.getGuests(q.eventId, q.status, q.offset + q.limit);
  return { guests: items.slice(q.offset).map(toGuest), pagination };
}

type MissingUser = () => Error;
const userNotFound: MissingUser = () => new NotFoundError(MESSAGES.userNotFound);
const typedUserNotFound: MissingUser = () => new BadRequestError(MESSAGES.typedUserNotFound);

export function windowOf(bounds: StartBounds): StartWindow {
  return { from: bounds.since?.toISOString(), to: bounds.to?.toISOString() };
}

/** Loads a list, proving the user exists only when the list is empty (≤ 2 round trips). */
export async function loadList(
  reader: EventReader,
  username: string,
  list: ProfileList,
  window: StartWindow,
  missingUser: MissingUser = userNotFound,
  limit?: number,
  descending = false,
): Promise<EventPayload[]> {
  const items = (await reader.listUserEvents(username, list, window, limit, descending)).filter(isPublicPayload);
  if (items.length === 0 && !(await reader.userExists(username))) throw missingUser();
  return items;
}

const laterOf = (a: string | undefined, b: string): string => (a !== undefined && a > b ? a : b);

function upcomingWindow(bounds: StartBounds, now: Date): StartWindow {
  const w = windowOf(bounds);
  return { ...w, from: laterOf(w.from, now.toISOString()) };
}

function pastWindow(bounds: StartBounds, now: Date): StartWindow {
  return { ...windowOf(bounds), before: now.toISOString() };
}

function toPage(sorted: EventPayload[], limit: number, offset: number, siteUrl: string): PagedEvents {
  const page = paginate(sorted, limit, offset);
  return { events: page.items.map((e) => toPublicEvent(e, siteUrl)), pagination: page.pagination };
}

export function windowTooLarge(): BadRequestError {
  return new BadRequestError(
    `This date window holds more than ${UNPAGINATED_MAX_EVENTS} events (or more than ${UNPAGINATED_MAX_BYTES / 1_000_000} MB of them): narrow it with since and to`,
  );
}

/**
 * Variant A and /profile-events: the whole matching list, most recently
 * created first. A window holding more than fits the bounds above is a 400
 * asking for a narrower one (never a partial list: the answer has no total).
 */
export async function datedUserEvents(
  reader: EventReader,
  q: { username: string; list: ProfileList; bounds: StartBounds },
  siteUrl: string,
): Promise<PublicEvent[]> {
  const items = await loadList(reader, q.username, q.list, windowOf(q.bounds), userNotFound, UNPAGINATED_MAX_EVENTS + 1);
  if (items.length > UNPAGINATED_MAX_EVENTS) throw windowTooLarge();
  const events = items.sort(byCreatedDescending).map((e) => toPublicEvent(e, siteUrl));
  let bytes = 0;
  for (const e of events) {
    // As Lambda carries the answer (every quote and backslash escaped twice): the bound holds for the response itself.
    bytes += responseBytes(e);
    if (bytes > UNPAGINATED_MAX_BYTES) throw windowTooLarge();
  }
  return events;
}

/** The two start-ordered lists of hosted events (PRODUCT P7). */
const TIMELINES = {
  /** start >= now, earliest first */
  upcoming: { window: upcomingWindow, order: byStartAscending, descending: false },
  /** start < now, most recent first */
  past: { window: pastWindow, order: byStartDescending, descending: true },
} as const;

export type Timeline = keyof typeof TIMELINES;

interface PageQuery {
  username: string;
  limit: number;
  offset: number;
}

/**
 * A page of a list and the list's total (from its tally): reads what the page
 * holds, whatever the user's history. The first page reads both at once. A
 * later page counts first: the total says when the page is past the end (then
 * nothing more is read, as for guests) and caps the read, so a huge offset
 * costs no more than the list. The user's existence is proven only when the
 * list is empty.
 */
async function listPage(
  reader: EventReader,
  q: PageQuery,
  list: ProfileList,
  order: ListOrder,
  sort: (a: EventPayload, b: EventPayload) => number,
  missingUser: MissingUser,
  siteUrl: string,
): Promise<PagedEvents> {
  const window = order.by === 'start' ? order.window : {};
  const read = (count: number) => reader.pageUserEvents(q.username, list, order, count);
  let total: number;
  let items: EventPayload[];
  if (q.offset === 0) {
    [total, items] = await Promise.all([reader.countUserEvents(q.username, list, window), read(q.limit)]);
  } else {
    total = await reader.countUserEvents(q.username, list, window);
    items = q.offset >= total ? [] : await read(Math.min(q.offset + q.limit, total));
  }
  if (total === 0 && items.length === 0 && !(await reader.userExists(q.username))) throw missingUser();
  const page = items.filter(isPublicPayload).sort(sort).slice(q.offset, q.offset + q.limit);
  return { events: page.map((e) => toPublicEvent(e, siteUrl)), pagination: { limit: q.limit, offset: q.offset, total } };
}

/** /upcoming-events, /past-events and Variant B's type=upcoming|past: O(page) for any window. */
export async function timelineEvents(
  reader: EventReader,
  timeline: Timeline,
  q: PageQuery & { bounds?: StartBounds },
  now: Date,
  siteUrl: string,
  missingUser: MissingUser = userNotFound,
): Promise<PagedEvents> {
  const { window, order, descending } = TIMELINES[timeline];
  return listPage(reader, q, 'HOSTED', { by: 'start', descending, window: window(q.bounds ?? {}, now) }, order, missingUser, siteUrl);
}

/**
 * Variant B (PRODUCT P5, P7): typed, paginated, extra since/to filters. The
 * created-ordered lists (no type, `profile`) read the page from the created
 * index; with since/to they read the start window instead and sort it (the
 * created index cannot bound start dates), so they cost what the window holds.
 */
export async function typedUserEvents(
  reader: EventReader,
  q: PageQuery & { type?: EventType; bounds: StartBounds },
  now: Date,
  siteUrl: string,
): Promise<PagedEvents> {
  if (q.type === 'upcoming' || q.type === 'past') return timelineEvents(reader, q.type, q, now, siteUrl, typedUserNotFound);
  const list: ProfileList = q.type === 'profile' ? 'PROFILE' : 'HOSTED';
  if (q.bounds.since === undefined && q.bounds.to === undefined) {
    return listPage(reader, q, list, { by: 'created' }, byCreatedDescending, typedUserNotFound, siteUrl);
  }
  const items = await loadList(reader, q.username, list, windowOf(q.bounds), typedUserNotFound);
  return toPage(items.sort(byCreatedDescending), q.limit, q.offset, siteUrl);
}
