/**
 * The rule of PRODUCT P14, held with random histories against the real table
 * on dynalite: applying a change stream S to a table loaded from D0 gives
 * exactly the read model a fresh load of fold(D0, S) gives (every item apart
 * from bookkeeping), whatever S's duplicates, stale replays and swaps; after
 * every single change no read path reaches a hidden or deleted event, a
 * deleted user, a removed RSVP or a private field; redelivery and two
 * appliers interleaved call by call in generated orders (test/support/turns.ts)
 * converge to the same table, an applier that dies after any call is made
 * whole by the redelivery, and concurrent changes end as if applied in
 * some order; the schedule that opens each race's window is a fixed case too.
 *
 * CHANGE_STREAM_RUNS=500 runs more cases than the default (30), and
 * CHANGE_STREAM_RACE_RUNS the races' (at least 20 by default). The DynamoDB
 * Local project runs a share (test/support/dynamodb-local.env.ts): 8 runs of
 * each, and the crash points FAULT_POINTS=first-of-each-kind picks
 * (test/support/fault-points.ts); `CHANGE_STREAM_RUNS=30
 * CHANGE_STREAM_RACE_RUNS=30 FAULT_POINTS=every` with `--selectProjects
 * dynamodb-local` runs the dynalite project's counts there.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { applyChange, fold, initialState, rsvpKey, stateToDataset, type FoldState } from '../../lambdas/core/fold.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { isPubliclyVisible } from '../../lambdas/store/changes/derive.js';
import { applyUntilCrash as dyingApply } from '../support/crash.js';
import { callKind, faultPoints, faultPointsLine } from '../support/fault-points.js';
import { PRIVATE_MARKER, historyArb, type History } from '../support/change-streams.js';
import { freshLoadReadModel, reachable, readModel, scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';
import { unmarkedShards } from '../support/shard-marks.js';
import { Turns } from '../support/turns.js';

const RUNS = Number(process.env.CHANGE_STREAM_RUNS ?? 30);
const RACE_RUNS = Number(process.env.CHANGE_STREAM_RACE_RUNS ?? Math.max(20, RUNS));
/** Replays a failure fast-check reported: CHANGE_STREAM_SEED and CHANGE_STREAM_PATH, as it prints them. */
const REPLAY = process.env.CHANGE_STREAM_SEED ? { seed: Number(process.env.CHANGE_STREAM_SEED), ...(process.env.CHANGE_STREAM_PATH ? { path: process.env.CHANGE_STREAM_PATH } : {}) } : {};
/** Time for one property: about 150 ms a run here, with room for a slower machine. */
const TIMEOUT = 30_000 + RUNS * 1_000;
const clock = fixedClock('2026-11-21T12:00:00.000Z');
const store = useFileStore({ inProcess: true, direct: true });

const loadedTable = (h: History): Promise<string> => store.loaded('stream', h.d0);

async function expectReadModelOf(table: string, expected: ReturnType<typeof fold>['dataset']): Promise<void> {
  const items = await scanAll(store.client, table);
  expect(unmarkedShards(items)).toEqual([]);
  const actual = readModel(items);
  expect(actual).toEqual(await freshLoadReadModel(store.client, `${table}-fresh`, expected));
}

