/**
 * The delivery containers' feed cache (lambdas/delivery/feed-cache.ts) held
 * to PRODUCT P16's rule on the real table, with the feeds' own property
 * machinery (test/support/feed-consumer.ts, change-streams.ts): a consumer
 * follows every feed through two containers' caches (each page through one
 * of them, as a webhook's runs land in either), its reads landing between
 * the appliers' DynamoDB calls, with appliers that die after any call,
 * writes that fail, a partition throttled for a whole delivery, the
 * redelivery, and TTL deleting what it may. Every page a cache answers is
 * checked against the store's own read at that moment (each shard's entries
 * a prefix of the store's from the same cursor, none past it), and a page
 * that says "nothing more" against what the store held when its reader took
 * its mark. Once the write side is quiet and each feed is read to
 * `has_more: false`, each replica equals its scope's read model; no
 * private field appears, `removed` is bare, no id that was never public
 * appears (the consumer's own checks); and no feed asked it to start again.
 *
 * Then, on one scope with a small flush size (chunks every few entries),
 * the content a cached page shows is read after the page was asked for:
 * a page asked for once a write landed shows it, whatever another page
 * read before.
 *
 * FEED_CACHE_RUNS sets the property's runs (default 6).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { applyChange, initialState } from '../../lambdas/core/fold.js';
import type { FeedEntriesRead, FeedReader } from '../../lambdas/core/ports.js';
import { FeedCache } from '../../lambdas/delivery/feed-cache.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { FeedWriter, feedScopes } from '../../lambdas/store/feeds/feed.js';
import { TableIO } from '../../lambdas/store/table/table-io.js';
import { historyArb, type History } from '../support/change-streams.js';
import { FEED_NOW as NOW, FeedConsumer, expectReplicasMatch, scopesOf, withObservedClient, type FeedFunction, type Fault } from '../support/feed-consumer.js';
import { feedContext } from '../support/feed-keys.js';
import { sweepExpired, withinRetention } from '../support/ttl.js';
import { useFileStore } from '../support/store.js';
import { FOLLOWED_PLACES } from '../support/change-streams.js';

const RUNS = Number(process.env.FEED_CACHE_RUNS ?? 6);
const TIMEOUT = 60_000 + RUNS * 8_000;
const clock = fixedClock(NOW.toISOString());
const store = useFileStore();

/**
 * A cache's reader checked against the store at every page: entries per shard a prefix of what the store has after
 * the same cursor (read right after, nothing written between), and an end only past what the store held at the
 * reader's mark (the positions recorded then).
 */
function checkedView(cache: FeedCache, repo: DynamoRepository, headsAtMark: Map<string, number[]>): FeedReader {
  const view = cache.since(cache.mark());
  return {
    ...view,
    async feedEntries(scope, after, count): Promise<FeedEntriesRead> {
      const page = await view.feedEntries(scope, after, count);
      const truth = await repo.feedEntries(scope, after, 1_000_000);
      expect(page.expired).toBe(truth.expired);
      for (const e of page.entries) expect(truth.entries).toContainEqual(e);
      // Per shard, from the cursor on with none missing.
      const next = [...after];
      for (const e of [...page.entries].sort((a, b) => a.position - b.position)) {
        expect({ shard: e.shard, position: e.position }).toEqual({ shard: e.shard, position: next[e.shard]! + 1 });
        next[e.shard] = e.position;
      }
      const atMark = headsAtMark.get(scope);
      if (!page.more && page.entries.length <= count - 1 && atMark) expect({ scope, reached: next.map((p, s) => Math.max(p, after[s]!) >= atMark[s]!) }).toEqual({ scope, reached: atMark.map(() => true) });
      return page;
    },
  };
}

const scopesOfHistory = (table: string, h: History) => {
  const userIds = new Set([...h.d0.users.map((u) => u.id), ...h.made.flatMap((c) => ('user' in c ? [c.user.id] : []))]);
  const eventIds = [...new Set([...h.d0.events.map((e) => e.id), ...h.made.flatMap((c) => ('event' in c ? [c.event.id] : []))])];
  return scopesOf(store.client, table, userIds, eventIds, FOLLOWED_PLACES);
};

