/**
 * The Embed API's iCalendar feeds (PRODUCT P15): a user's feed and one
 * event's, and a place's (PRODUCT P17, placeFeed below).
 *
 * A user's feed holds the user's own public events that are upcoming (start at
 * or after now, earliest first, at most FEED_MAX_UPCOMING) and those of the
 * recent past (start within the last FEED_PAST_DAYS days, most recent first,
 * at most FEED_MAX_PAST), listed by start. Two bounded index reads, so a
 * weekly series with years of history costs the same as a new user, and the
 * upcoming part is never crowded out by the past.
 *
 * At most ANSWER_BUDGET_BYTES of calendar, as Lambda carries it: events at
 * the contract's maxima whose texts iCalendar escapes (a comma, a newline)
 * would not fit 150 to an answer, so past that bound the feed keeps the
 * upcoming events from the earliest, then the past ones from the latest.
 *
 * The body does not mention status, so it changes with the clock only when the
 * window moves: when the next upcoming event starts (it moves to the past
 * part, which may push the oldest past one out) or when the oldest past event
 * leaves the window. `freshForMs` is the time to the first of those.
 */
import { toICalendar } from './ical.js';
import type { EventPayload, EventReader } from './ports.js';
import { ANSWER_BUDGET_BYTES, bodyBytes } from './response-size.js';
import { isPublicPayload } from './event-mapper.js';
import { requirePublicEvent } from './queries.js';
import type { Fresh } from './embed-queries.js';
import { MESSAGES, NotFoundError } from './errors.js';
import { byStartAscending } from './ordering.js';
import type { PlaceKey } from './place.js';
import type { EventSearcher } from './ports.js';
import { SEARCH_DEFAULT_DAYS } from './search-params.js';

export const FEED_PAST_DAYS = 90;
export const FEED_MAX_UPCOMING = 100;
export const FEED_MAX_PAST = 50;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface Feed extends Fresh<string> {
  /** A name for the file (without .ics). */
  filename: string;
}

export async function eventFeed(reader: EventReader, eventId: string, siteUrl: string): Promise<Feed> {
  const event = await requirePublicEvent(reader, eventId);
  // Nothing in one event's calendar depends on the clock.
  return { data: toICalendar([event], { name: event.title, siteUrl }), freshForMs: null, filename: event.event_id };
}

export async function userFeed(reader: EventReader, username: string, now: Date, siteUrl: string): Promise<Feed> {
  const nowIso = now.toISOString();
  const horizon = new Date(now.getTime() - FEED_PAST_DAYS * DAY_MS);
  const [upcoming, past] = await Promise.all([
    reader.listUserEvents(username, 'HOSTED', { from: nowIso }, FEED_MAX_UPCOMING),
    reader.listUserEvents(username, 'HOSTED', { from: horizon.toISOString(), before: nowIso }, FEED_MAX_PAST, true),
  ]);
  const events = [...past, ...upcoming].filter(isPublicPayload).sort(byStartAscending);
  // An empty feed needs the user proven to exist (the same one extra read as the JSON list).
  if (events.length === 0 && !(await reader.userExists(username))) throw new NotFoundError(MESSAGES.userNotFound);

  const changes: number[] = [];
  const nextStart = upcoming[0];
  if (nextStart) changes.push(Date.parse(nextStart.start_date) - now.getTime());
  const oldest = events[0];
  if (oldest && Date.parse(oldest.start_date) < now.getTime()) changes.push(Date.parse(oldest.start_date) + FEED_PAST_DAYS * DAY_MS - now.getTime());
  // The stored spelling of the name, whatever case the path used.
  const name = events[0]?.creator.username ?? username;
  return {
    data: withinBudget([...upcoming, ...past].filter(isPublicPayload), (kept) => toICalendar([...kept].sort(byStartAscending), { name: `Events by ${name}`, siteUrl })),
    freshForMs: changes.length ? Math.max(0, Math.min(...changes)) : null,
    filename: `${name}-events`,
  };
}

/** A place's feed: its window from today (the discovery route's default, 30 days), and this many days before. */
export const PLACE_FEED_DAYS = SEARCH_DEFAULT_DAYS;
export const PLACE_FEED_PAST_DAYS = 7;

