/**
 * The rule of PRODUCT P16, held with random change streams (the change-stream
 * generator) on the real table: a consumer follows every feed (the catalogue,
 * each user's events, each event's guests) while the changes are applied, its
 * reads landing between the appliers' DynamoDB calls, with appliers that die
 * after any call, writes that fail, a partition throttled for a whole
 * delivery, and the redelivery. Every change the consumer sees is either
 * an upsert with content from the moment of the answer or a bare `removed`;
 * no id that was never public appears; no private field ever does. Once the
 * write side is quiet and each feed is read to `has_more: false`, each replica
 * equals its scope's read model, and a consumer starting from no cursor gets
 * the same contents as upserts, each id once.
 *
 * FEED_RUNS=200 runs more cases than the default.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { applyChange, initialState, type FoldState } from '../../lambdas/core/fold.js';
import { catalogueChanges } from '../../lambdas/core/feeds.js';
import { parseCursor, type SealedCursor } from '../../lambdas/core/feed-cursor.js';
import { feedContext } from '../support/feed-keys.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { isPubliclyVisible } from '../../lambdas/store/changes/derive.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { FOLLOWED_PLACES, historyArb, type History } from '../support/change-streams.js';
import { FEED_NOW as NOW, FEED_SITE as SITE, FeedConsumer, expectReplicasMatch, placesShowing, scopesOf, withObservedClient, type Fault, type FeedChange as Change_ } from '../support/feed-consumer.js';
import { sweepExpired, withinRetention } from '../support/ttl.js';
import { scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';
import { Turns } from '../support/turns.js';
import { fold } from '../../lambdas/core/fold.js';

const RUNS = Number(process.env.FEED_RUNS ?? 15);
// About a second a run here; room for a machine shared with other work.
const TIMEOUT = 60_000 + RUNS * 6_000;
const clock = fixedClock(NOW.toISOString());
const store = useFileStore();

/** Ever public (events: also where, by place feed), over every state the fold passed through. */
function trackPublic(state: FoldState, ever: { events: Set<string>; guests: Set<string>; places: Set<string> }): void {
  for (const [id, v] of state.events) {
    if (!v.record || !isPubliclyVisible(v.record)) continue;
    ever.events.add(id);
    for (const shown of placesShowing(id, v.record.location)) ever.places.add(shown);
  }
  for (const v of state.rsvps.values()) {
    const event = state.events.get(v.record?.event_id ?? '')?.record;
    if (v.record && event && isPubliclyVisible(event) && state.users.get(v.record.user_id)?.record) ever.guests.add(`${v.record.event_id}\u0000${v.record.user_id}`);
  }
}

const loadedTable = (h: History): Promise<string> => store.loaded('feed', h.d0);

/** The scopes a consumer follows: every user id the stream mentions (by their name now), every event, and every place the generator puts events in. */
function scopesOfHistory(table: string, h: History) {
  const userIds = new Set([...h.d0.users.map((u) => u.id), ...h.made.flatMap((c) => ('user' in c ? [c.user.id] : []))]);
  const eventIds = [...new Set([...h.d0.events.map((e) => e.id), ...h.made.flatMap((c) => ('event' in c ? [c.event.id] : []))])];
  return scopesOf(store.client, table, userIds, eventIds, FOLLOWED_PLACES);
}

/** Applies a change with a client that lets the consumer read after every `every`-th call, and goes wrong as `fault` says. */
async function applyObserved(table: string, change: Change, every: number, fault: Fault, consumer: FeedConsumer): Promise<void> {
  await withObservedClient(store.endpoint, every, fault, consumer, (observed) => new ChangeApplier(observed, table, { clock, fanOutConcurrency: 1 }).apply(change));
}

