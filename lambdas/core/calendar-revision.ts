/**
 * An event's calendar history: how many times what a calendar shows of it
 * changed (SEQUENCE) and when the last change was applied (LAST-MODIFIED,
 * and DTSTAMP, which means the same without a METHOD: RFC 5545 §3.8.7.2).
 * Subscribed calendars (Outlook among them) replace an entry whose SEQUENCE
 * went up, and an imported `.ics` with a higher SEQUENCE updates the entry it
 * imported before.
 *
 * The change path counts it on the event's source item (applier.ts) and the
 * derivation copies it onto the event item (derive.ts); a resync counts it
 * the same way against the table (local/resync.ts). Like versions, it is
 * history, not read model: a fresh load of the same records cannot know it,
 * so it starts at SEQUENCE 0, stamped with the event's creation, and the
 * P14 comparison of a table with a fresh load sets it aside
 * (docs/data-model.md, "An event's calendar history").
 *
 * SEQUENCE counts revisions instead of taking the change's version: versions
 * may be millisecond timestamps, far past an iCalendar INTEGER (31 bits),
 * and they also move for changes no calendar shows.
 */
import { sameCalendarView, shownSecond, type CalendarFields } from './calendar-view.js';
import type { CalendarRevision } from './read-items.js';

/** The largest iCalendar INTEGER (RFC 5545 §3.3.8): a count that reaches it stays there. */
export const SEQUENCE_MAX = 2_147_483_647;

/** What a stored event source item holds that the revision depends on (lambdas/store/table/items.ts, EventSourceItem). */
export interface RevisionSource {
  event?: CalendarFields;
  revision?: CalendarRevision;
  deleted?: boolean;
}

/**
 * The revision a stored source item stands at: the one it keeps, or, for an
 * event no change has revised yet (as loaded, or as first upserted),
 * SEQUENCE 0 at its creation. Undefined for a tombstone that kept none.
 */
export function revisionOf(stored: RevisionSource | undefined): CalendarRevision | undefined {
  if (stored?.revision) return stored.revision;
  return stored?.event ? { sequence: 0, at: new Date(stored.event.created_at).toISOString() } : undefined;
}

/**
 * When a revision is stamped: the clock, to the second a calendar shows, and
 * at least a second after the last stamp, so LAST-MODIFIED always moves
 * forward with SEQUENCE even when the clocks of two appliers disagree or two
 * revisions land within one second (a stamp then runs ahead of the clock by
 * at most one second per such revision).
 */
export function nextStamp(last: string | undefined, now: Date): string {
  const clock = shownSecond(now).getTime();
  const after = last === undefined ? clock : shownSecond(last).getTime() + 1000;
  return new Date(Math.max(clock, after)).toISOString();
}

/**
 * The revision an event's source item keeps once `event` is written over
 * `stored` (undefined: none yet, SEQUENCE 0): unchanged while a calendar
 * reads the event the same; one more, stamped now, when it reads otherwise,
 * or when the event comes back after a deletion (its tombstone kept the
 * count, so SEQUENCE never goes back for a calendar that imported it before).
 */
export function calendarRevision(stored: RevisionSource | undefined, event: CalendarFields, now: Date): CalendarRevision | undefined {
  if (!stored) return undefined;
  if (!stored.deleted && stored.event && sameCalendarView(stored.event, event)) return stored.revision;
  const base = revisionOf(stored);
  return { sequence: Math.min(SEQUENCE_MAX, (base?.sequence ?? 0) + 1), at: nextStamp(base?.at, now) };
}
