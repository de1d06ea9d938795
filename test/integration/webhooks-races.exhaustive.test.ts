/**
 * Webhooks under the write side's races, explored exhaustively, not sampled
 * (PRODUCT P14 and P18): two changes applied by two appliers at once, the
 * first stopped after each of its DynamoDB calls in turn (every pause
 * point, the call landed), the second applied whole meanwhile; and the
 * first's delivery dying after each of its writes in turn, the second
 * applied, then the first delivered again (the stream's redelivery); every
 * webhook delivering at the pause (reading the feeds while the first change
 * is half applied), after the second change, and to the end once the first
 * resumes; both orders of each pair. Webhooks follow every scope the
 * changes touch (the catalogue, the host, the place, the guest list; each
 * start in turn: backfilled, handed over from a pull, from the next
 * change), through the real engine, table and change path
 * (test/support/webhook-world.ts). Checked at every send (the world's
 * referee: signed, one in flight, content as the read routes show it then)
 * and at the end: each receiver, and its idempotent copy, equals its
 * scope's read route, and a pull from its cursor gives nothing more.
 *
 * The write side's own explorations (schedules-*.exhaustive.test.ts) hold
 * the read model and the feeds read from no cursor under the same races;
 * this file holds what a follower of the feeds by push sees of them. Each
 * pair prints its number of schedules.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { DeliveryState } from '../../lambdas/store/webhooks/delivery-state.js';
import { FEED_NOW as NOW } from '../support/feed-consumer.js';
import { useFileStore } from '../support/store.js';
import { OWNER, expectReceiversMatch, followScopes, scenarioEvent, seededTables, type Following } from '../support/webhook-follow.js';
import { WebhookWorld } from '../support/webhook-world.js';
import { allScenarios } from '../support/schedule-catalog.js';

/** SCHEDULES_DEPTH=deep (or exhaustive) adds the catalog's triples: every ordered pair of their changes racing, the third after. */
const DEEP = process.env.SCHEDULES_DEPTH === 'deep' || process.env.SCHEDULES_DEPTH === 'exhaustive';

const store = useFileStore({ inProcess: true, direct: true });
const clock = fixedClock(NOW.toISOString());

/** In Lisbon, Portugal: a city and a country to follow. */
const event = (id: string, creator: string, more: Partial<SourceEvent> = {}): SourceEvent => scenarioEvent(id, creator, { location: { name: 'Club', city: 'Lisbon', country: 'PT' }, ...more });
const gig = event('evt_gig', 'usr_ann');
const users = [
  { id: 'usr_ann', username: 'ann' },
  { id: 'usr_bob', username: 'bob' },
];
const rsvp = (user_id: string, status: 'yes' | 'maybe' | 'no', day: number) => ({ event_id: 'evt_gig', user_id, status, rsvp_date: `2026-11-0${day}T00:00:00.000Z` });
interface Race {
  name: string;
  d0: Dataset;
  /** In the order the source made them; two race, the rest (a triple's third) follow once both are done. */
  changes: Change[];
}

/** Every scope the race touches: each user as a host, each event's guest list, each place its events are or go. */
function followingOf(race: Race): Following {
  const events = [...race.d0.events, ...race.changes.flatMap((c) => ('event' in c ? [c.event] : []))];
  const users = [...race.d0.users.map((u) => u.id), ...race.changes.flatMap((c) => ('user' in c ? [c.user.id] : []))];
  const places = new Map<string, { city?: string; country?: string }>();
  for (const e of events) {
    if (e.location?.city) places.set(`city:${e.location.city.trim().toLowerCase()}`, { city: e.location.city });
    if (e.location?.country) places.set(`country:${e.location.country.trim().toLowerCase()}`, { country: e.location.country });
  }
  return { hosts: [...new Set(users)], events: [...new Set(events.map((e) => e.id))], places: [...places.values()] };
}

const races: Race[] = [
  {
    name: "an edit and a hide of one event (the hide's version higher)",
    d0: { users, events: [gig], rsvps: [rsvp('usr_bob', 'yes', 2)] },
    changes: [
      { type: 'event.upserted', version: 1, event: { ...gig, title: 'Gig, later' } },
      { type: 'event.upserted', version: 2, event: { ...gig, visibility: 'private' } },
    ],
  },
  {
    name: "an event moving to another city and country, and a guest's RSVP to it",
    d0: { users, events: [gig], rsvps: [] },
    changes: [
      { type: 'event.upserted', version: 1, event: { ...gig, location: { name: 'Bar', city: 'Madrid', country: 'ES' } } },
      { type: 'rsvp.upserted', version: 1, rsvp: rsvp('usr_bob', 'maybe', 3) },
    ],
  },
  {
    name: 'a host renamed while a new event of theirs comes',
    d0: { users, events: [gig], rsvps: [] },
    changes: [
      { type: 'user.upserted', version: 1, user: { id: 'usr_ann', username: 'annie' } },
      { type: 'event.upserted', version: 1, event: event('evt_talk', 'usr_ann', { title: 'Talk' }) },
    ],
  },
  {
    name: 'an event deleted while its guest changes their answer',
    d0: { users, events: [gig], rsvps: [rsvp('usr_bob', 'yes', 2)] },
    changes: [
      { type: 'event.deleted', version: 2, event_id: 'evt_gig' },
      { type: 'rsvp.upserted', version: 2, rsvp: rsvp('usr_bob', 'no', 4) },
    ],
  },
];