/**
 * One read of a place's public events whose local start date is within
 * [from, to] (YYYY-MM-DD, inclusive), earliest first: the first `limit`,
 * and whether more are there. Discovery's store read, as the handler binds
 * it to the place.
 */
export type PlaceWindowRead = (window: { from: string; to: string }, limit: number) => Promise<{ events: EventPayload[]; more: boolean }>;

/** discovery's read of one place, as placeFeed reads it. */
export function placeWindowRead(searcher: EventSearcher, place: PlaceKey): PlaceWindowRead {
  return async (window, limit) => {
    const page = await searcher.searchEvents({ place, ...window, limit });
    return { events: page.events, more: page.next !== undefined };
  };
}

/** The place a calendar request names (its params checked by embedGetPlaceFeedParams: at least one part). */
export function placeOfFeedQuery(q: { city?: string | undefined; country?: string | undefined }): PlaceKey {
  return { ...(q.country !== undefined ? { country: q.country } : {}), ...(q.city !== undefined ? { city: q.city } : {}) };
}

/**
 * The place's name for the calendar: as an event there spells it (the
 * query's parts only), else the query's own keys (a country the standard
 * does not know is kept behind `~`, left out here).
 */
export function placeLabel(place: PlaceKey, sample: EventPayload | undefined): string {
  const city = place.city === undefined ? undefined : (sample?.location?.city?.trim() || place.city);
  const country = place.country === undefined ? undefined : (sample?.location?.country?.trim() || place.country.replace(/^~/, ''));
  return [city, country].filter((p): p is string => p !== undefined).join(', ');
}

/** The UTC calendar date `days` after (or before) the date `day`. */
function plusDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * A place's iCalendar feed (PRODUCT P17): the events the discovery route
 * lists by default (local start date from today, UTC, to 30 days on; at
 * most FEED_MAX_UPCOMING, the earliest) and those of the PLACE_FEED_PAST_DAYS
 * days before today (at most FEED_MAX_PAST). A place busier than that in a
 * week keeps yesterday's alone (the first FEED_MAX_PAST of them), so the past
 * a calendar shows is the nearest; that takes a second read, never more.
 * Reads go by local dates, so the body changes with the clock only when the
 * UTC date does.
 */
export async function placeFeed(read: PlaceWindowRead, place: PlaceKey, now: Date, siteUrl: string): Promise<Feed> {
  const today = now.toISOString().slice(0, 10);
  const pastWeek = { from: plusDays(today, -PLACE_FEED_PAST_DAYS), to: plusDays(today, -1) };
  const [upcoming, week] = await Promise.all([
    read({ from: today, to: plusDays(today, PLACE_FEED_DAYS) }, FEED_MAX_UPCOMING),
    read(pastWeek, FEED_MAX_PAST),
  ]);
  const past = week.more ? await read({ from: pastWeek.to, to: pastWeek.to }, FEED_MAX_PAST) : week;
  const kept = [...upcoming.events, ...[...past.events].reverse()].filter(isPublicPayload);
  const name = placeLabel(place, kept[0]);
  return {
    data: withinBudget(kept, (some) => toICalendar([...some].sort(byStartAscending), { name: `Events in ${name}`, siteUrl })),
    freshForMs: Date.parse(`${plusDays(today, 1)}T00:00:00.000Z`) - now.getTime(),
    filename: `events-in-${name}`,
  };
}

/**
 * The calendar of the longest prefix of `events` (in the order they are
 * given: the ones to keep first) whose body fits the answer budget; all of
 * them in the usual case, found by halving only when they do not fit.
 */
function withinBudget(events: readonly EventPayload[], render: (kept: readonly EventPayload[]) => string): string {
  const all = render(events);
  if (bodyBytes(all) <= ANSWER_BUDGET_BYTES) return all;
  let lo = 0;
  let hi = events.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (bodyBytes(render(events.slice(0, mid))) <= ANSWER_BUDGET_BYTES) lo = mid;
    else hi = mid - 1;
  }
  return render(events.slice(0, lo));
}
