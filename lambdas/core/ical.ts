/**
 * iCalendar (RFC 5545) rendering of public events for the Embed API's feeds.
 * Pure: events in, text out. ical-generator does the syntax: CRLF, folding of
 * every line at 75 octets without splitting a UTF-8 character, and TEXT
 * escaping of `\ ; ,` and newlines (RFC 5545 §3.3.11). One escaping rule for
 * every property: the library applies its `escape` to SUMMARY, DESCRIPTION
 * and LOCATION itself but writes the calendar's name (`NAME`,
 * `X-WR-CALNAME`) as given, so the name goes through that same exported
 * `escape` here (`textValue`). Every value is text someone typed (a title
 * names an event's calendar, a city a place's), so a newline in it must stay
 * text: written raw it would end the line and start any property or whole
 * VEVENT the text spells. `UID` and `URL` are built from validated ids and
 * the configured site, so they hold no character that needs escaping.
 * Control characters, which no TEXT value may hold, are dropped (tab and line
 * breaks kept). This module decides the values:
 *
 * - Times are UTC (`…Z`). ical-generator renders a plain Date in a `TZID` with
 *   the *machine's* local clock, so no time zone is ever passed to it.
 * - `DTEND` of an event without an end date is the end of its start's
 *   calendar day in the event's own time zone: the Embed status rule
 *   (PRODUCT P11), so a calendar shows the same span the widget calls ongoing.
 * - `UID` is `{eventId}@{site host name}`: stable for the event's lifetime.
 * - `SEQUENCE`, `LAST-MODIFIED` and `DTSTAMP` are the event's calendar
 *   history (calendar-revision.ts), which the event item carries: SEQUENCE
 *   counts the changes of what a calendar shows of it (calendar-view.ts),
 *   LAST-MODIFIED is when the last was applied, and DTSTAMP the same (without
 *   a METHOD it means "last revised in the store", RFC 5545 §3.8.7.2). Before
 *   any such change: 0, and the event's creation for both stamps. Nothing here
 *   reads a clock, so the body, and so the ETag, changes only with the event.
 *   A content hash would not do for SEQUENCE: it must increase, and a hash
 *   goes up or down at random.
 */
import ical, { escape, type ICalEventData } from 'ical-generator';
import { SEQUENCE_MAX } from './calendar-revision.js';
import { calendarView, plainText } from './calendar-view.js';
import type { EventPayload } from './read-items.js';

/** PRODID `-//Public Events API//Embed feed//EN`. */
export const PRODUCT_ID = { company: 'Public Events API', product: 'Embed feed', language: 'EN' } as const;
/** How often subscribed calendars should refresh (REFRESH-INTERVAL, X-PUBLISHED-TTL). */
export const REFRESH_SECONDS = 60 * 60;

/** A TEXT value escaped by the library's own rule, for the properties it writes as given (the calendar's name). */
export function textValue(value: string): string {
  return escape(plainText(value), false);
}

/** SEQUENCE: the event's revision count (0 before any), an INTEGER (RFC 5545 §3.3.8) that only grows. */
export function sequenceOf(e: Pick<EventPayload, 'sequence'>): number {
  const n: unknown = e.sequence;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? Math.min(n, SEQUENCE_MAX) : 0;
}

/** LAST-MODIFIED and DTSTAMP: when the last revision was applied, or the event's creation before any. */
export function lastRevised(e: Pick<EventPayload, 'modified_at' | 'created_at'>): Date {
  return new Date(e.modified_at ?? e.created_at);
}

function eventData(e: EventPayload, siteUrl: string): ICalEventData {
  const shown = calendarView(e);
  const revised = lastRevised(e);
  return {
    id: `${e.event_id}@${new URL(siteUrl).hostname}`,
    start: new Date(shown.start),
    end: new Date(shown.end),
    stamp: revised,
    lastModified: revised,
    created: new Date(shown.created),
    sequence: sequenceOf(e),
    summary: shown.summary,
    description: shown.description,
    location: shown.location,
    url: `${siteUrl}/e/${encodeURIComponent(e.event_id)}`,
  };
}

/** One VCALENDAR holding the given events, in the given order. */
export function toICalendar(events: readonly EventPayload[], opts: { name: string; siteUrl: string }): string {
  const calendar = ical({ prodId: { ...PRODUCT_ID }, name: textValue(opts.name), ttl: REFRESH_SECONDS });
  for (const e of events) calendar.createEvent(eventData(e, opts.siteUrl));
  return calendar.toString();
}
