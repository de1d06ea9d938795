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
 * - `DTSTAMP` (and `CREATED`) is the event's `created_at`. Without a METHOD,
 *   DTSTAMP means "last revised in the store"; the store records no update
 *   time, and a clock reading would change the body, and so the ETag, on
 *   every request. `LAST-MODIFIED` is left out rather than invented.
 * - `SEQUENCE` is the item's numeric `version` when the store has one (it only
 *   ever grows, as RFC 5545 requires), else 0. A content hash would not do:
 *   SEQUENCE must increase, and a hash goes up or down at random.
 */
import ical, { escape, type ICalEventData } from 'ical-generator';
import { endOfLocalDay } from './embed.js';
import type { EventPayload } from './read-items.js';

/** PRODID `-//Public Events API//Embed feed//EN`. */
export const PRODUCT_ID = { company: 'Public Events API', product: 'Embed feed', language: 'EN' } as const;
/** How often subscribed calendars should refresh (REFRESH-INTERVAL, X-PUBLISHED-TTL). */
export const REFRESH_SECONDS = 60 * 60;

/** C0 controls but tab, LF and CR, and DEL: not allowed in a TEXT value (RFC 5545 §3.3.11, TSAFE-CHAR). */
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

/** Text as a TEXT value may hold it (before escaping). */
export function plainText(value: string): string {
  return value.replace(CONTROLS, '');
}

/** A TEXT value escaped by the library's own rule, for the properties it writes as given (the calendar's name). */
export function textValue(value: string): string {
  return escape(plainText(value), false);
}

/** The item's numeric version if the store keeps one (an optional attribute of newer items). */
export function sequenceOf(e: EventPayload): number {
  const version: unknown = (e as EventPayload & { version?: unknown }).version;
  return typeof version === 'number' && Number.isSafeInteger(version) && version >= 0 ? version : 0;
}

/** The instant the event ends for a calendar: its end date, or the end of its local start day. */
export function calendarEnd(e: Pick<EventPayload, 'start_date' | 'end_date' | 'timezone'>): Date {
  return e.end_date ? new Date(e.end_date) : new Date(endOfLocalDay(Date.parse(e.start_date), e.timezone) + 1);
}

/** "Name, City, Country" from the non-null parts, or null without a location. */
export function locationText(location: EventPayload['location']): string | null {
  if (!location) return null;
  return [location.name, location.city, location.country].filter((p): p is string => !!p).join(', ');
}

const nullable = (text: string | null): string | null => (text === null ? null : plainText(text));

function eventData(e: EventPayload, siteUrl: string): ICalEventData {
  const created = new Date(e.created_at);
  return {
    id: `${e.event_id}@${new URL(siteUrl).hostname}`,
    start: new Date(e.start_date),
    end: calendarEnd(e),
    stamp: created,
    created,
    sequence: sequenceOf(e),
    summary: plainText(e.title),
    description: nullable(e.description),
    location: nullable(locationText(e.location)),
    url: `${siteUrl}/e/${encodeURIComponent(e.event_id)}`,
  };
}

/** One VCALENDAR holding the given events, in the given order. */
export function toICalendar(events: readonly EventPayload[], opts: { name: string; siteUrl: string }): string {
  const calendar = ical({ prodId: { ...PRODUCT_ID }, name: textValue(opts.name), ttl: REFRESH_SECONDS });
  for (const e of events) calendar.createEvent(eventData(e, opts.siteUrl));
  return calendar.toString();
}
