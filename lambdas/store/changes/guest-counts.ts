/**
 * Keeps an event's guest counts per count bucket (table.ts, countBucket)
 * equal to the bucket's count entries, the way tally summaries are kept
 * (tally-moves.ts): never adjusted by a delta (a retried delta counts
 * twice), always recounted, with a ticket ordering concurrent recounts. The
 * guest list sums the buckets' summaries (repository.ts, getGuestCounts).
 *
 * The rule that keeps a summary right: whoever changes an entry, once that
 * change has landed, either sees that no recount took a ticket after its own
 * (its count, computed from entries read after its ticket, then stands or is
 * overwritten by a later ticket's), or takes a new ticket and recounts. The
 * recount holding the last ticket has read every change: one made by a
 * writer that checked its ticket landed before that check, and the last
 * ticket was taken after it; one made by a writer that recounted landed
 * before that writer's new ticket, which is not after the last.
 *
 * So a guest derivation (derivation.ts) does it in its own waves, with no
 * round trip of its own on the way that meets no other recount:
 * - wave A: the bucket's ticket, with the derivation's number;
 * - wave B: the bucket's entries, with the derivation's read;
 * - wave C: its entry, and the summary as those entries give it with the
 *   entry in (`IF counted < :ticket`);
 * - wave D: the ticket again: still its own, done; otherwise (or if its
 *   entry or count was refused) the recount in three steps: ticket, entries,
 *   count.
 *
 * A derivation writes an entry only through Deriver.deriveGuest, which
 * recounts the bucket whenever it changed the entry or found one (a
 * duplicate of the same change may have written it and died before its
 * count), and whenever it settles a source found pending: a derivation that died between its entry and the
 * count left that source pending, so the one that finishes it recounts. A wave's calls land in any order, so the
 * count may also have landed without the entry; and a deletion that tombstones an RSVP source found pending takes
 * that settle away, so it derives the guest as the settle would, recovering (settle.ts). When
 * callers chose the buckets, one (an event's guest fan-out) derived the
 * creator's unit and recounted only the other guests' buckets; the summary
 * missed the creator's new entry for good (test/integration/
 * write-side-triples.test.ts).
 *
 * The ticket is an item of its own beside the bucket's entries, not an
 * attribute of the summary: the summary is in the event's partition, and a
 * ticket there was a second write per RSVP in it. Nothing needs the two in
 * one item: the count's condition compares the ticket it was given with the
 * summary's `counted`, and tickets only grow (the item is never removed; a
 * resync that rewrites a summary drops its `counted`, so any ticket is above).
 *
 * A bucket holds about guests / 64 entries of a few dozen bytes, so an RSVP's
 * recount costs the same on an event of 10 or 10,000 guests.
 */
import type { GuestCounts } from '../table/items.js';
import { GUEST_COUNT_PREFIX, GUEST_COUNT_TICKET_TYPE, guestShardPartition, keys, shardOfBucket } from '../table/table.js';
import type { Item, TableIO } from '../table/table-io.js';

const STATUSES = ['yes', 'maybe', 'no'] as const;

export class GuestCountRecounter {
  constructor(private readonly io: TableIO) {}

  /** Wave A: the bucket's next ticket (its own item, in the bucket's guest shard: table.ts, guestCountTicket). */
  ticket(eventId: string, bucket: string): Promise<number> {
    return this.io.increment(keys.guestCountTicket(eventId, bucket), 'ticket', GUEST_COUNT_TICKET_TYPE);
  }

  /** Wave B: the bucket's entries (consistent). */
  entries(eventId: string, bucket: string): Promise<Item[]> {
    return this.io.queryAll({ pk: guestShardPartition(eventId, shardOfBucket(bucket)), prefix: `${GUEST_COUNT_PREFIX}${bucket}#` });
  }

  /**
   * Wave C: stores the counts of `entries` with one entry replaced by what
   * this derivation writes there (`mine`, or undefined where it writes none).
   * False when a recount with a later ticket had already stored its count.
   */
  setComputed(eventId: string, bucket: string, ticket: number, entries: readonly Item[], mine: { sk: string; item: Item | undefined }): Promise<boolean> {
    const counted = entries.filter((e) => String(e.sk) !== mine.sk);
    if (mine.item) counted.push(mine.item);
    return this.store(eventId, bucket, ticket, counted);
  }

  /** Wave D: whether no recount took a ticket after `ticket`. */
  async unchanged(eventId: string, bucket: string, ticket: number): Promise<boolean> {
    return Number((await this.io.get(keys.guestCountTicket(eventId, bucket)))?.ticket) === ticket;
  }

  /** The recount in three steps, after the change has landed: ticket, entries, count. */
  async recount(eventId: string, bucket: string): Promise<void> {
    const ticket = await this.ticket(eventId, bucket);
    await this.store(eventId, bucket, ticket, await this.entries(eventId, bucket));
  }

  private async store(eventId: string, bucket: string, ticket: number, entries: readonly Item[]): Promise<boolean> {
    const counts: GuestCounts = { yes: 0, maybe: 0, no: 0 };
    for (const entry of entries) {
      const status = entry.rsvp_status;
      // Removed entries stay a day as tombstones and do not count.
      if (entry.type === 'GUEST_COUNT' && STATUSES.includes(status as (typeof STATUSES)[number])) counts[status as keyof GuestCounts]++;
    }
    // A recount that took a later ticket read later: its counts stand (a failed condition is that, not an error).
    const stored = await this.io.updateIf(keys.guestCountSummary(eventId, bucket), 'SET #yes = :yes, #maybe = :maybe, #no = :no, counted = :ticket, #type = :type', 'attribute_not_exists(counted) OR counted < :ticket', { ':yes': counts.yes, ':maybe': counts.maybe, ':no': counts.no, ':ticket': ticket, ':type': 'GUEST_COUNT_SUMMARY' }, { '#yes': 'yes', '#maybe': 'maybe', '#no': 'no', '#type': 'type' });
    return stored !== undefined;
  }
}
