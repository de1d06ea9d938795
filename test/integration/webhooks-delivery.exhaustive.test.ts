/**
 * A webhook's deliveries explored exhaustively, not sampled (PRODUCT P18),
 * on small scenarios with the real engine, table and change path
 * (test/support/webhook-world.ts): for the first run of the delivery
 * function after a change, every point between its DynamoDB calls where
 * it dies (the call landed), every answer its receiver may give the first
 * send (2xx, 5xx, 410, a timeout at the guard's deadline, an answer after
 * it, a dropped connection, a lost 2xx, a request taken twice, a crash of
 * ours after sending and before recording, down for hours), the run's
 * wake-up delivered twice at once, and every point between its calls where
 * the next change of the scenario lands; then every webhook delivers what
 * it has left (the clock moved to each retry). Checked at every send (the
 * world's referee: signed, one in flight, content as the read routes show
 * it then, never after the key closed) and at the end: the receiver, and
 * its idempotent copy, equal the scope's read route, and a pull from its
 * cursor gives nothing more.
 *
 * Depth (SCHEDULES_DEPTH, as for the write side's explorations):
 * - `quick` and `default` (npm test, on both stores): each fault alone (each
 *   crash point, each answer, each answer with the wake-up doubled, each
 *   point the next change lands): a quick share, since the pairs below
 *   would add minutes to a suite held under 15 on 2 cores;
 * - `deep`: also every crash point and every answer with the next change
 *   landing at every point of the run;
 * - `exhaustive`: also every crash point with every answer, at every point
 *   the next change lands.
 * Each scenario prints its number of schedules.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import type { WebhookScope } from '../../lambdas/core/webhook-rules.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { FEED_NOW as NOW } from '../support/feed-consumer.js';
import { useFileStore } from '../support/store.js';
import { OWNER, expectReceiversMatch, scenarioEvent, seededTables } from '../support/webhook-follow.js';
import { BEHAVIOURS, WebhookWorld, type Behaviour } from '../support/webhook-world.js';

const DEPTH = (['quick', 'default', 'deep', 'exhaustive'] as const).find((d) => d === process.env.SCHEDULES_DEPTH) ?? 'default';
const store = useFileStore({ inProcess: true, direct: true });
const clock = fixedClock(NOW.toISOString());

const event = scenarioEvent;
const gig = event('evt_gig', 'usr_ann');
const talk = event('evt_talk', 'usr_ann', { location: null });
const users = [
  { id: 'usr_ann', username: 'ann' },
  { id: 'usr_bob', username: 'bob' },
];

interface Scenario {
  name: string;
  d0: Dataset;
  scope: WebhookScope;
  /** The name of its scope in the read model (feed-consumer.ts, expectedScopes). */
  scopeName: string;
  start: 'backfill' | 'next';
  /** Applied before the first run (what it delivers). */
  before: Change[];
  /** Lands at the explored point of the first run, or after it. */
  during: Change;
  /** Applied once the first run is over, before the rest is delivered. */
  after: Change[];
}

