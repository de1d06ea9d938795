/**
 * A page's read when a cursor's shard positions lie far apart
 * (lambdas/store/feeds/feed.ts, entriesRanges and entriesAfter;
 * lambdas/store/feeds/feed-reads.ts). Chunks are keyed position first, so one
 * Query from the lowest position reads every shard's chunks from there; a
 * shard far ahead of the others (one member changed thousands of times
 * while the others rested: all its entries go to one shard) would have its
 * chunks between read at every page, for nothing. The positions are read in
 * clusters instead, a Query each, all at once.
 *
 * Held here, on dynalite:
 * - the clusters: one range while the positions are close, a range per
 *   cluster otherwise, contiguous, the last through the heads;
 * - whatever the ranges, a reader taking pages of any size reads every
 *   entry of every shard once, at dense positions, in order within its
 *   shard, with appends landing between its pages (a hot member and many
 *   others; ranges forced small so that most pages read several);
 * - a follower at the end of a scope whose shards are 10,000 positions
 *   apart reads one round trip and a bounded number of items, not the hot
 *   shard's 10,000 positions of chunks.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { fixedClock } from '../../lambdas/core/clock.js';
import { FEED_SHARDS, FeedWriter, MAX_CHUNK_ENTRIES, MAX_TAIL_ENTRIES, entriesRanges, everyShardAt, shardOf } from '../../lambdas/store/feeds/feed.js';
import { FeedReads } from '../../lambdas/store/feeds/feed-reads.js';
import { TableIO } from '../../lambdas/store/table/table-io.js';
import { ensureTable } from '../../local/dynalite.js';
import { directClient } from '../support/direct-dynalite.js';
import { startInProcessDynalite, type InProcessStore } from '../support/in-process-dynalite.js';

const TABLE = 'feed-ranges';
const clock = fixedClock('2026-11-21T12:00:00.000Z');
let store: InProcessStore;
let scopes = 0;
beforeAll(async () => {
  store = await startInProcessDynalite();
  await ensureTable(directClient(store.call), TABLE);
});
afterAll(async () => store?.close());

describe('entriesRanges', () => {
  it('one range through the heads while the positions are close', () => {
    expect(entriesRanges([10, 12, 70, 11])).toEqual([{ shards: [0, 3, 1, 2], from: 11 }]);
  });

  it('a range per cluster, each up to the next one\'s lowest position, the last through the heads', () => {
    expect(entriesRanges([1_000, 5, 990, 20_000, 7], 64)).toEqual([
      { shards: [1, 4], from: 6, to: 990 },
      { shards: [2, 0], from: 991, to: 20_000 },
      { shards: [3], from: 20_001 },
    ]);
  });
});

describe('a page read over shards far apart', () => {
  it('pages of any size, several ranges at once, appends between them: every entry once, dense, in order within its shard', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 12 })), { minLength: 5, maxLength: 25 }),
        fc.integer({ min: 1, max: 40 }),
        async (rounds, limit) => {
          const scope = `GUESTS#evt_ranges${scopes++}`;
          // A small flush size: a chunk every few entries, so that ranges cut through many.
          const writer = new FeedWriter(new TableIO(directClient(store.call), TABLE), clock, 40, MAX_CHUNK_ENTRIES, MAX_TAIL_ENTRIES);
          const reads = new FeedReads(directClient(store.call), TABLE, { rangeGap: 2 });
          const appended: string[][] = everyShardAt(0).map(() => []);
          const read: string[][] = everyShardAt(0).map(() => []);
          let n = 0;
          const readOn = async () => {
            for (let more = true; more; ) {
              const page = await reads.feedEntries(scope, read.map((log) => log.length), limit);
              expect(page.expired).toBe(false);
              expect(page.entries.length).toBeLessThanOrEqual(limit);
              for (const e of page.entries) {
                expect(e.position).toBe(read[e.shard]!.length + 1);
                read[e.shard]!.push(e.member);
              }
              more = page.more;
            }
          };
          for (const [others, hot] of rounds) {
            // The hot member's entries all go to its shard; the others' spread over every shard.
            for (let i = 0; i < hot; i++) {
              await writer.append(scope, ['usr_hot']);
              appended[shardOf('usr_hot')]!.push('usr_hot');
            }
            for (let i = 0; i < others; i++) {
              const member = `usr_${n++}`;
              await writer.append(scope, [member]);
              appended[shardOf(member)]!.push(member);
            }
            await readOn();
          }
          expect(read).toEqual(appended);
        },
      ),
      { numRuns: 25, seed: 44 },
    );
  }, 120_000);

  it("a follower at the end, its shards 10,000 positions apart: one round trip, a bounded read, not the hot shard's chunks between", async () => {
    const scope = `EVENTS_ranges${scopes++}`;
    const writer = new FeedWriter(new TableIO(directClient(store.call), TABLE), clock);
    // One event changed 10,000 times (its shard's entries), 2,000 others changed once.
    for (let i = 0; i < 100; i++) await writer.append(scope, Array.from({ length: 100 }, () => 'evt_hot'));
    for (let i = 0; i < 2_000; i += 100) await writer.append(scope, Array.from({ length: 100 }, (_, j) => `evt_${i + j}`));
    const at = await new FeedReads(directClient(store.call), TABLE).feedHead(scope);
    expect(Math.max(...at) - Math.min(...at)).toBeGreaterThan(9_000);
    let queries = 0;
    let items = 0;
    const metered = directClient(store.call, async (command, _input, send) => {
      const out = (await send()) as { output: { Items?: unknown[] } };
      if (command.startsWith('Query')) {
        queries++;
        items += out.output.Items?.length ?? 0;
      }
      return out;
    });
    const page = await new FeedReads(metered, TABLE).feedEntries(scope, at, 101);
    expect({ entries: page.entries.length, more: page.more, expired: page.expired }).toEqual({ entries: 0, more: false, expired: false });
    // One Query per cluster of positions, sent at once; each stops at its Limit (a page's chunks, its shards', the heads).
    const ranges = entriesRanges(at);
    expect(ranges.length).toBeGreaterThan(1);
    expect(queries).toBe(ranges.length);
    expect(items).toBeLessThanOrEqual(ranges.length * (Math.ceil(101 / 6) + 2) + 3 * FEED_SHARDS);
  });
});
