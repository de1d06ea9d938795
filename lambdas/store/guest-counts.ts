/**
 * Keeps an event's guest counts per count bucket (table.ts, countBucket)
 * equal to the bucket's count entries, the way tally summaries are kept
 * (tally-recount.ts): never adjusted by a delta (a retried delta counts
 * twice), always recounted, with a ticket ordering concurrent recounts.
 * Each recount takes the bucket summary's next ticket, then reads the
 * bucket's entries (consistently), then stores its counts only if no recount
 * with a later ticket has stored one. Whoever changed an entry recounts after
 * the change, so the recount holding the last ticket read every change.
 *
 * That rule holds by construction, not by each caller's care: an entry is
 * written only by a guest unit's derivation, and the only way to derive one
 * is Deriver.deriveGuests, which recounts the bucket of every unit it
 * derived, after them, whether the unit's derivation wrote, found the entry
 * right (a repeat after a crash) or handed off to a newer number (whose own
 * deriveGuests recounts after its write; if that applier dies first, the
 * caller keeps `pending` and settles again: settle.ts). When callers chose
 * the buckets, one (an event's guest fan-out) derived the creator's unit and
 * recounted only the other guests' buckets; the creator's entry is new there
 * when the creator's RSVP derived nothing before the move (the old creator
 * was already deleted), and the summary missed it for good
 * (test/integration/write-side-triples.test.ts).
 *
 * A bucket holds about guests / 64 entries of a few dozen bytes, so an RSVP's
 * recount costs the same on an event of 10 or 10,000 guests.
 */
import type { GuestCounts } from './items.js';
import { GUEST_COUNT_PREFIX, keys } from './table.js';
import type { TableIO } from './table-io.js';

const STATUSES = ['yes', 'maybe', 'no'] as const;

export class GuestCountRecounter {
  constructor(private readonly io: TableIO) {}

  async recount(eventId: string, bucket: string): Promise<void> {
    const key = keys.guestCountSummary(eventId, bucket);
    const ticket = await this.io.increment(key, 'ticket', 'GUEST_COUNT_SUMMARY');
    const counts: GuestCounts = { yes: 0, maybe: 0, no: 0 };
    for (const entry of await this.io.queryAll({ pk: key.pk, prefix: `${GUEST_COUNT_PREFIX}${bucket}#` })) {
      const status = entry.rsvp_status;
      // Removed entries stay a day as tombstones and do not count.
      if (entry.type === 'GUEST_COUNT' && STATUSES.includes(status as (typeof STATUSES)[number])) counts[status as keyof GuestCounts]++;
    }
    // A recount that took a later ticket read later: its counts stand (a failed condition is that, not an error).
    await this.io.updateIf(key, 'SET #yes = :yes, #maybe = :maybe, #no = :no, counted = :ticket', 'attribute_not_exists(counted) OR counted < :ticket', { ':yes': counts.yes, ':maybe': counts.maybe, ':no': counts.no, ':ticket': ticket }, { '#yes': 'yes', '#maybe': 'maybe', '#no': 'no' });
  }
}