const scenarios: Scenario[] = [
  {
    name: 'an edit delivered while the event is hidden (catalogue, from the next change)',
    d0: { users, events: [gig], rsvps: [] },
    scope: { type: 'catalogue' },
    scopeName: 'catalogue',
    start: 'next',
    before: [{ type: 'event.upserted', version: 1, event: { ...gig, title: 'Gig, later' } }],
    during: { type: 'event.upserted', version: 2, event: { ...gig, title: 'Gig, later', visibility: 'private' } },
    after: [],
  },
  {
    name: "a backfill while an event is deleted and the other moves away (a place's feed)",
    d0: { users, events: [gig, { ...talk, location: { name: 'Hall', city: 'lisbon', country: null } }], rsvps: [] },
    scope: { type: 'place', city: 'LISBON' },
    scopeName: 'place:*#lisbon',
    start: 'backfill',
    before: [],
    during: { type: 'event.deleted', version: 1, event_id: 'evt_gig' },
    after: [{ type: 'event.upserted', version: 1, event: { ...talk, location: { name: 'Casa', city: 'Porto', country: null } } }],
  },
  {
    name: 'a guest list hidden with its event while a guest comes, then shown again (guests, backfilled)',
    d0: { users, events: [gig], rsvps: [{ event_id: 'evt_gig', user_id: 'usr_ann', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' }] },
    scope: { type: 'guests', eventId: 'evt_gig' },
    scopeName: 'guests:evt_gig',
    start: 'backfill',
    before: [{ type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_gig', user_id: 'usr_bob', status: 'maybe', rsvp_date: '2026-11-03T00:00:00.000Z' } }],
    during: { type: 'event.upserted', version: 1, event: { ...gig, visibility: 'private' } },
    after: [
      { type: 'rsvp.upserted', version: 2, rsvp: { event_id: 'evt_gig', user_id: 'usr_bob', status: 'yes', rsvp_date: '2026-11-03T00:00:00.000Z' } },
      { type: 'event.upserted', version: 2, event: gig },
    ],
  },
];

interface Schedule {
  /** The first run dies right after this call (0: it does not). */
  crashAfter: number;
  /** What the receiver answers the first send. */
  answer: Behaviour;
  /** The first run's wake-up delivered twice at once. */
  doubled: boolean;
  /** The `during` change lands after this call of the first run (0: before it; past its calls: after it). */
  landsAfter: number;
}

const describeSchedule = (s: Schedule) => `dies after call ${s.crashAfter || 'none'}, answers ${JSON.stringify(s.answer)}${s.doubled ? ', its wake-up doubled' : ''}, the change lands after call ${s.landsAfter}`;

const freshTable = seededTables<Scenario>(store, 'hooks');

/** Runs one schedule from the scenario's data; answers the first run's number of calls. */
async function run(sc: Scenario, s: Schedule): Promise<number> {
  const table = await freshTable(sc);
  const apply = async (change: Change) => {
    const client = world.watch(store.newClient());
    try {
      await new ChangeApplier(client, table, { clock }).apply(change);
    } finally {
      client.destroy();
    }
  };
  let landed = false;
  const land = async () => {
    if (landed) return;
    landed = true;
    // A send of the run going on may carry what the read routes showed before this change or after it, nothing older.
    await world.receivers.writeSideMoves();
    await apply(sc.during);
  };
  const world: WebhookWorld = new WebhookWorld({
    newClient: () => store.newClient(),
    table,
    start: NOW,
    runs: [s.crashAfter],
    dups: [s.doubled],
    between: async (r, call) => (r === 0 && call === s.landsAfter ? land() : undefined),
  });
  try {
    const hook = await world.create(OWNER.userId, OWNER.keyId, sc.scope, sc.scopeName, sc.start, [s.answer]);
    if (!hook) throw new Error(`${sc.name}: the webhook was refused`);
    for (const change of sc.before) await apply(change);
    if (s.landsAfter === 0) await land();
    await world.step();
    await land();
    for (const change of sc.after) await apply(change);
    await world.drain();
    await expectReceiversMatch(world, store.client, table);
    return world.callsOfRun[0] ?? 0;
  } catch (error) {
    throw new Error(`${sc.name}: ${describeSchedule(s)}\n${(error as Error).message}`);
  } finally {
    world.close();
  }
}

const counts: string[] = [];
afterAll(() => {
  process.stdout.write(`webhook deliveries explored (${DEPTH}):\n  ${counts.join('\n  ')}\n`);
});

describe('webhook deliveries, every crash point, answer and landing point: the receiver equals its scope (PRODUCT P18)', () => {
  for (const sc of scenarios) {
    it(sc.name, async () => {
      const none: Schedule = { crashAfter: 0, answer: 'ok', doubled: false, landsAfter: 0 };
      // The first run's calls when the change lands after it: the points to explore.
      const calls = await run(sc, { ...none, landsAfter: Number.MAX_SAFE_INTEGER });
      expect(calls).toBeGreaterThan(2);
      const points = Array.from({ length: calls }, (_, i) => i + 1);
      const landings = [0, ...points, Number.MAX_SAFE_INTEGER];
      const schedules: Schedule[] = [];
      const after = Number.MAX_SAFE_INTEGER;
      for (const k of points) schedules.push({ ...none, crashAfter: k, landsAfter: after });
      for (const b of BEHAVIOURS) schedules.push({ ...none, answer: b, landsAfter: after });
      for (const b of BEHAVIOURS) schedules.push({ ...none, answer: b, doubled: true, landsAfter: after });
      for (const i of landings) schedules.push({ ...none, landsAfter: i });
      if (DEPTH === 'deep' || DEPTH === 'exhaustive') {
        for (const i of landings) for (const k of points) schedules.push({ ...none, crashAfter: k, landsAfter: i });
        for (const i of landings) for (const b of BEHAVIOURS) schedules.push({ ...none, answer: b, landsAfter: i });
      }
      if (DEPTH === 'exhaustive') {
        for (const i of landings) for (const k of points) for (const b of BEHAVIOURS) schedules.push({ crashAfter: k, answer: b, doubled: false, landsAfter: i });
      }
      for (const s of schedules) await run(sc, s);
      counts.push(`${sc.name}: ${schedules.length + 1} schedules (the first run makes ${calls} calls)`);
    }, DEPTH === 'exhaustive' ? 3_600_000 : 600_000);
  }
});
