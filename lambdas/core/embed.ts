/**
 * The Embed API's compact event (spec §2.3, PRODUCT P11) and its status,
 * computed at read time from the clock:
 *   upcoming  now < start
 *   ongoing   start <= now <= end
 *   past      otherwise
 * With no end date an event is ongoing until the end of its start's calendar
 * day in the event's own time zone.
 */
import { isKnownZone } from './tz-database.js';
import { partsIn } from './local-time.js';
import type * as z from 'zod';
import type { EventPayload } from './read-items.js';
import type { embedEventSchema, embedStatusSchema } from './response-schemas.js';

/** Derived from the response schema, so the mapper and the documents cannot drift. */
export type EmbedStatus = z.infer<typeof embedStatusSchema>;
export type EmbedEvent = z.infer<typeof embedEventSchema>;

/** Offset of the zone from UTC at an instant, in ms (wall clock minus UTC). */
function offsetAt(instant: number, timeZone: string): number {
  const p = partsIn(instant, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * The last millisecond of the calendar day that `instant` falls on in
 * `timeZone`, as a UTC epoch. Handles DST days (23 or 25 hours long) by taking
 * the offset in force at the next local midnight. Unknown zones count as UTC.
 */
export function endOfLocalDay(instant: number, timeZone: string): number {
  const zone = isKnownZone(timeZone) ? timeZone : 'UTC';
  const p = partsIn(instant, zone);
  const nextMidnightWall = Date.UTC(p.year, p.month - 1, p.day + 1);
  let guess = nextMidnightWall - offsetAt(nextMidnightWall, zone);
  // The offset at the guess can differ from the one at the wall time's UTC
  // reading when a transition lies between them; one correction settles it.
  guess = nextMidnightWall - offsetAt(guess, zone);
  return guess - 1;
}

/** The instant the event stops being ongoing (inclusive), as an epoch. */
function lastOngoingInstant(e: Pick<EventPayload, 'start_date' | 'end_date' | 'timezone'>): number {
  const start = Date.parse(e.start_date);
  return e.end_date ? Date.parse(e.end_date) : endOfLocalDay(start, e.timezone);
}

export function embedStatus(e: Pick<EventPayload, 'start_date' | 'end_date' | 'timezone'>, now: Date): EmbedStatus {
  const t = now.getTime();
  if (t < Date.parse(e.start_date)) return 'upcoming';
  return t <= lastOngoingInstant(e) ? 'ongoing' : 'past';
}

/**
 * Milliseconds until the event's status next changes (null when it never
 * will again: it is past). Caches must not keep a response longer than this.
 */
export function msUntilStatusChange(e: Pick<EventPayload, 'start_date' | 'end_date' | 'timezone'>, now: Date): number | null {
  const t = now.getTime();
  const start = Date.parse(e.start_date);
  if (t < start) return start - t;
  const last = lastOngoingInstant(e);
  return t <= last ? last + 1 - t : null;
}

export function toEmbedEvent(p: EventPayload, now: Date, siteUrl: string): EmbedEvent {
  return {
    id: p.event_id,
    title: p.title,
    description: p.description,
    cover: p.cover,
    start_date: p.start_date,
    end_date: p.end_date,
    timezone: p.timezone,
    location: p.location ? { name: p.location.name, city: p.location.city, country: p.location.country } : null,
    url: `${siteUrl}/e/${encodeURIComponent(p.event_id)}`,
    creator: {
      username: p.creator.username,
      image: p.creator.image,
      verified: p.creator.verification_status === 'verified' || p.creator.verification_status === 'id_verified',
    },
    status: embedStatus(p, now),
  };
}
