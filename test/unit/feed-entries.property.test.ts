/**
 * The feed read's judgement (lambdas/store/feeds/feed-entries.ts,
 * entriesRanges and entriesAfter) over what a page's Queries can have read,
 * as a property (issue 57 item 2, the pure half; the store's half, with the
 * real writer, the route and TTL over weeks, is
 * test/integration/feed-reads-live.property.test.ts).
 *
 * A scope's 8 shards each hold chunks of 1 to 200 entries, keyed by their
 * last position, and a head; a flush that died between its chunk and its
 * trim leaves a chunk's entries in the head too; TTL has deleted any of a
 * shard's oldest chunks. A cursor's positions, anywhere up to each shard's
 * last, split into ranges at any gap; each range's Query stops after any of
 * its items (DynamoDB's Limit or its 1 MB page), saying so with a
 * LastEvaluatedKey, which DynamoDB also gives when the Limit happens to fall
 * on the range's last item. Whatever was read:
 * - the entries are each shard's next ones, at dense positions from the
 *   cursor's, each the member written there, in order of position;
 * - a front hole (the route's 410) only where a shard's next position is
 *   held nowhere (TTL deleted it), never where it sits in a chunk not read;
 * - "nothing more" only when every shard's last position is reached;
 * - a read of every range to its end gives entries, a front hole or the end.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FEED_SHARDS, MAX_CHUNK_ENTRIES, chunkRangeStart, chunkSortKey, headSortKey } from '../../lambdas/store/feeds/feed-layout.js';
import { RANGE_GAP, entriesAfter, entriesRanges } from '../../lambdas/store/feeds/feed-entries.js';

type Item = Record<string, unknown>;
const member = (shard: number, position: number) => `m${shard}-${position}`;

/** One shard's log as stored: chunks (sizes), the head's tail, a dead flush's chunk still in the head, chunks TTL deleted. */
const shardArb = fc.record({
  chunks: fc.array(fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: MAX_CHUNK_ENTRIES })), { maxLength: 5 }),
  tail: fc.integer({ min: 0, max: 30 }),
  deadFlush: fc.boolean(),
  // Mostly none: one shard's deleted entries make the whole cursor a 410, and would hide a false one in another shard.
  expired: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(5) }),
});
type Shard = typeof shardArb extends fc.Arbitrary<infer T> ? T : never;

/** The shard's items (sort key order is the table's), its last position, and which positions some item holds. */
function layout(shard: number, s: Shard): { items: Item[]; last: number; held: Set<number> } {
  const items: Item[] = [];
  const held = new Set<number>();
  let lo = 1;
  s.chunks.forEach((size, i) => {
    const members = Array.from({ length: size }, (_, j) => member(shard, lo + j));
    if (i >= s.expired) {
      items.push({ sk: chunkSortKey(lo + size - 1, shard), lo, members });
      members.forEach((_, j) => held.add(lo + j));
    }
    lo += size;
  });
  const last = lo - 1 + s.tail;
  // A flush that wrote its chunk and died before its trim: the head still starts at that chunk's first position.
  const lastChunk = s.chunks.at(-1);
  const base = s.deadFlush && lastChunk !== undefined ? lo - lastChunk : lo;
  if (last > 0 || s.chunks.length) {
    items.push({ sk: headSortKey(shard), base, tail: Array.from({ length: last - base + 1 }, (_, j) => member(shard, base + j)) });
    for (let p = base; p <= last; p++) held.add(p);
  }
  return { items, last, held };
}

describe("a page's read of chunks and heads, cut anywhere (fast-check)", () => {
  it('gives the next entries, a front hole only where TTL deleted one, and the end only at the end', () => {
    fc.assert(
      fc.property(
        fc.array(shardArb, { minLength: FEED_SHARDS, maxLength: FEED_SHARDS }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: FEED_SHARDS, maxLength: FEED_SHARDS }),
        fc.constantFrom(1, 2, 8, 32, RANGE_GAP),
        fc.integer({ min: 1, max: 101 }),
        fc.array(fc.record({ read: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })), lastEvaluated: fc.boolean() }), { minLength: FEED_SHARDS, maxLength: FEED_SHARDS }),
        (shards, at, gap, count, cuts) => {
          const stored = shards.map((s, shard) => layout(shard, s));
          const table = stored.flatMap((s) => s.items).sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : 1));
          const after = stored.map((s, shard) => Math.floor(at[shard]! * (s.last + 1)));
          const ranges = entriesRanges(after, gap);
          // Each range's Query from its first key on, stopped after any of its items.
          const items: Item[] = [];
          const done = ranges.map((range, i) => {
            const from = chunkRangeStart(range.from);
            const to = range.to === undefined ? 'H#~' : `${chunkRangeStart(range.to)}#~`;
            const inRange = table.filter((item) => String(item.sk) >= from && String(item.sk) <= to);
            const read = inRange.length === 0 ? 0 : 1 + Math.floor(cuts[i]!.read * inRange.length);
            items.push(...inRange.slice(0, Math.min(read, inRange.length)));
            return read >= inRange.length && !(read === inRange.length && inRange.length > 0 && cuts[i]!.lastEvaluated);
          });

          const answer = entriesAfter(items, after, count, { ranges, done });
          const reached = [...after];
          expect(answer.entries.length).toBeLessThanOrEqual(count);
          for (const e of answer.entries) {
            expect(e).toEqual({ shard: e.shard, position: reached[e.shard]! + 1, member: member(e.shard, reached[e.shard]! + 1) });
            reached[e.shard] = e.position;
          }
          const order = answer.entries.map((e) => [e.position, e.shard]);
          expect(order).toEqual([...order].sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!));
          const gone = after.filter((p, shard) => p < stored[shard]!.last && !stored[shard]!.held.has(p + 1));
          if (answer.frontHole) expect({ after, frontHoleWhereNothingIsGone: gone.length === 0 }).toEqual({ after, frontHoleWhereNothingIsGone: false });
          if (!answer.more) expect({ after, reached }).toEqual({ after, reached: stored.map((s) => s.last) });
          if (done.every(Boolean)) expect({ after, movesOn: answer.entries.length > 0 || answer.frontHole || !answer.more }).toEqual({ after, movesOn: true });
        },
      ),
      { numRuns: 1_000, seed: 572 },
    );
  });
});
