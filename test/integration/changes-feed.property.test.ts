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
 * Beside the consumer, webhooks (PRODUCT P18, test/support/webhook-world.ts)
 * follow the catalogue (twice: one of a key whose user the stream may
 * delete), a host, a place and a guest list, started from a backfill, a
 * pulled cursor or the next change, delivered whenever the consumer reads;
 * their receivers answer from a generated script (2xx, 5xx, 410, timeouts,
 * dropped connections, a request twice, down for hours), the delivery
 * function dies after generated calls and after a send before recording it,
 * and wake-ups come twice at once. At every send: signed, one in flight,
 * never after the key closed, every change what the read routes show then.
 * Between changes (the write side quiet, the webhooks wherever they are),
 * each receiver's cursor taken to the pull feed continues to its scope's
 * read model; at the end each receiver holds it and a pull from its cursor
 * gives nothing more.
 *
 * FEED_RUNS=200 runs more cases than the default.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
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
import { BEHAVIOURS, WebhookWorld } from '../support/webhook-world.js';
import { expectHandovers, expectReceiversMatch, followScopes, withHookOwners } from '../support/webhook-follow.js';

const RUNS = Number(process.env.FEED_RUNS ?? 15);
// About a second and a half a run here (the webhooks a third of it); room for a machine shared with other work.
const TIMEOUT = 60_000 + RUNS * 10_000;
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

/** The history's first table, with the webhooks' owners and keys (one of them the first user's, whom the stream may delete). */
const loadedTable = (h: History): Promise<string> => store.loaded('feed', withHookOwners(h.d0, h.d0.users[0]!.id));

/** Each run's webhooks, closed with the file (a failing run leaves its own open until then); their counts, printed. */
const worlds: WebhookWorld[] = [];
const openWorld = (table: string, faults: { runs: number[]; dups: boolean[] }) => {
  const world = new WebhookWorld({ newClient: () => store.newClient(), table, start: NOW, runs: faults.runs, dups: faults.dups });
  worlds.push(world);
  return world;
};
afterAll(() => {
  const total = (f: (w: WebhookWorld) => number) => worlds.reduce((n, w) => n + f(w), 0);
  const answers = new Map<string, number>();
  for (const w of worlds) for (const [b, n] of w.receivers.answered) answers.set(b, (answers.get(b) ?? 0) + n);
  process.stdout.write(
    `webhooks beside the feed property: ${worlds.length} runs, ${total((w) => w.receivers.hooks.size)} webhooks (${total((w) => [...w.receivers.hooks.values()].filter((h) => h.dead).length)} closed with their key), ` +
      `${total((w) => w.counts.runs)} delivery runs (${total((w) => w.counts.crashes)} died, ${total((w) => w.counts.overlapsTried)} wake-ups doubled), ${total((w) => w.counts.resumed)} resumes; sends answered ${[...answers].map(([b, n]) => `${b} ${n}`).join(', ')}\n`,
  );
  for (const w of worlds) w.close();
});

/** Receivers' scripts of answers, the delivery function's deaths (after its n-th call; 0: none) and doubled wake-ups. */
const webhookFaults = fc.record({
  scripts: fc.array(fc.array(fc.constantFrom(...BEHAVIOURS), { maxLength: 5 }), { minLength: 6, maxLength: 6 }),
  runs: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 12 })), { maxLength: 12 }),
  dups: fc.array(fc.boolean(), { maxLength: 12 }),
});

/** The scopes a consumer follows: every user id the stream mentions (by their name now), every event, and every place the generator puts events in. */
function scopesOfHistory(table: string, h: History) {
  const userIds = new Set([...h.d0.users.map((u) => u.id), ...h.made.flatMap((c) => ('user' in c ? [c.user.id] : []))]);
  const eventIds = [...new Set([...h.d0.events.map((e) => e.id), ...h.made.flatMap((c) => ('event' in c ? [c.event.id] : []))])];
  return scopesOf(store.client, table, userIds, eventIds, FOLLOWED_PLACES);
}

