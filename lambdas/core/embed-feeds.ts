/**
 * The Embed API's iCalendar feeds (PRODUCT P15): a user's feed and one event's.
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