describe('feed cache: pages through two containers\' caches keep P16 (fast-check, the change path)', () => {
  it('read while changes apply, with crashes, failed writes, throttles, redeliveries and TTL: each page the store\'s, replicas = read model', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb({ maxSteps: 8 }), fc.array(fc.nat(60), { minLength: 8, maxLength: 8 }), fc.integer({ min: 3, max: 12 }), fc.array(fc.nat(1), { minLength: 1, maxLength: 9 }), fc.integer({ min: 3, max: 400 }), async (h, crashAt, every, containerOf, refreshEntries) => {
        const table = await store.loaded('cache', h.d0);
        const repo = new DynamoRepository(store.client, table);
        // Each feed function's two containers; a small refresh makes pages cross what a refresh held.
        const caches = new Map<FeedFunction, FeedCache[]>();
        let reads = 0;
        const contextOf = (feed: FeedFunction) => {
          const pair = caches.get(feed) ?? [0, 1].map(() => new FeedCache(repo, { refreshIntervalMs: 0, refreshEntries }));
          caches.set(feed, pair);
          // A run per page (the consumer has no wake-ups to come back with): its mark now, the store's heads now.
          const headsAtMark = new Map<string, number[]>();
          const cache = pair[containerOf[reads++ % containerOf.length]!]!;
          const marked: FeedReader = {
            ...checkedView(cache, repo, headsAtMark),
            feedEntries: async (scope, after, count) => {
              headsAtMark.set(scope, await repo.feedHead(scope));
              return checkedView(cache, repo, headsAtMark).feedEntries(scope, after, count);
            },
          };
          return feedContext(marked, NOW);
        };
        const consumer = new FeedConsumer(repo, scopesOfHistory(table, h), contextOf);
        const state = initialState(h.d0);
        await consumer.poll(true);
        for (const [i, change] of h.delivered.entries()) {
          applyChange(state, change);
          const at = crashAt[i % crashAt.length]! + 1;
          const fault: Fault = i % 3 === 1 ? { crashAfter: at } : i % 3 === 2 ? { failAt: at } : { throttled: 'FEED#' };
          await withObservedClient(store.endpoint, every, fault, consumer, (c) => new ChangeApplier(c, table, { clock, fanOutConcurrency: 1 }).apply(change as Change));
          await sweepExpired(store.client, table, withinRetention(NOW));
          await withObservedClient(store.endpoint, every, {}, consumer, (c) => new ChangeApplier(c, table, { clock, fanOutConcurrency: 1 }).apply(change as Change));
        }
        await consumer.drain();
        expect(consumer.restarts).toBe(0);
        await expectReplicasMatch(store.client, table, consumer, (await scopesOfHistory(table, h)()).users);
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});

describe('feed cache: content is read after the page asks for it (the real store)', () => {
  it('a page asked for after a write shows it; pages asked for together share one read', async () => {
    const table = await store.loaded('content', { users: [{ id: 'usr_h', username: 'h' }], events: [], rsvps: [] });
    const repo = new DynamoRepository(store.client, table);
    let batches = 0;
    const counted: FeedReader = { ...repo, feedEntries: repo.feedEntries.bind(repo), feedHead: repo.feedHead.bind(repo), feedMembers: repo.feedMembers.bind(repo), userIdByName: repo.userIdByName.bind(repo), feedStates: (scope, members) => (batches++, repo.feedStates(scope, members)) };
    const cache = new FeedCache(counted, { refreshIntervalMs: 0 });
    const applier = new ChangeApplier(store.client, table, { clock });
    const event = (title: string, visibility: 'public' | 'private') => ({ type: 'event.upserted' as const, version: ++version, event: { id: 'evt_c', creator_id: 'usr_h', title, start_date: '2027-01-01T20:00:00.000Z', timezone: 'UTC', status: 'published' as const, visibility, created_at: '2026-11-01T00:00:00.000Z' } });
    let version = 0;
    await applier.apply(event('Shown', 'public'));
    const together = await Promise.all([cache.feedStates(feedScopes.catalogue(), ['evt_c']), cache.feedStates(feedScopes.catalogue(), ['evt_c'])]);
    expect(batches).toBe(1);
    expect(together.map((m) => m.get('evt_c')?.shown)).toEqual([true, true]);
    await applier.apply(event('Hidden', 'private'));
    expect((await cache.feedStates(feedScopes.catalogue(), ['evt_c'])).get('evt_c')?.shown).toBe(false);
    expect(batches).toBe(2);
    // And a scope's entries: a refresh after the hide's append is the only one that may end a reader marked after it.
    const writer = new FeedWriter(new TableIO(store.client, table), clock, 40);
    const scope = feedScopes.catalogue();
    const before = cache.since(cache.mark());
    const head = await repo.feedHead(scope);
    expect(await before.feedEntries(scope, head, 101)).toMatchObject({ entries: [], more: false });
    await writer.append(scope, ['evt_c']);
    const after = cache.since(cache.mark());
    expect((await after.feedEntries(scope, head, 101)).entries.map((e) => e.member)).toEqual(['evt_c']);
  });
});