/** Applies a change with a client that lets the consumer read after every `every`-th call, and goes wrong as `fault` says. */
async function applyObserved(table: string, change: Change, every: number, fault: Fault, consumer: FeedConsumer): Promise<boolean> {
  return withObservedClient(store.endpoint, every, fault, consumer, (observed) => new ChangeApplier(observed, table, { clock, fanOutConcurrency: 1 }).apply(change));
}

describe('changes feeds: a replica kept by the feeds equals the read routes (fast-check, PRODUCT P16)', () => {
  it('read while changes apply, with crashes and redeliveries: content only as shown, removed bare, never-public ids never, replica = read model', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb({ maxSteps: 8 }), fc.array(fc.nat(60), { minLength: 8, maxLength: 8 }), fc.integer({ min: 3, max: 12 }), fc.constantFrom('FEED#', 'EVENT#', 'USER#'), webhookFaults, async (h, crashAt, every, throttled, hooked) => {
        const table = await loadedTable(h);
        const repo = new DynamoRepository(store.client, table);
        const consumer = new FeedConsumer(repo, scopesOfHistory(table, h));
        const world = openWorld(table, hooked);
        const keyHolder = h.d0.users[0]!.id;
        await followScopes(world, { keyHolder, hosts: [h.d0.users[1]?.id ?? keyHolder], places: FOLLOWED_PLACES.slice(0, 1), events: h.d0.events.slice(0, 1).map((e) => e.id) }, hooked.scripts);
        consumer.followers.push(world);
        const ever = { events: new Set<string>(), guests: new Set<string>(), places: new Set<string>() };
        const state = initialState(h.d0);
        trackPublic(state, ever);
        await consumer.poll(true);
        for (const [i, change] of h.delivered.entries()) {
          const outcome = applyChange(state, change);
          trackPublic(state, ever);
          // A third of the changes die after a random call, a third fail a random write without landing, a third meet a
          // throttle window (every call to a kind of partition failing for the whole delivery: a fault that lasts); then,
          // time having passed, TTL deletes what it may, the window has ended, and the change is redelivered. Every change
          // is read during its application.
          const at = crashAt[i % crashAt.length]! + 1;
          await applyObserved(table, change, every, i % 3 === 1 ? { crashAfter: at } : i % 3 === 2 ? { failAt: at } : { throttled }, consumer);
          await sweepExpired(store.client, table, withinRetention(NOW));
          await applyObserved(table, change, every, {}, consumer);
          // The deletion applied: its user's keys, and their webhooks, are closed; no send of theirs may start again.
          if (change.type === 'user.deleted' && outcome.result === 'applied') world.keyClosed(change.user_id);
          // The write side quiet, the webhooks wherever they are: each receiver's cursor continues on the pull feed.
          await expectHandovers(world, store.client, table);
        }
        for (const id of consumer.seen.events) expect({ id, everPublic: ever.events.has(id) }).toEqual({ id, everPublic: true });
        for (const id of consumer.seen.guests) expect({ id, everPublic: ever.guests.has(id) }).toEqual({ id, everPublic: true });
        for (const id of consumer.seen.places) expect({ id, everPublicThere: ever.places.has(id) }).toEqual({ id, everPublicThere: true });
        const pushed = world.receivers.seen;
        for (const id of pushed.events) expect({ id, pushedEverPublic: ever.events.has(id) }).toEqual({ id, pushedEverPublic: true });
        for (const id of pushed.guests) expect({ id, pushedEverPublic: ever.guests.has(id) }).toEqual({ id, pushedEverPublic: true });
        for (const id of pushed.places) expect({ id, pushedEverPublicThere: ever.places.has(id) }).toEqual({ id, pushedEverPublicThere: true });

        await sweepExpired(store.client, table, withinRetention(NOW));
        await consumer.drain();
        // Time passed within a cursor's 30 days: no feed asked the consumer to start again.
        expect(consumer.restarts).toBe(0);
        const expected = await expectReplicasMatch(store.client, table, consumer, (await scopesOfHistory(table, h)()).users);
        // Every webhook delivers what it has left (retries over the hours an endpoint is down, the clock moved): each receiver is its scope.
        await world.drain();
        await expectReceiversMatch(world, store.client, table);
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