describe('changes feeds: a replica kept by the feeds equals the read routes (fast-check, PRODUCT P16)', () => {
  it('read while changes apply, with crashes and redeliveries: content only as shown, removed bare, never-public ids never, replica = read model', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb({ maxSteps: 8 }), fc.array(fc.nat(60), { minLength: 8, maxLength: 8 }), fc.integer({ min: 3, max: 12 }), fc.constantFrom('FEED#', 'EVENT#', 'USER#'), async (h, crashAt, every, throttled) => {
        const table = await loadedTable(h);
        const repo = new DynamoRepository(store.client, table);
        const consumer = new FeedConsumer(repo, scopesOfHistory(table, h));
        const ever = { events: new Set<string>(), guests: new Set<string>(), places: new Set<string>() };
        const state = initialState(h.d0);
        trackPublic(state, ever);
        await consumer.poll(true);
        for (const [i, change] of h.delivered.entries()) {
          applyChange(state, change);
          trackPublic(state, ever);
          // A third of the changes die after a random call, a third fail a random write without landing, a third meet a
          // throttle window (every call to a kind of partition failing for the whole delivery: a fault that lasts); then,
          // time having passed, TTL deletes what it may, the window has ended, and the change is redelivered. Every change
          // is read during its application.
          const at = crashAt[i % crashAt.length]! + 1;
          await applyObserved(table, change, every, i % 3 === 1 ? { crashAfter: at } : i % 3 === 2 ? { failAt: at } : { throttled }, consumer);
          await sweepExpired(store.client, table, withinRetention(NOW));
          await applyObserved(table, change, every, {}, consumer);
        }
        for (const id of consumer.seen.events) expect({ id, everPublic: ever.events.has(id) }).toEqual({ id, everPublic: true });
        for (const id of consumer.seen.guests) expect({ id, everPublic: ever.guests.has(id) }).toEqual({ id, everPublic: true });
        for (const id of consumer.seen.places) expect({ id, everPublicThere: ever.places.has(id) }).toEqual({ id, everPublicThere: true });

        await sweepExpired(store.client, table, withinRetention(NOW));
        await consumer.drain();
        // Time passed within a cursor's 30 days: no feed asked the consumer to start again.
        expect(consumer.restarts).toBe(0);
        const expected = await expectReplicasMatch(store.client, table, consumer, (await scopesOfHistory(table, h)()).users);
        const publicEvents = new Set(expected.get('catalogue')?.keys() ?? []);

        // A consumer from no cursor: upserts only, each id once, the same contents.
        const fresh = new FeedConsumer(repo, scopesOfHistory(table, h));
        const pages: Change_[] = [];
        let cursor: SealedCursor | undefined;
        for (let more = true; more; ) {
          const answer = await catalogueChanges(feedContext(repo, NOW), { cursor, limit: 2 }, SITE);
          pages.push(...answer.changes);
          cursor = parseCursor(answer.next_cursor)!;
          more = answer.has_more;
        }
        expect(pages.every((c) => c.change === 'upserted')).toBe(true);
        expect(pages.map((c) => c.id).sort()).toEqual([...publicEvents].sort());
        await fresh.drain();
        expect(Object.fromEntries(fresh.replicas.get('catalogue') ?? new Map())).toEqual(Object.fromEntries(expected.get('catalogue') ?? new Map()));
        // A follower of a place from no cursor holds exactly the place's public events.
        for (const [scope, members] of expected) if (scope.startsWith('place:')) expect({ scope, members: Object.fromEntries(fresh.replicas.get(scope) ?? new Map()) }).toEqual({ scope, members: Object.fromEntries(members) });
        // Nothing owes a feed entry once the write side is quiet: a feed note is owed only while a source is pending.
        for (const item of await scanAll(store.client, table)) expect({ key: `${String(item.pk)} ${String(item.sk)}`, pending: item.pending }).toEqual({ key: `${String(item.pk)} ${String(item.sk)}`, pending: undefined });
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it('two appliers applying the same stream at once, call by call in a generated order, while the consumer reads inside their turns: replica = read model', async () => {
    await fc.assert(
      fc.asyncProperty(
        historyArb({ maxSteps: 6 }),
        fc.array(fc.record({ who: fc.nat(1), calls: fc.integer({ min: 1, max: 24 }) }), { maxLength: 10 }).map((bursts) => bursts.flatMap((b) => Array.from({ length: b.calls }, () => b.who))),
        fc.integer({ min: 3, max: 12 }),
        async (h, order, every) => {
          // Changes that would wait for a reference depend on order by definition (P14); the rest must not.
          const sequential = fold(h.d0, h.delivered);
          const stream = h.delivered.filter((_, i) => sequential.outcomes[i]!.result !== 'waiting');
          const table = await loadedTable(h);
          const repo = new DynamoRepository(store.client, table);
          const consumer = new FeedConsumer(repo, scopesOfHistory(table, h));
          await consumer.poll(true);
          const turns = new Turns(order, 2);
          const clients = [0, 1].map((i) => turns.gate(i, store.newClient()));
          let calls = 0;
          // Inside applier 0's turn (added after the gate): the consumer reads between two calls of the appliers.
          clients[0]!.middlewareStack.add(
            (next) => async (args) => {
              if (++calls % every === 0) await consumer.poll();
              return next(args);
            },
            { step: 'initialize', name: 'consumer' },
          );
          try {
            await Promise.all([0, 1].map((i) => turns.run(i, async () => {
              const applier = new ChangeApplier(clients[i]!, table, { clock, fanOutConcurrency: 1 });
              for (const change of stream) await applier.apply(change);
            })));
          } finally {
            for (const c of clients) c.destroy();
          }
          await consumer.drain();
          await expectReplicasMatch(store.client, table, consumer, (await scopesOfHistory(table, h)()).users);
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  }, TIMEOUT);
});
