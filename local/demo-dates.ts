/**
 * The demo's dates follow the clock (docs/local-server.md, "Demo dates").
 *
 * data/demo.json was written for one week, the demo's own: the week of
 * DEMO_ANCHOR (the tests' clock, test/support/fixtures.ts NOW, is its
 * Saturday noon). Every example the docs show is an answer of that week.
 * `npm start` on the demo moves every date of the data by the whole weeks
 * between that week and the clock's, so that today is in the demo's week
 * again: what is upcoming stays upcoming, this weekend's events are this
 * weekend's, and every example answers as its page shows whatever the day.
 *
 * Whole weeks keep every weekday; an event keeps its local wall-clock start
 * and end in its own time zone (a move across a daylight-saving change would
 * otherwise shift it an hour, and an event near midnight a day), computed
 * with the project's one time-zone database (lambdas/core/tz-database.ts).
 * Times that belong to no zone (an event's `created_at`, an RSVP's date) move
 * by whole weeks in UTC. Anything else a file holds is left as it is.
 */
import type { Dataset } from '../lambdas/core/dataset.js';
import { offsetMinutesAt } from '../lambdas/core/tz-database.js';

/** Monday 00:00 UTC of the week data/demo.json was written for. */
export const DEMO_ANCHOR = '2026-11-16T00:00:00.000Z';

const WEEK_MS = 7 * 86_400_000;
const MINUTE_MS = 60_000;

/** Whole weeks from the demo's week to the week of `now` (negative before it). */
export function demoWeeks(now: Date): number {
  return Math.floor((now.getTime() - Date.parse(DEMO_ANCHOR)) / WEEK_MS);
}

/** `iso` moved by `weeks`, its wall clock in `zone` kept (the later of two readings of an hour that happens twice). */
export function shiftInZone(iso: string, weeks: number, zone: string): string {
  const instant = Date.parse(iso);
  const wall = instant + offsetMinutesAt(instant, zone) * MINUTE_MS + weeks * WEEK_MS;
  // The offset at the new instant depends on the instant: two rounds settle it (an offset changes at most once near it).
  let moved = wall - offsetMinutesAt(wall, zone) * MINUTE_MS;
  moved = wall - offsetMinutesAt(moved, zone) * MINUTE_MS;
  return new Date(moved).toISOString();
}

/** The banner's words for a move of `weeks` (npm start's "Dates:" line). */
export function describeMove(weeks: number): string {
  if (weeks === 0) return "the demo's as written: this is the demo's own week";
  const n = Math.abs(weeks);
  return `the demo's, moved ${n} week${n === 1 ? '' : 's'} ${weeks > 0 ? 'on' : 'back'} to this week`;
}

const inUtc = (iso: string, weeks: number): string => new Date(Date.parse(iso) + weeks * WEEK_MS).toISOString();

/** The dataset with every date moved by `weeks` (the same object when 0). */
export function shiftDataset(dataset: Dataset, weeks: number): Dataset {
  if (weeks === 0) return dataset;
  return {
    ...dataset,
    events: dataset.events.map((e) => ({
      ...e,
      start_date: shiftInZone(e.start_date, weeks, e.timezone),
      end_date: e.end_date === null || e.end_date === undefined ? e.end_date : shiftInZone(e.end_date, weeks, e.timezone),
      created_at: inUtc(e.created_at, weeks),
    })),
    ...(dataset.rsvps ? { rsvps: dataset.rsvps.map((r) => ({ ...r, rsvp_date: inUtc(r.rsvp_date, weeks) })) } : {}),
  };
}
