/**
 * The demo's dates moved to the clock's week (local/demo-dates.ts): whole
 * weeks from the anchor, each event's local wall time kept in its own zone
 * across daylight-saving changes (an hour's move in UTC), times of no zone
 * moved in UTC, everything else of the data left as it is.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { localDateTime } from '../../lambdas/core/local-time.js';
import { offsetMinutesAt } from '../../lambdas/core/tz-database.js';
import { DEMO_ANCHOR, demoWeeks, describeMove, shiftDataset, shiftInZone } from '../../local/demo-dates.js';
import { readDataset } from '../../local/loader.js';
import { DEMO_FILE, NOW } from '../support/fixtures.js';

const WEEK_MS = 7 * 86_400_000;
const ZONES = ['Europe/Lisbon', 'Europe/Amsterdam', 'America/Chicago', 'America/New_York', 'Europe/London', 'UTC', 'Australia/Lord_Howe', 'Asia/Kolkata'];

describe('demoWeeks', () => {
  it("counts whole weeks from the demo's Monday: 0 all that week, -1 just before it", () => {
    expect(new Date(DEMO_ANCHOR).getUTCDay()).toBe(1);
    expect(demoWeeks(new Date(DEMO_ANCHOR))).toBe(0);
    expect(demoWeeks(new Date(NOW))).toBe(0);
    expect(demoWeeks(new Date(Date.parse(DEMO_ANCHOR) + WEEK_MS - 1))).toBe(0);
    expect(demoWeeks(new Date(Date.parse(DEMO_ANCHOR) + WEEK_MS))).toBe(1);
    expect(demoWeeks(new Date(Date.parse(DEMO_ANCHOR) - 1))).toBe(-1);
  });

  it('says the move in words, one week or many, on or back', () => {
    expect([describeMove(0), describeMove(1), describeMove(2), describeMove(-1)]).toEqual([
      "the demo's as written: this is the demo's own week",
      "the demo's, moved 1 week on to this week",
      "the demo's, moved 2 weeks on to this week",
      "the demo's, moved 1 week back to this week",
    ]);
  });
});

describe('shiftInZone', () => {
  it("keeps Lisbon's Sunday 10:00 across the spring change (18 weeks on: 09:00 UTC) and the autumn one back", () => {
    expect(shiftInZone('2026-11-22T10:00:00.000Z', 18, 'Europe/Lisbon')).toBe('2027-03-28T09:00:00.000Z');
    expect(shiftInZone('2027-03-28T09:00:00.000Z', -18, 'Europe/Lisbon')).toBe('2026-11-22T10:00:00.000Z');
    // Near midnight the local day is kept too: 23:30 in Chicago is 05:30 UTC the next day in winter, 04:30 in summer.
    expect(shiftInZone('2026-11-22T05:30:00.000Z', 18, 'America/Chicago')).toBe('2027-03-28T04:30:00.000Z');
    expect(shiftInZone('2026-11-22T10:00:00.000Z', 18, 'UTC')).toBe('2027-03-28T10:00:00.000Z');
  });

  it('any instant, zone and number of weeks: the same local wall time and weekday, unless that wall time does not exist or happens twice there (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('2000-01-01T00:00:00Z'), max: Date.parse('2045-01-01T00:00:00Z') }),
        fc.constantFrom(...ZONES),
        fc.integer({ min: -1000, max: 1000 }),
        (instant, zone, weeks) => {
          const moved = Date.parse(shiftInZone(new Date(instant).toISOString(), weeks, zone));
          const wall = (t: number) => t + offsetMinutesAt(t, zone) * 60_000;
          // The target wall time exists once exactly when the zone's offset is the same an hour either side of it.
          const target = wall(instant) + weeks * WEEK_MS;
          const steady = [-2, -1, 0, 1, 2].every((h) => offsetMinutesAt(target - offsetMinutesAt(target, zone) * 60_000 + h * 3_600_000, zone) === offsetMinutesAt(target - offsetMinutesAt(target, zone) * 60_000, zone));
          if (steady) {
            expect(localDateTime(moved, zone)).toBe(localDateTime(target, 'UTC'));
            expect(localDateTime(moved, zone).slice(11)).toBe(localDateTime(instant, zone).slice(11));
          }
          // Always within the zone's largest change of the same weeks in UTC.
          expect(Math.abs(moved - (instant + weeks * WEEK_MS))).toBeLessThanOrEqual(2 * 3_600_000);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('shiftDataset', () => {
  it("moves every event's dates and every RSVP's, and nothing else of the demo", async () => {
    const { dataset } = await readDataset(DEMO_FILE);
    expect(shiftDataset(dataset, 0)).toBe(dataset);
    const moved = shiftDataset(dataset, 5);
    expect(moved.events.map((e) => e.id)).toEqual(dataset.events.map((e) => e.id));
    moved.events.forEach((e, i) => {
      const was = dataset.events[i]!;
      const { start_date: _s, end_date: _e, created_at: _c, ...rest } = e;
      const { start_date: _ws, end_date: _we, created_at: _wc, ...wasRest } = was;
      expect(rest).toEqual(wasRest);
      expect(localDateTime(Date.parse(e.start_date), e.timezone).slice(11)).toBe(localDateTime(Date.parse(was.start_date), was.timezone).slice(11));
      expect(Date.parse(e.created_at) - Date.parse(was.created_at)).toBe(5 * WEEK_MS);
      expect(e.end_date === null || e.end_date === undefined).toBe(was.end_date === null || was.end_date === undefined);
    });
    expect(moved.rsvps?.map((r) => Date.parse(r.rsvp_date))).toEqual(dataset.rsvps?.map((r) => Date.parse(r.rsvp_date) + 5 * WEEK_MS));
    expect({ ...moved, events: [], rsvps: [] }).toEqual({ ...dataset, events: [], rsvps: [] });
  });
});