/** What any GSI reaches must be live and public in the fold's state; no private field is stored anywhere. */
async function expectNothingHiddenReachable(table: string, state: FoldState): Promise<void> {
  const liveUser = (id: unknown) => state.users.get(String(id))?.record !== undefined;
  for (const item of await reachable(store.client, table)) {
    if (item.type === 'USER') {
      // event-index copies no user_id: the username lookup takes the id from the entry's table key, and so does this.
      expect({ key: item.pk, live: liveUser(String(item.pk).replace(/^USER#/, '')) }).toEqual({ key: item.pk, live: true });
      continue;
    }
    const event = state.events.get(String(item.event_id))?.record;
    expect({ item: item.sk, event: item.event_id, public: event !== undefined && isPubliclyVisible(event) }).toEqual({ item: item.sk, event: item.event_id, public: true });
    if (item.type === 'RSVP') {
      const guest = (item.guest as { id: string }).id;
      expect(liveUser(guest) && state.rsvps.get(rsvpKey(String(item.event_id), guest))?.record !== undefined).toBe(true);
    }
    if (item.type === 'PROFILE_ENTRY') expect(liveUser(item.member_id)).toBe(true);
  }
  const items = await scanAll(store.client, table);
  expect(JSON.stringify(items)).not.toContain(PRIVATE_MARKER);
  // Every guest shard holding an item is marked in its event's record (shard-marks.ts): a walk would miss it otherwise.
  expect(unmarkedShards(items)).toEqual([]);
}

/** Which applier's call goes next, as bursts of turns: races need one side to run several calls ahead. */
function turnOrder(appliers: number): fc.Arbitrary<number[]> {
  return fc
    .array(fc.record({ who: fc.nat(appliers - 1), calls: fc.integer({ min: 1, max: 24 }) }), { maxLength: 10 })
    .map((bursts) => bursts.flatMap((b) => Array.from({ length: b.calls }, () => b.who)));
}

/** Applies each change with its own applier, their DynamoDB calls interleaved in the given order. */
async function applyInTurns(table: string, changes: readonly Change[], order: readonly number[]): Promise<void> {
  await appliersInTurns(table, changes.map((c) => [c]), order);
}

/** Each list of changes applied in order by its own applier, all of them at once, calls interleaved in the given order. */
async function appliersInTurns(table: string, work: readonly (readonly Change[])[], order: readonly number[]): Promise<void> {
  const turns = new Turns(order, work.length);
  const clients = work.map((_, i) => turns.gate(i, store.newClient()));
  try {
    await Promise.all(
      work.map((changes, i) =>
        turns.run(i, async () => {
          const applier = new ChangeApplier(clients[i]!, table, { clock, fanOutConcurrency: 1 });
          for (const change of changes) await applier.apply(change);
        }),
      ),
    );
  } finally {
    for (const c of clients) c.destroy();
  }
}

/** Applies a change with an applier that dies right after its `crashAfter`-th DynamoDB call (test/support/crash.ts). */
const applyUntilCrash = (table: string, change: Change, crashAfter: number): Promise<boolean> => dyingApply(store.newClient(), table, change, crashAfter, { clock, fanOutConcurrency: 1 });

/** The kinds of the DynamoDB calls a change makes, in order, when nothing fails (fault-points.ts). */
async function callKinds(table: string, change: Change): Promise<string[]> {
  const counting = store.newClient();
  const kinds: string[] = [];
  counting.middlewareStack.add(
    (next, context) => async (args) => {
      kinds.push(callKind(String(context.commandName), (args as { input: Record<string, unknown> }).input));
      return next(args);
    },
    { step: 'initialize', name: 'callKinds' },
  );
  try {
    await new ChangeApplier(counting, table, { clock, fanOutConcurrency: 1 }).apply(change);
  } finally {
    counting.destroy();
  }
  return kinds;
}

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

describe('change stream: incremental equals full load (fast-check, dynalite)', () => {
  it('after S, the table is the fresh load of fold(D0, S); after every change nothing hidden is reachable', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb(), async (h) => {
        const table = await loadedTable(h);
        const applier = new ChangeApplier(store.client, table, { clock });
        const state = initialState(h.d0);
        for (const change of h.delivered) {
          const expected = applyChange(state, change);
          const got = await applier.apply(change);
          expect(got.result).toBe(expected.result);
          await expectNothingHiddenReachable(table, state);
        }
        await expectReadModelOf(table, stateToDataset(state));
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it('redelivery: the same stream twice gives fold(D0, S ++ S)', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb({ maxSteps: 12 }), async (h) => {
        const table = await loadedTable(h);
        const applier = new ChangeApplier(store.client, table, { clock });
        for (const change of [...h.delivered, ...h.delivered]) await applier.apply(change);
        await expectReadModelOf(table, fold(h.d0, [...h.delivered, ...h.delivered]).dataset);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  }, TIMEOUT);

  it('an applier that dies at any call, then the redelivery, gives fold(D0, S)', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb({ maxSteps: 10 }), fc.array(fc.nat(80), { minLength: 10, maxLength: 10 }), async (h, crashAt) => {
        const table = await loadedTable(h);
        const healthy = new ChangeApplier(store.client, table, { clock });
        for (const [i, change] of h.delivered.entries()) {
          await applyUntilCrash(table, change, crashAt[i % crashAt.length]! + 1);
          const crashed = await scanAll(store.client, table);
          // An unfinished tally note is never on an item that may expire before the note is finished.
          for (const item of crashed) if (item.tally_pending) expect(item.expires_at).toBeUndefined();
          // Whoever died when, no guest shard holds an item its event's record does not mark.
          expect(unmarkedShards(crashed)).toEqual([]);
          await healthy.apply(change);
          // The redelivery finished every note, and every tombstone expires again.
          for (const item of await scanAll(store.client, table)) {
            expect(item.tally_pending).toBeUndefined();
            if (item.type === 'TOMBSTONE') expect(typeof item.expires_at).toBe('number');
          }
        }
        await expectReadModelOf(table, fold(h.d0, h.delivered).dataset);
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  // Every crash point of a few changes with many steps, each followed by the redelivery. The first found a
  // real gap: a crash between a deleted creator's event tombstone and its RSVPs' left the RSVPs live.
  it.each<[string, Change]>([
    ['a creator deleted (cascade to the event and its RSVPs)', { type: 'user.deleted', version: 1, user_id: 'usr_a' }],
    ['an event moved into the next year', { type: 'event.upserted', version: 1, event: { id: 'evt_g', creator_id: 'usr_a', title: 'Gig', start_date: '2027-02-01T20:00:00.000Z', timezone: 'UTC', status: 'published', visibility: 'public', created_at: '2026-11-01T00:00:00.000Z' } }],
    ['a guest renamed (profile entry moves between tallies)', { type: 'user.upserted', version: 1, user: { id: 'usr_b', username: 'bobby' } }],
    ['an event hidden', { type: 'event.upserted', version: 1, event: { id: 'evt_g', creator_id: 'usr_a', title: 'Gig', start_date: '2026-12-01T20:00:00.000Z', timezone: 'UTC', status: 'published', visibility: 'private', created_at: '2026-11-01T00:00:00.000Z' } }],
  ])('every crash point of %s, then the redelivery, gives the fold', async (name, change) => {
    const d0 = {
      users: [{ id: 'usr_a', username: 'alice' }, { id: 'usr_b', username: 'bob' }],
      events: [{ id: 'evt_g', creator_id: 'usr_a', title: 'Gig', start_date: '2026-12-01T20:00:00.000Z', timezone: 'UTC', status: 'published' as const, visibility: 'public' as const, created_at: '2026-11-01T00:00:00.000Z' }],
      rsvps: [{ event_id: 'evt_g', user_id: 'usr_b', status: 'yes' as const, rsvp_date: '2026-11-02T00:00:00.000Z' }],
    };
    const expected = await freshLoadReadModel(store.client, store.nextTable('crash-expected'), fold(d0, [change]).dataset);
    const kinds = await callKinds(await loadedTable({ d0, made: [], delivered: [] }), change);
    const points = new Set(faultPoints(kinds));
    process.stdout.write(faultPointsLine(name, 'calls', kinds, [...points]));
    for (let crashAfter = 1; ; crashAfter++) {
      if (crashAfter <= kinds.length && !points.has(crashAfter)) continue; // FAULT_POINTS left it out
      const table = await loadedTable({ d0, made: [], delivered: [] });
      const finished = await applyUntilCrash(table, change, crashAfter);
      expect({ crashAfter, unmarked: unmarkedShards(await scanAll(store.client, table)) }).toEqual({ crashAfter, unmarked: [] });
      await new ChangeApplier(store.client, table, { clock }).apply(change);
      const items = await scanAll(store.client, table);
      expect({ crashAfter, model: readModel(items), unmarked: unmarkedShards(items) }).toEqual({ crashAfter, model: expected, unmarked: [] });
      if (finished) break; // the change needed fewer calls than crashAfter: every crash point is covered
    }
    // One load and one run per call of the change: a move or a hide makes a hundred calls or so.
  }, 4 * TIMEOUT);

  it('changes applied at once by separate appliers end as if applied one after another, in some order', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb({ maxSteps: 6 }), fc.integer({ min: 2, max: 3 }), turnOrder(3), async (h, n, order) => {
        const changes = h.made.slice(0, n);
        const table = await loadedTable(h);
        await applyInTurns(table, changes, order);
        const items = await scanAll(store.client, table);
        expect(unmarkedShards(items)).toEqual([]);
        const actual = readModel(items);
        const orders = permutations(changes);
        const candidates = await Promise.all(orders.map((order, i) => freshLoadReadModel(store.client, `${table}-order${i}`, fold(h.d0, order).dataset)));
        expect(candidates.some((c) => JSON.stringify(c) === JSON.stringify(actual))).toBe(true);
      }),
      { numRuns: RUNS, ...REPLAY },
    );
  }, TIMEOUT);

  // The races the protocol exists for, each under every interleaving the scheduler tries.
  const alice = { id: 'usr_a', username: 'alice' };
  const bob = { id: 'usr_b', username: 'bob' };
  const gig = { id: 'evt_g', creator_id: 'usr_a', title: 'Gig', start_date: '2026-12-01T20:00:00.000Z', timezone: 'UTC', status: 'published' as const, visibility: 'public' as const, created_at: '2026-11-01T00:00:00.000Z' };
  const d0 = { users: [alice, bob], events: [gig], rsvps: [{ event_id: 'evt_g', user_id: 'usr_b', status: 'yes' as const, rsvp_date: '2026-11-02T00:00:00.000Z' }] };
  const races: Record<string, Change[]> = {
    'an RSVP while its user is deleted': [
      { type: 'rsvp.upserted', version: 2, rsvp: { event_id: 'evt_g', user_id: 'usr_b', status: 'maybe', rsvp_date: '2026-11-03T00:00:00.000Z' } },
      { type: 'user.deleted', version: 1, user_id: 'usr_b' },
    ],
    'a new event while its creator is deleted': [
      { type: 'event.upserted', version: 1, event: { ...gig, id: 'evt_new', creator_id: 'usr_b' } },
      { type: 'user.deleted', version: 1, user_id: 'usr_b' },
    ],
    'an RSVP while its event is deleted': [
      { type: 'rsvp.upserted', version: 3, rsvp: { event_id: 'evt_g', user_id: 'usr_b', status: 'no', rsvp_date: '2026-11-03T00:00:00.000Z' } },
      { type: 'event.deleted', version: 1, event_id: 'evt_g' },
    ],
    'an RSVP flipped and flipped back': [
      { type: 'rsvp.upserted', version: 2, rsvp: { event_id: 'evt_g', user_id: 'usr_b', status: 'no', rsvp_date: '2026-11-03T00:00:00.000Z' } },
      { type: 'rsvp.upserted', version: 3, rsvp: { event_id: 'evt_g', user_id: 'usr_b', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' } },
    ],
    'two moves of one event across months and years, and a hide': [
      { type: 'event.upserted', version: 1, event: { ...gig, start_date: '2027-01-15T20:00:00.000Z' } },
      { type: 'event.upserted', version: 2, event: { ...gig, start_date: '2026-10-31T23:59:59.999Z' } },
      { type: 'event.upserted', version: 3, event: { ...gig, start_date: '2027-01-15T20:00:00.000Z', visibility: 'private' } },
    ],
    'a rename, an RSVP flip and a hide of one event': [
      { type: 'user.upserted', version: 1, user: { ...bob, username: 'bobby' } },
      { type: 'rsvp.upserted', version: 4, rsvp: { event_id: 'evt_g', user_id: 'usr_b', status: 'no', rsvp_date: '2026-11-03T00:00:00.000Z' } },
      { type: 'event.upserted', version: 1, event: { ...gig, visibility: 'private' } },
    ],
  };
  it.each(Object.keys(races))('races: %s', async (name) => {
    const changes = races[name]!;
    const orders = permutations(changes);
    const table0 = await loadedTable({ d0, made: [], delivered: [] });
    const candidates = await Promise.all(orders.map(async (order, i) => JSON.stringify(await freshLoadReadModel(store.client, `${table0}-order${i}`, fold(d0, order).dataset))));
    await fc.assert(
      fc.asyncProperty(turnOrder(changes.length), async (order) => {
        const table = await loadedTable({ d0, made: [], delivered: [] });
        await applyInTurns(table, changes, order);
        const items = await scanAll(store.client, table);
        expect(unmarkedShards(items)).toEqual([]);
        expect(candidates).toContain(JSON.stringify(readModel(items)));
      }),
      { numRuns: RACE_RUNS },
    );
    // Twenty runs or more of up to three changes that each derive several units: on DynamoDB Local this takes its time.
  }, 4 * TIMEOUT);

  // Schedules that hit each race's window exactly (found by logging the calls), kept as fixed cases.
  it.each<[string, number[]]>([
    ['an RSVP while its user is deleted', [0, 0, 0, ...Array<number>(20).fill(1)]],
    ['a new event while its creator is deleted', [0, 0, ...Array<number>(20).fill(1)]],
    ['an RSVP while its event is deleted', [0, 0, 0, 0, ...Array<number>(20).fill(1)]],
    // The first derivation reads before the flip back and writes after the second found nothing to change.
    ['an RSVP flipped and flipped back', [...Array<number>(10).fill(0), ...Array<number>(20).fill(1)]],
  ])('races, the worst schedule: %s', async (name, order) => {
    const changes = races[name]!;
    const table = await loadedTable({ d0, made: [], delivered: [] });
    await applyInTurns(table, changes, order);
    const candidates = await Promise.all(permutations(changes).map(async (o, i) => JSON.stringify(await freshLoadReadModel(store.client, `${table}-order${i}`, fold(d0, o).dataset))));
    expect(candidates).toContain(JSON.stringify(readModel(await scanAll(store.client, table))));
  });

  it('two appliers interleaved call by call converge to fold(D0, S)', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb({ maxSteps: 12 }), turnOrder(2), async (h, order) => {
        // Changes that would wait for a reference depend on order by definition (P14); the rest must not.
        const sequential = fold(h.d0, h.delivered);
        const stream: Change[] = h.delivered.filter((_, i) => sequential.outcomes[i]!.result !== 'waiting');
        const table = await loadedTable(h);
        await appliersInTurns(table, [stream, stream], order);
        await expectReadModelOf(table, fold(h.d0, stream).dataset);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  }, TIMEOUT);
});
