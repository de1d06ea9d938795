/**
 * Issue 57 r1 (the review's reproducer, adopted): a follower a moment
 * behind was answered 410 ("Cursor expired: start again without a cursor")
 * although nothing expired, at every try, because one shard's next chunk is
 * keyed beyond that shard's range (lambdas/store/feeds/feed-reads.ts
 * readEntries; lambdas/store/feeds/feed-entries.ts entriesRanges and
 * entriesAfter). Now a shard is judged read to its end only when every key
 * that may hold its next entry was read, whatever range it falls in
 * (feed-entries.ts, readFrom); the class is held over every chunk size,
 * range split and Limit cut by feed-reads-live.property.test.ts.
 *
 * A chunk is keyed by its LAST position (`C#{last}#{shard}`), and a page's
 * ranges cut the chunk keys at the next cluster's lowest position
 * (entriesRanges). A chunk holding more than RANGE_GAP (64) entries (a load's
 * or a resync's BULK_APPEND of 100, a head flushed whole after a throttle: up
 * to 200; short ids: 70 to 93) can start inside its shard's range and end in
 * the next one: it is then read by the NEXT range's Query. When that Query
 * stops at its Limit before the chunk, readEntries still marks the shard
 * "not cut" (`cut[shard] = !done[its own range]`), entriesAfter judges it
 * known to its end, sees position + 1 held nowhere while its head holds later
 * positions: a front hole. feedEntries read again (the same), answered
 * `expired`, and the route answered 410.
 *
 * The shape needs three clusters of positions (the shards of a catalogue, a
 * host's or a guest feed drift apart when a few members change often: one
 * member's entries all go to one shard), and a chunk of more than 64 entries
 * in the lowest shard: here 100 events of one shard arrive in one bulk
 * append. The production writer and reader are used with their production
 * sizes (flush at 560 bytes, RANGE_GAP 64, 8 shards, a page of 100).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { parseCursor, staticKeyring } from '../../lambdas/core/feed-cursor.js';
import { catalogueChanges, type FeedContext } from '../../lambdas/core/feeds.js';
import { BULK_APPEND, FEED_SHARDS, FeedWriter, entriesRanges, shardOf } from '../../lambdas/store/feeds/feed.js';
import { FeedReads } from '../../lambdas/store/feeds/feed-reads.js';
import { TableIO } from '../../lambdas/store/table/table-io.js';
import { ensureTable } from '../../local/dynalite.js';
import { directClient } from '../support/direct-dynalite.js';
import { startInProcessDynalite, type InProcessStore } from '../support/in-process-dynalite.js';

const TABLE = 'feed-straddle';
const T = '2026-11-21T12:00:00.000Z';
const clock = fixedClock(T);
let store: InProcessStore;
beforeAll(async () => {
  store = await startInProcessDynalite();
  await ensureTable(directClient(store.call), TABLE);
});
afterAll(async () => store?.close());

/** Ids given so far, so that no two calls give one twice. */
let nextId = 0;
/** `count` distinct event ids of `length` characters (`evt_` and a base-36 counter) whose entries go to `shard`. */
function idsInShard(shard: number, count: number, length: number): string[] {
  const out: string[] = [];
  while (out.length < count) {
    const id = `evt_${(nextId++).toString(36).padStart(length - 4, '0')}`;
    if (shardOf(id) === shard) out.push(id);
  }
  return out;
}

describe("a page whose lowest shard's next chunk is keyed in the next range", () => {
  it('a catalogue follower a moment behind is given its changes, not 410', async () => {
    const scope = 'EVENTS';
    // The production writer: flush at 560 bytes, chunks and tails of at most 200, 8 shards.
    const writer = new FeedWriter(new TableIO(directClient(store.call), TABLE), clock);
    const [x, y, ...others] = Array.from({ length: FEED_SHARDS }, (_, s) => s);
    // Shard y: 65 events changed once (7-character ids: still in its head).
    for (const id of idsInShard(y!, 65, 7)) await writer.append(scope, [id]);
    // Every other shard: 70 short ids (one chunk of 70), then 90 of the contract's longest (chunks of 9).
    for (const s of others) {
      for (const id of idsInShard(s, 70, 7)) await writer.append(scope, [id]);
      for (const id of idsInShard(s, 90, 68)) await writer.append(scope, [id]);
    }

    // A follower starts now, through the route's own code (a start, then its member pages, then entries).
    const reads = new FeedReads(directClient(store.call), TABLE);
    const ctx: FeedContext = { feeds: reads, keyring: staticKeyring(Buffer.from('cursor-key-of-this-test')), now: new Date(T) };
    let page = await catalogueChanges(ctx, { limit: 100 }, 'https://site.example');
    while (page.changes.length === 0 && parseCursor(page.next_cursor)!.cursor.mode === 'members') {
      page = await catalogueChanges(ctx, { cursor: parseCursor(page.next_cursor)!, limit: 100 }, 'https://site.example');
    }
    const cursor = parseCursor(page.next_cursor)!;
    expect(cursor.cursor.mode).toBe('entries');
    // Shard x had no entry yet, shard y 65, the others 160: three clusters, three ranges.
    expect({ x: cursor.cursor.position[x!], y: cursor.cursor.position[y!] }).toEqual({ x: 0, y: 65 });
    expect(entriesRanges(cursor.cursor.position).map((r) => r.shards.length)).toEqual([1, 1, FEED_SHARDS - 2]);

    // Then 100 events of shard x arrive in one bulk append (a load's or a resync's BULK_APPEND): one chunk, positions 1..100.
    const newcomers = idsInShard(x!, BULK_APPEND, 10);
    await writer.append(scope, newcomers);

    // The follower's next page, the same second (nothing can have expired), and again a minute later.
    const next = async () =>
      catalogueChanges(ctx, { cursor, limit: 100 }, 'https://site.example').then(
        (p) => ({ status: 200, removedNewcomers: p.changes.filter((c) => newcomers.includes(c.id)).length }),
        (e: { statusCode?: number; message?: string }) => ({ status: e.statusCode, message: e.message }),
      );
    const first = await next();
    ctx.now = new Date(Date.parse(T) + 60_000);
    const again = await next();
    expect({ first, again }).toEqual({ first: { status: 200, removedNewcomers: 100 }, again: { status: 200, removedNewcomers: 100 } });
  });
});
