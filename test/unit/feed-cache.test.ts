/**
 * The delivery container's feed cache (lambdas/delivery/feed-cache.ts,
 * entries-cache.ts) over a plain log (test/support/feed-log.ts), its clock
 * and its waits injected:
 * - a batch of readers shares one refresh; a page held whole needs none;
 * - "nothing more" only from a refresh started after the reader's mark, so
 *   an entry appended after an earlier refresh is never missed by a reader
 *   whose run began after it;
 * - refreshes of a scope at least the interval apart (the bound on what a
 *   container reads of a scope's partition);
 * - cursors behind what is held, and expired ones, are the store's own reads;
 * - content is read after it is asked for: pages asked for together share
 *   one read, a page asked for once that read was sent has its own;
 * - what is held stays bounded (entries per scope, scopes);
 * and, as a property over random logs, appends landing at every read and
 * readers of every mark and page size, each page is what the log holds at
 * those positions, per shard from the cursor on with none skipped, and a
 * page that ends the feed has passed everything appended before its mark.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FEED_SHARDS } from '../../lambdas/core/feed-cursor.js';
import { FeedCache } from '../../lambdas/delivery/feed-cache.js';
import { ScopeEntries } from '../../lambdas/delivery/entries-cache.js';
import { FeedLog } from '../support/feed-log.js';

const S = 'EVENTS';
const zero = () => Array.from({ length: FEED_SHARDS }, () => 0);
const at = (...p: number[]) => [...p, ...zero()].slice(0, FEED_SHARDS);

/** A log of `n` entries in shard 0, and a reader whose container first read it from position 30. */
async function heldFrom30(n: number, refreshEntries: number) {
  const log = new FeedLog();
  for (let i = 0; i < n; i++) log.append(S, 0, `evt_${i}`);
  const { cache } = cached(log, { refreshEntries });
  const v = cache.since(cache.mark());
  await v.feedEntries(S, at(30), 5);
  return { log, v };
}

/** A cache whose interval is waited out on a fake clock (recorded, never slept). */
function cached(log: FeedLog, opts: { interval?: number; refreshEntries?: number; maxEntries?: number; maxScopes?: number; maxAgeMs?: number } = {}) {
  let now = 0;
  const waits: number[] = [];
  const cache = new FeedCache(log, {
    refreshIntervalMs: opts.interval ?? 0,
    refreshEntries: opts.refreshEntries ?? 1000,
    ...(opts.maxEntries ? { maxEntries: opts.maxEntries } : {}),
    ...(opts.maxScopes ? { maxScopes: opts.maxScopes } : {}),
    ...(opts.maxAgeMs ? { maxAgeMs: opts.maxAgeMs } : {}),
    now: () => now,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  });
  return { cache, waits, advance: (ms: number) => void (now += ms) };
}

