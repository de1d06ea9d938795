/**
 * A place's iCalendar feed (lambdas/core/embed-feeds.ts placeFeed) over a
 * model of discovery's read (local start dates in a window, earliest first,
 * the first `limit`, and whether more are there): for any events around any
 * clock, the calendar holds exactly the route's default window (today to 30
 * days on, the first 100) and the nearest past (the week before, at most 50,
 * else yesterday's), read back with ical.js; it stays fresh until the next
 * UTC midnight and reads at most three times.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ICAL from 'ical.js';
import { FEED_MAX_PAST, FEED_MAX_UPCOMING, PLACE_FEED_DAYS, PLACE_FEED_PAST_DAYS, placeFeed, placeLabel, type PlaceWindowRead } from '../../lambdas/core/embed-feeds.js';
import { localDate, localDateTime } from '../../lambdas/core/local-time.js';
import type { EventPayload } from '../../lambdas/store/table/items.js';
import { eventPayload } from '../support/payloads.js';

const SITE = 'https://events.example';
const DAY = 86_400_000;
const ZONES = ['UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Europe/Lisbon', 'America/Chicago'];

/** Discovery's read as a model: the place's events whose local start date is in the window, by local start then id. */
function modelRead(events: readonly EventPayload[], reads: { from: string; to: string; limit: number }[]): PlaceWindowRead {
  return async (window, limit) => {
    reads.push({ ...window, limit });
    const local = (e: EventPayload) => localDateTime(Date.parse(e.start_date), e.timezone);
    const inWindow = events
      .filter((e) => {
        const day = localDate(Date.parse(e.start_date), e.timezone);
        return day >= window.from && day <= window.to;
      })
      .sort((a, b) => local(a).localeCompare(local(b)) || a.event_id.localeCompare(b.event_id));
    return { events: inWindow.slice(0, limit), more: inWindow.length > limit };
  };
}

const uids = (text: string) =>
  new ICAL.Component(ICAL.parse(text)).getAllSubcomponents('vevent').map((v) => String(v.getFirstPropertyValue('uid')).split('@')[0]!);

const arbitraryEvents = (now: number) =>
  fc
    .array(
      fc.record({
        // Half of them in the last eight days, so that a busy week (over 50) comes up as often as a quiet one.
        offsetHours: fc.oneof(fc.integer({ min: -12 * 24, max: 40 * 24 }), fc.integer({ min: -8 * 24, max: 0 })),
        zone: fc.constantFrom(...ZONES),
        visibility: fc.constantFrom('public', 'public', 'public', 'private'),
      }),
      { maxLength: 180, size: 'max' },
    )
    .map((specs) =>
      specs.map((s, i) =>
        eventPayload({
          event_id: `evt_${String(i).padStart(3, '0')}`,
          title: `Event ${i}`,
          start_date: new Date(now + s.offsetHours * 3_600_000).toISOString(),
          end_date: null,
          timezone: s.zone,
          visibility: s.visibility as EventPayload['visibility'],
          location: { name: 'Hall', city: 'Lisboa', country: 'Portugal' },
        }),
      ),
    );

describe('a place\'s calendar feed', () => {
  it('property: holds the default window and the nearest past, within their bounds, public events only, in at most three reads', async () => {
    const seen = { busyWeek: 0, quietWeek: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: Date.parse('2026-01-01'), max: Date.parse('2028-12-31') }).chain((now) => fc.tuple(fc.constant(now), arbitraryEvents(now))),
        async ([now, events]) => {
          const reads: { from: string; to: string; limit: number }[] = [];
          const feed = await placeFeed(modelRead(events, reads), { city: 'lisboa', country: 'PT' }, new Date(now), SITE);
          const today = new Date(now).toISOString().slice(0, 10);
          const day = (n: number) => new Date(Date.parse(today) + n * DAY).toISOString().slice(0, 10);
          const publicIn = (from: string, to: string) =>
            events
              .filter((e) => e.visibility === 'public')
              .filter((e) => {
                const d = localDate(Date.parse(e.start_date), e.timezone);
                return d >= from && d <= to;
              });
          const everyIn = (from: string, to: string) => events.filter((e) => { const d = localDate(Date.parse(e.start_date), e.timezone); return d >= from && d <= to; });

          const shown = new Set(uids(feed.data));
          const upcoming = everyIn(today, day(PLACE_FEED_DAYS));
          const week = everyIn(day(-PLACE_FEED_PAST_DAYS), day(-1));
          // Upcoming: the first 100 of the window in discovery's order, the public ones shown.
          const expectedUpcoming = (await modelRead(events, [])({ from: today, to: day(PLACE_FEED_DAYS) }, FEED_MAX_UPCOMING)).events.filter((e) => e.visibility === 'public');
          const pastRead = week.length > FEED_MAX_PAST ? { from: day(-1), to: day(-1) } : { from: day(-PLACE_FEED_PAST_DAYS), to: day(-1) };
          const expectedPast = (await modelRead(events, [])(pastRead, FEED_MAX_PAST)).events.filter((e) => e.visibility === 'public');
          expect([...shown].sort()).toEqual([...expectedUpcoming, ...expectedPast].map((e) => e.event_id).sort());
          // Nothing private, nothing outside the bounds.
          const allowed = new Set(publicIn(day(-PLACE_FEED_PAST_DAYS), day(PLACE_FEED_DAYS)).map((e) => e.event_id));
          for (const id of shown) expect(allowed.has(id)).toBe(true);
          // The window's first 100 of discovery's order: all of it when it holds no more.
          if (upcoming.length <= FEED_MAX_UPCOMING) expect(expectedUpcoming.length).toBe(upcoming.filter((e) => e.visibility === 'public').length);
          expect(reads.length).toBe(week.length > FEED_MAX_PAST ? 3 : 2);
          seen[week.length > FEED_MAX_PAST ? 'busyWeek' : 'quietWeek'] += 1;
          expect(reads.every((r) => r.limit <= FEED_MAX_UPCOMING)).toBe(true);
          expect(feed.freshForMs).toBe(Date.parse(`${day(1)}T00:00:00.000Z`) - now);
        },
      ),
      { numRuns: 20 },
    );
    expect(seen.busyWeek).toBeGreaterThan(0);
    expect(seen.quietWeek).toBeGreaterThan(0);
  });

  it('is named for the place as its events spell it, else as the query gave its keys', () => {
    const lisbon = eventPayload({ location: { name: 'Hall', city: 'Lisboa ', country: 'Portugal' } });
    expect(placeLabel({ city: 'lisboa', country: 'PT' }, lisbon)).toBe('Lisboa, Portugal');
    expect(placeLabel({ country: 'PT' }, lisbon)).toBe('Portugal');
    expect(placeLabel({ city: 'lisboa' }, undefined)).toBe('lisboa');
    expect(placeLabel({ country: '~atlantis' }, undefined)).toBe('atlantis');
  });

  it('an empty place is an empty calendar with its name, fresh until midnight', async () => {
    const feed = await placeFeed(modelRead([], []), { city: 'nowhere' }, new Date('2026-11-21T12:00:00.000Z'), SITE);
    expect(uids(feed.data)).toEqual([]);
    expect(feed.data).toContain('X-WR-CALNAME:Events in nowhere');
    expect(feed.freshForMs).toBe(12 * 3_600_000);
    expect(feed.filename).toBe('events-in-nowhere');
  });
});
