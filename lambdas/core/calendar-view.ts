/**
 * What a calendar shows of an event: the values its VEVENT is rendered from
 * (ical.ts), apart from the three that record the event's calendar history
 * (SEQUENCE, LAST-MODIFIED, DTSTAMP: calendar-revision.ts) and the two that
 * never change for an event (UID and URL, from its id and the site). One
 * definition for both the rendering and the change path's question "did what
 * a calendar shows change?", so a revision is counted exactly when an entry
 * reads differently. No iCalendar library here: the change path (the ingest
 * bundle) imports this module.
 */
import { endOfLocalDay } from './embed.js';

/** The fields of an event a calendar shows, as the source record and the event item both hold them. */
export interface CalendarFields {
  title: string;
  description?: string | null;
  location?: { name: string; city?: string | null; country?: string | null } | null;
  start_date: string;
  end_date?: string | null;
  timezone: string;
  created_at: string;
}

/** C0 controls but tab, LF and CR, and DEL: not allowed in a TEXT value (RFC 5545 §3.3.11, TSAFE-CHAR). */
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

/** Text as a TEXT value may hold it (before escaping). */
export function plainText(value: string): string {
  return value.replace(CONTROLS, '');
}

/** "Name, City, Country" from the non-null parts, or null without a location. */
export function locationText(location: CalendarFields['location']): string | null {
  if (!location) return null;
  return [location.name, location.city, location.country].filter((p): p is string => !!p).join(', ');
}

/** The instant the event ends for a calendar: its end date, or the end of its local start day (the Embed status rule). */
export function calendarEnd(e: Pick<CalendarFields, 'start_date' | 'end_date' | 'timezone'>): Date {
  return e.end_date ? new Date(e.end_date) : new Date(endOfLocalDay(Date.parse(e.start_date), e.timezone) + 1);
}

/** An iCalendar DATE-TIME holds whole seconds (RFC 5545 §3.3.5): the instant as a calendar shows it. */
export function shownSecond(instant: Date | string): Date {
  const ms = typeof instant === 'string' ? Date.parse(instant) : instant.getTime();
  return new Date(Math.floor(ms / 1000) * 1000);
}

export interface CalendarView {
  start: string;
  end: string;
  summary: string;
  description: string | null;
  location: string | null;
  created: string;
}

/** The values of an event's VEVENT besides its history, its UID and its URL. */
export function calendarView(e: CalendarFields): CalendarView {
  const text = (value: string | null | undefined) => (value == null ? null : plainText(value));
  return {
    start: shownSecond(e.start_date).toISOString(),
    end: shownSecond(calendarEnd(e)).toISOString(),
    summary: plainText(e.title),
    description: text(e.description),
    location: text(locationText(e.location)),
    created: shownSecond(e.created_at).toISOString(),
  };
}

/** Whether two versions of an event read the same in a calendar. */
export function sameCalendarView(a: CalendarFields, b: CalendarFields): boolean {
  return JSON.stringify(calendarView(a)) === JSON.stringify(calendarView(b));
}