describe('entries: a refresh per container, not per reader', () => {
  it('ten readers of one batch share one refresh, and the entries it read serve the pages after it', async () => {
    const log = new FeedLog();
    for (let i = 0; i < 250; i++) log.append(S, i % FEED_SHARDS, `evt_${i}`);
    const { cache } = cached(log);
    const views = Array.from({ length: 10 }, () => cache.since(cache.mark()));
    const pages = await Promise.all(views.map((v) => v.feedEntries(S, zero(), 101)));
    expect(log.calls.entries).toHaveLength(1);
    for (const p of pages) expect(p).toEqual(pages[0]);
    expect(pages[0]!.entries).toHaveLength(101);
    expect(pages[0]!.more).toBe(true);
    // The next pages of every reader come from what the refresh read: no call.
    const second = pages[0]!.entries.reduce((pos, e) => ((pos[e.shard] = e.position), pos), zero());
    await Promise.all(views.map((v) => v.feedEntries(S, second, 101)));
    expect(log.calls.entries).toHaveLength(1);
  });

  it('"nothing more" only from a refresh that started after the reader\'s mark', async () => {
    const log = new FeedLog();
    log.append(S, 0, 'evt_a');
    const { cache } = cached(log);
    const early = cache.since(cache.mark());
    expect(await early.feedEntries(S, zero(), 101)).toMatchObject({ more: false, entries: [{ member: 'evt_a' }] });
    // An entry appended after that refresh, then a run that starts (its wake-up came after the append).
    log.append(S, 3, 'evt_b');
    const late = cache.since(cache.mark());
    // The earlier reader may end on what it saw (its own wake-up comes again for evt_b); the later one may not.
    expect(await early.feedEntries(S, at(1), 101)).toEqual({ entries: [], more: false, expired: false });
    expect(log.calls.entries).toHaveLength(1);
    expect((await late.feedEntries(S, at(1), 101)).entries).toEqual([{ shard: 3, position: 1, member: 'evt_b' }]);
    expect(log.calls.entries).toHaveLength(2);
  });

  it('an entry appended while a refresh is in flight is read by the next one, never taken as read', async () => {
    const log = new FeedLog();
    const { cache } = cached(log);
    const first = cache.since(cache.mark());
    let appended = false;
    log.beforeRead = () => {
      // Lands after the refresh began, before it reads: it may or may not be in it, as with the store.
      if (!appended) (appended = true), log.append(S, 1, 'evt_during');
    };
    const seen = await first.feedEntries(S, zero(), 101);
    const later = cache.since(cache.mark());
    const after = seen.entries.reduce((pos, e) => ((pos[e.shard] = e.position), pos), zero());
    const rest = await later.feedEntries(S, after, 101);
    expect([...seen.entries, ...rest.entries].map((e) => e.member)).toEqual(['evt_during']);
  });

  it('refreshes of a scope are at least the interval apart; a reader waits for its turn, never reads twice as often', async () => {
    const log = new FeedLog();
    const { cache, waits, advance } = cached(log, { interval: 500 });
    await cache.since(cache.mark()).feedEntries(S, zero(), 101);
    advance(120);
    log.append(S, 0, 'evt_a');
    const v = cache.since(cache.mark());
    expect((await v.feedEntries(S, zero(), 101)).entries).toHaveLength(1);
    expect(waits).toEqual([380]);
    // Readers that come while it waits join it: still one read each turn.
    const [a, b] = [cache.since(cache.mark()), cache.since(cache.mark())];
    await Promise.all([a.feedEntries(S, at(1), 101), b.feedEntries(S, at(1), 101)]);
    expect(log.calls.entries).toHaveLength(3);
    expect(waits).toEqual([380, 500]);
  });

  it('a cursor behind what is held, or expired, is the store\'s own read and answer', async () => {
    const { log, v } = await heldFrom30(40, 10);
    expect(log.calls.entries.at(-1)!.after).toEqual(at(30));
    const behind = await v.feedEntries(S, at(2), 5);
    expect(log.calls.entries.at(-1)!).toEqual({ scope: S, after: at(2), count: 5 });
    expect(behind.entries.map((e) => e.position)).toEqual([3, 4, 5, 6, 7]);
    log.expiredBelow.set(S, at(20));
    expect(await v.feedEntries(S, at(3), 5)).toEqual({ entries: [], more: true, expired: true });
  });

  it('a cursor a little behind what is held reads on until it meets it: its next pages are the container\'s', async () => {
    const { log, v } = await heldFrom30(60, 20);
    // Five behind what is held (it starts at 31): one read of five and the page, then the page after from the container.
    const page = await v.feedEntries(S, at(25), 3);
    expect(log.calls.entries.at(-1)).toEqual({ scope: S, after: at(25), count: 8 });
    expect(page.entries.map((e) => e.position)).toEqual([26, 27, 28]);
    expect(page.more).toBe(true);
    const calls = log.calls.entries.length;
    expect((await v.feedEntries(S, at(28), 3)).entries.map((e) => e.position)).toEqual([29, 30, 31]);
    expect(log.calls.entries).toHaveLength(calls);
  });
});

describe('content: read after it is asked for', () => {
  it('pages asked for together share one read of their members; a page asked for once it was sent reads again, and sees what changed', async () => {
    const log = new FeedLog();
    log.shown.set('evt_a', { title: 'A' });
    const { cache } = cached(log);
    const together = await Promise.all([cache.feedStates(S, ['evt_a']), cache.feedStates(S, ['evt_a', 'evt_b']), cache.feedStates(S, ['evt_b'])]);
    expect(log.calls.states).toEqual([['evt_a', 'evt_b']]);
    expect(together.map((m) => [...m.keys()])).toEqual([['evt_a'], ['evt_a', 'evt_b'], ['evt_b']]);
    expect(together[1]!.get('evt_b')).toEqual({ item: undefined, shown: false });
    // One asked for while a read is on its way waits for a read of its own.
    let changed = false;
    log.beforeRead = () => {
      if (!changed) (changed = true), log.shown.delete('evt_a');
    };
    const sent = cache.feedStates(S, ['evt_a']);
    await new Promise((r) => setImmediate(r));
    const after = cache.feedStates(S, ['evt_a']);
    expect((await after).get('evt_a')).toEqual({ item: undefined, shown: false });
    await sent;
    expect(log.calls.states).toHaveLength(3);
  });
});