const freshTable = seededTables<Race>(store, 'races');

/** A client that holds every call after its `pauseAfter`-th until released; `reached` once the first `pauseAfter` have landed and the next waits (or the change ended). */
function pausingClient(client: DynamoDBDocumentClient, pauseAfter: number) {
  let issued = 0;
  let landed = 0;
  let waiting = false;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reach!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const check = () => (waiting && landed === pauseAfter ? reach() : undefined);
  client.middlewareStack.add(
    (next) => async (args) => {
      if (++issued > pauseAfter) {
        waiting = true;
        check();
        await gate;
      }
      const out = await next(args);
      landed++;
      check();
      return out;
    },
    { step: 'initialize', name: 'race-pause' },
  );
  return { reached, release, calls: () => issued };
}

class Crash extends Error {
  override readonly name = 'RaceCrash';
}
const WRITES = /Put|Update|Delete|BatchWrite|TransactWrite/;

/** A client whose delivery dies right after its `crashAfter`-th write landed: that call and every later one throw, nothing more is sent. */
function crashingClient(client: DynamoDBDocumentClient, crashAfter: number) {
  let writes = 0;
  let dead = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (dead) throw new Crash('the delivery died');
      const out = await next(args);
      if (WRITES.test(String(context.commandName)) && ++writes === crashAfter) {
        dead = true;
        throw new Crash(`died after its write ${writes}`);
      }
      return out;
    },
    { step: 'initialize', name: 'race-crash' },
  );
  return { writes: () => writes };
}

/**
 * Runs one schedule and answers the first change's calls (`pause`) or writes (`crash`). `pause`: the first change
 * stopped after its `at`-th call, the second applied whole meanwhile, then the first goes on. `crash`: the first
 * change's delivery dies right after its `at`-th write landed, the second is applied whole, then the first is
 * delivered again (the stream's redelivery), whole.
 */
async function run(race: Race, order: readonly [number, number], at: number, mode: 'pause' | 'crash' = 'pause'): Promise<number> {
  const pauseAfter = mode === 'pause' ? at : Number.MAX_SAFE_INTEGER;
  const rest = race.changes.filter((_, i) => !order.includes(i));
  const table = await freshTable(race);
  const world = new WebhookWorld({ newClient: () => store.newClient(), table, start: NOW });
  const [first, second] = [race.changes[order[0]]!, race.changes[order[1]]!];
  const where = `${race.name}: change ${order[0]} ${mode === 'pause' ? `paused after its call ${at}` : `dead after its write ${at}, redelivered after`}, change ${order[1]} applied meanwhile${rest.length ? ', the rest after' : ''}`;
  const clients: DynamoDBDocumentClient[] = [];
  const watched = () => {
    const c = world.watch(store.newClient());
    clients.push(c);
    return c;
  };
  try {
    const hooks = await followScopes(world, followingOf(race));
    await world.drain();
    const sends = () => [...world.receivers.answered.values()].reduce((a, b) => a + b, 0);
    const sentBefore = sends();
    const client = watched();
    const pause = pausingClient(client, pauseAfter);
    const crash = crashingClient(client, mode === 'crash' ? at : Number.MAX_SAFE_INTEGER);
    const running = new ChangeApplier(client, table, { clock }).apply(first).catch((error: Error) => {
      if (error.name !== 'RaceCrash') throw error;
      return 'died' as const;
    });
    // Paused indeed, unless the change makes no more calls than that.
    if ((await Promise.race([pause.reached.then(() => 'paused'), running.then(() => 'ended')])) === 'ended') expect(pause.calls()).toBeLessThanOrEqual(pauseAfter);
    // The webhooks deliver with the first change half applied, again once the second has landed, then to the end.
    await world.step();
    await new ChangeApplier(watched(), table, { clock }).apply(second);
    await world.step();
    pause.release();
    if ((await running) === 'died') await new ChangeApplier(watched(), table, { clock }).apply(first);
    for (const change of rest) await new ChangeApplier(watched(), table, { clock }).apply(change);
    await world.drain();
    await expectReceiversMatch(world, store.client, table);
    // Every scope followed (a guest list only while its event is public), and the changes delivered, not only made.
    expect({ webhooks: hooks.length > 2, delivered: sends() > sentBefore }).toEqual({ webhooks: true, delivered: true });
    return mode === 'pause' ? pause.calls() : crash.writes();
  } catch (error) {
    throw new Error(`${where}\n${(error as Error).message}`);
  } finally {
    for (const c of clients) c.destroy();
    world.close();
  }
}