describe('what a container holds stays bounded', () => {
  it('at most maxEntries a scope (the oldest dropped, then read from the store again), at most maxScopes scopes', async () => {
    const log = new FeedLog();
    for (let i = 0; i < 400; i++) log.append(S, i % FEED_SHARDS, `evt_${i}`);
    const { cache } = cached(log, { maxEntries: 80, refreshEntries: 400 });
    const v = cache.since(cache.mark());
    const all = await v.feedEntries(S, zero(), 400);
    expect(all.entries).toHaveLength(400);
    const entries = new ScopeEntries(FEED_SHARDS);
    entries.merge(zero(), all);
    entries.trim(80);
    expect(entries.size).toBeLessThanOrEqual(80);
    const calls = log.calls.entries.length;
    // The start is dropped: a cursor there is read from the store, and answered right.
    const early = await v.feedEntries(S, zero(), 3);
    expect(log.calls.entries.length).toBe(calls + 1);
    expect(early.entries.map((e) => e.member)).toEqual(['evt_0', 'evt_1', 'evt_2']);
    const scopes = cached(new FeedLog(), { maxScopes: 2 });
    for (const s of ['A', 'B', 'C', 'A']) await scopes.cache.since(scopes.cache.mark()).feedEntries(s, zero(), 10);
    expect((scopes.cache as unknown as { scopes: Map<string, unknown> }).scopes.size).toBe(2);
  });

  it('forgets a scope it has held longer than its age: a page it could answer is read from the store again', async () => {
    const log = new FeedLog();
    for (let i = 0; i < 300; i++) log.append(S, i % FEED_SHARDS, `evt_${i}`);
    const { cache, advance } = cached(log, { maxAgeMs: 60_000 });
    await cache.since(cache.mark()).feedEntries(S, zero(), 101);
    await cache.since(cache.mark()).feedEntries(S, zero(), 101);
    expect(log.calls.entries).toHaveLength(1);
    advance(60_001);
    await cache.since(cache.mark()).feedEntries(S, zero(), 101);
    expect(log.calls.entries).toHaveLength(2);
  });
});

describe('every page is the log at its positions, none skipped (fast-check)', () => {
  it('appends at every read, readers of any mark and page size, refreshes cut short: pages are the log; an end passes all before the mark', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.record({ append: fc.array(fc.nat(FEED_SHARDS - 1), { minLength: 1, maxLength: 6 }) }), fc.record({ reader: fc.nat(3), container: fc.nat(1), limit: fc.integer({ min: 1, max: 20 }), rerun: fc.boolean() })), { minLength: 5, maxLength: 60 }),
        fc.array(fc.nat(4), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 3, max: 40 }),
        fc.integer({ min: 8, max: 200 }),
        async (steps, landings, refreshEntries, maxEntries) => {
          const log = new FeedLog();
          // Two containers: a webhook's runs land in either, so a cursor may be ahead of what one holds, or behind it.
          const caches = [cached(log, { refreshEntries, maxEntries }).cache, cached(log, { refreshEntries, maxEntries }).cache];
          let n = 0;
          let pending: number[] = [];
          const land = (k: number) => {
            for (const shard of pending.splice(0, k)) log.append(S, shard, `evt_${n++}`);
          };
          // Appends still to land do so at the store's reads, a few at a time: between a refresh's start and its read.
          let read = 0;
          log.beforeRead = () => land(landings[read++ % landings.length]!);
          const readers = Array.from({ length: 4 }, () => ({ position: zero(), container: 0, view: caches[0]!.since(0), headsAtMark: zero() }));
          const mark = (r: (typeof readers)[number], container = r.container) => {
            land(pending.length);
            r.headsAtMark = log.heads(S);
            r.container = container;
            r.view = caches[container]!.since(caches[container]!.mark());
          };
          for (const step of steps) {
            if ('append' in step) {
              pending.push(...step.append);
              continue;
            }
            const r = readers[step.reader]!;
            // A run starts (in one container or the other) when it is woken, after the appends so far.
            if (step.rerun || step.container !== r.container) mark(r, step.container);
            const page = await r.view.feedEntries(S, r.position, step.limit + 1);
            expect(page.expired).toBe(false);
            for (const e of page.entries.slice(0, step.limit)) {
              expect({ e, at: r.position[e.shard]! + 1, member: log.log(S)[e.shard]![e.position - 1] }).toEqual({ e, at: e.position, member: e.member });
              r.position[e.shard] = e.position;
            }
            if (!page.more && page.entries.length <= step.limit) expect(r.position.every((p, s) => p >= r.headsAtMark[s]!)).toBe(true);
          }
          pending.length && land(pending.length);
          for (const r of readers) {
            mark(r);
            for (let more = true; more; ) {
              const page = await r.view.feedEntries(S, r.position, 11);
              for (const e of page.entries.slice(0, 10)) {
                expect(e.position).toBe(r.position[e.shard]! + 1);
                r.position[e.shard] = e.position;
              }
              more = page.more || page.entries.length > 10;
            }
            expect(r.position).toEqual(log.heads(S));
          }
          pending = [];
        },
      ),
      { numRuns: 300 },
    );
  });
});