const counts: string[] = [];
afterAll(() => {
  process.stdout.write(`webhooks under the write side's races:\n  ${counts.join('\n  ')}\n`);
});

/** The four pairs above, and the write side's catalog of races (test/support/schedule-catalog.ts): its pairs, and at depth deep its triples. */
const explored: Race[] = [...races, ...allScenarios().filter((sc) => sc.changes.length === 2 || DEEP)];

describe("webhooks under two changes racing, every pause point and crash point of either: each receiver equals its scope (PRODUCT P14, P18)", () => {
  for (const race of explored) {
    it(race.name, async () => {
      let schedules = 0;
      const calls: number[] = [];
      const orders = race.changes.flatMap((_, a) => race.changes.map((__, b) => [a, b] as const)).filter(([a, b]) => a !== b);
      for (const order of orders) {
        // The first change's calls when it is not paused at all: the points to explore.
        const n = await run(race, order, Number.MAX_SAFE_INTEGER);
        expect(n).toBeGreaterThan(2);
        calls.push(n);
        for (let k = 0; k <= n; k++) await run(race, order, k);
        // Its delivery dying after each of its writes, redelivered once the other has landed.
        const w = await run(race, order, Number.MAX_SAFE_INTEGER, 'crash');
        for (let k = 1; k <= w; k++) await run(race, order, k, 'crash');
        schedules += n + 2 + w + 1;
      }
      counts.push(`${race.name}: ${schedules} schedules (the first change makes ${calls.join(', ')} calls in the orders explored)`);
    }, 600_000);
  }
});

/**
 * A revoke landing at every point of a delivery run: the key's webhooks (each scope the change touches) are woken by it, and the key is
 * revoked (through the key manager, which closes its webhooks before it answers) right after each DynamoDB call of
 * the first run in turn, and before it. From the revoke's answer on no send of theirs may start (the referee's
 * rule, checked at every send); each webhook ends closed with its key, and the world drains with nothing due.
 */
describe('a revoke at every point of a delivery run: no send starts after it answers (PRODUCT P18)', () => {
  it('every call of every run after a change, the revoke landing after it', async () => {
    const race = races[0]!;
    const change = race.changes[0]!;
    /** The revoke lands after call `revokeAfter` of the `nth` run after the change (0: before it); answers that run's calls. */
    const once = async (nth: number, revokeAfter: number): Promise<number> => {
      const table = await freshTable(race);
      let revoked = false;
      const revoke = async () => {
        if (revoked) return;
        revoked = true;
        await new KeyManager(store.client, table, { clock: world.clock }).revoke(OWNER.userId, OWNER.keyId);
        world.keyClosed(OWNER.userId, OWNER.keyId);
      };
      let firstRun = Number.MAX_SAFE_INTEGER;
      const world: WebhookWorld = new WebhookWorld({ newClient: () => store.newClient(), table, start: NOW, between: async (r, call) => (r === firstRun + nth && call === revokeAfter ? revoke() : undefined) });
      const client = world.watch(store.newClient());
      try {
        // Six webhooks (the catalogue, two hosts, the city, the country, the guest list), their backfills and starts
        // delivered; the next run is the first after the change.
        const hooks = await followScopes(world, followingOf(race));
        await world.drain();
        expect(hooks).toHaveLength(6);
        firstRun = world.counts.runs;
        await new ChangeApplier(client, table, { clock }).apply(change);
        if (revokeAfter === 0) await revoke();
        await world.drain();
        await revoke();
        await world.drain();
        expect(world.receivers.violations.slice(0, 5)).toEqual([]);
        const state = new DeliveryState(store.client, table);
        for (const h of hooks) expect({ hook: h.name, closed: (await state.webhook(h.id))?.key_closed }).toEqual({ hook: h.name, closed: true });
        return world.callsOfRun[firstRun + nth] ?? 0;
      } catch (error) {
        throw new Error(`the revoke after call ${revokeAfter} of run ${nth} after the change:\n${(error as Error).message}`);
      } finally {
        client.destroy();
        world.close();
      }
    };
    // Each run after the change (one a webhook it woke, in the queue's order, until there are no more), each of its calls.
    let schedules = 0;
    const made: number[] = [];
    for (let nth = 0; ; nth++) {
      const calls = await once(nth, Number.MAX_SAFE_INTEGER);
      schedules++;
      if (calls === 0) break;
      made.push(calls);
      for (let k = nth === 0 ? 0 : 1; k <= calls; k++) await once(nth, k);
      schedules += calls + (nth === 0 ? 1 : 0);
    }
    // The edit wakes the catalogue's, the host's, the city's and the country's webhooks (not the guest list's).
    expect(made).toHaveLength(4);
    counts.push(`a revoke at every point of the delivery runs after a change: ${schedules} schedules (its ${made.length} runs make ${made.join(', ')} calls)`);
  }, 600_000);
});
