/**
 * Write side: duplicates at once and lost responses, as fixed cases (the
 * exploration, test/support/schedule-catalog.ts, generates both shapes for
 * every scenario of its catalog). Each `it` states a claim of
 * docs/data-model.md ("A settle clears `pending` only on its own finished
 * derivations", "Lost responses and retries", "A completed change hides for
 * good") and a schedule that broke it before.
 *
 * A. A derivation that finds a newer number taken leaves its unit to it. When
 *    that newer number belongs to a second applier settling the SAME pending
 *    source item (an SQS duplicate, or an old record replayed: both settle the
 *    pending item first) and that applier dies right after taking it, the
 *    first applier must not clear `pending` on the hand-off's word: the dead
 *    applier's redelivery would find nothing pending and do nothing.
 * B. A conditional write that lands but whose response is lost is retried by
 *    the SDK; the retry fails its condition, and the applier must recognise
 *    its own write (its `gen`) instead of reading it as a newer derivation's.
 */
import { describe, expect, it } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { fold } from '../../lambdas/core/fold.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { createDocumentClient, createWriteClient } from '../../lambdas/store/table/client.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { freshLoadReadModel, readModel, scanAll } from '../support/read-model.js';
import { CallQueue } from '../support/call-queue.js';
import { heldConnections, loseResponse } from '../support/lost-response.js';
import { useFileStore } from '../support/store.js';

const clock = fixedClock('2026-11-21T12:00:00.000Z');
const store = useFileStore();

const loaded = (d0: Dataset): Promise<string> => store.loaded('review', d0);
const applier = (table: string, c: DynamoDBDocumentClient = store.client) => new ChangeApplier(c, table, { clock, fanOutConcurrency: 1 });
const model = async (table: string) => readModel(await scanAll(store.client, table));
const expected = async (d0: Dataset, s: Change[]) => freshLoadReadModel(store.client, store.nextTable('review-exp'), fold(d0, s).dataset);
const owed = async (table: string) => (await scanAll(store.client, table)).filter((i) => i.pending || i.tally_pending).map((i) => `${String(i.pk)} ${String(i.sk)}`);

type Input = { Key?: Record<string, unknown>; Item?: Record<string, unknown>; UpdateExpression?: string };
/** A key attribute as the document store.client or the marshalled request carries it. */
const sk = (input: Input) => {
  const v = (input.Key ?? input.Item)?.sk as unknown;
  return typeof v === 'string' ? v : ((v as { S?: string } | undefined)?.S ?? '');
};
const isIncrementOf = (key: string) => (name: string, input: Input) => /Update/.test(name) && sk(input) === key && /ADD #n/.test(input.UpdateExpression ?? '');

/**
 * Applier P: pauses once its first call matching `at` has landed, with the calls sent together with it (its wave:
 * the write side sends independent calls at once) landed too, until `release`.
 * Applier R: dies right after its first call matching `at` lands (the call is on the table); it sends its calls one
 * at a time, first sent first (CallQueue, as in the explorations), so what else of its wave landed is the calls sent
 * before the matched one, whatever the I/O timing, and nothing after it leaves.
 *
 * P's pause is at the wave, not the call: "right after the call lands" would otherwise depend on I/O timing (the
 * change's own source write, sent with its SEQ number, could still be on its way when P pauses). Every call P has in
 * flight once the matched one lands is held after landing; with every answer held it cannot send the next wave.
 */
function pauseAndCrash(at: (name: string, input: Input) => boolean) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const paused = new Promise<void>((r) => (reached = r));
  const p = createDocumentClient({ endpoint: store.endpoint });
  let matched = false;
  let inFlight = 0;
  let held = 0;
  const settleIfAllHeld = () => {
    if (held === inFlight) reached();
  };
  p.middlewareStack.add(
    (next, context) => async (args) => {
      inFlight++;
      try {
        const out = await next(args);
        if (!matched && at(String(context.commandName), args.input as Input)) matched = true;
        if (matched) {
          held++;
          settleIfAllHeld();
          await gate;
        }
        return out;
      } finally {
        inFlight--;
        if (matched) settleIfAllHeld();
      }
    },
    { step: 'initialize', name: 'pause' },
  );
  const r = createDocumentClient({ endpoint: store.endpoint });
  const rQueue = new CallQueue();
  r.middlewareStack.add(
    (next, context) => async (args) => {
      await rQueue.turn();
      try {
        const out = await next(args);
        if (at(String(context.commandName), args.input as Input)) {
          const crash = new Error('crash');
          rQueue.die(crash); // its process is gone: nothing it had not sent lands
          throw crash;
        }
        return out;
      } finally {
        rQueue.done();
      }
    },
    { step: 'initialize', name: 'crash' },
  );
  return { p, r, paused, release, close: () => [p, r].forEach((c) => c.destroy()) };
}

/** Runs P until it pauses, R whole (it dies), then P to its end. */
async function race(table: string, first: Change, second: Change, at: (name: string, input: Input) => boolean) {
  const { p, r, paused, release, close } = pauseAndCrash(at);
  try {
    const running = applier(table, p).apply(first);
    await paused;
    await expect(applier(table, r).apply(second)).rejects.toThrow('crash');
    release();
    return await running;
  } finally {
    close();
  }
}

const alice = { id: 'usr_a', username: 'alice', name: 'Alice' };
const bob = { id: 'usr_b', username: 'bob', name: 'Bob' };
const carol = { id: 'usr_c', username: 'carol', name: 'Carol Private', image: 'https://img.example/carol.png' };
const gig = { id: 'evt_g', creator_id: 'usr_a', title: 'Gig', start_date: '2026-12-01T20:00:00.000Z', timezone: 'UTC', status: 'published' as const, visibility: 'public' as const, created_at: '2026-11-01T00:00:00.000Z' };
const d0: Dataset = { users: [alice, bob, carol], events: [gig], rsvps: [{ event_id: 'evt_g', user_id: 'usr_c', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' }] };

describe('A: a dead duplicate takes the work the live applier handed to it', () => {
  it('A1 data leak: a deleted user stays on a public guest list and profile list for good (duplicate delivery dies after its SEQ#{user} number)', async () => {
    const del: Change = { type: 'user.deleted', version: 1, user_id: 'usr_c' };
    const table = await loaded(d0);
    // P (first delivery) takes SEQ#usr_c = 1 and pauses before its read; R (SQS duplicate) settles the same pending
    // tombstone, takes SEQ#usr_c = 2 and dies; P reads seq 2 > 1 and leaves the unit to R, so it must not clear pending.
    expect(await race(table, del, del, isIncrementOf('SEQ#usr_c'))).toMatchObject({ result: 'applied' });
    expect(await applier(table).apply(del)).toMatchObject({ result: 'stale' }); // R's redelivery: nothing pending, nothing done
    const repo = new DynamoRepository(store.client, table);
    const guests = (await repo.getGuests('evt_g', 'all', 100)).map((g) => g.guest);
    const profile = (await repo.listUserEvents('carol', 'PROFILE', {})).map((e) => e.event_id);
    expect({ guests, profile, owed: await owed(table) }).toEqual({ guests: [], profile: [], owed: [] });
  });

  it('A2 lost update: a title edit is acknowledged and never shown (an old record replayed dies after its SEQ number)', async () => {
    const v1: Change = { type: 'event.upserted', version: 1, event: { ...gig, title: 'Gig (first draft)' } };
    const v2: Change = { type: 'event.upserted', version: 2, event: { ...gig, title: 'Gig: moved to the big hall' } };
    const table = await loaded(d0);
    await applier(table).apply(v1);
    // P applies v2; v1 is replayed meanwhile (at-least-once), settles v2's pending item first, takes SEQ and dies.
    expect(await race(table, v2, v1, isIncrementOf('SEQ'))).toMatchObject({ result: 'applied' });
    expect(await applier(table).apply(v1)).toMatchObject({ result: 'stale' }); // the replay's redelivery
    expect(await applier(table).apply(v2)).toMatchObject({ result: 'stale' }); // even a duplicate of v2 changes nothing now
    expect((await new DynamoRepository(store.client, table).getPublicEvent('evt_g'))?.title).toBe('Gig: moved to the big hall');
  });

  it('A3 lost update: an RSVP changed to "no" keeps the event on the guest\'s profile list and in the yes count', async () => {
    const no: Change = { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_g', user_id: 'usr_c', status: 'no', rsvp_date: '2026-11-02T00:00:00.000Z' } };
    const table = await loaded(d0);
    expect(await race(table, no, no, isIncrementOf('SEQ#usr_c'))).toMatchObject({ result: 'applied' });
    expect(await applier(table).apply(no)).toMatchObject({ result: 'stale' });
    expect(await model(table)).toEqual(await expected(d0, [no]));
  });
});

/**
 * Loses the response of the first call `lose` matches: the request lands on the table, then the store.client sees a
 * socket timeout, which the change path's retry strategy (WRITE_PATH_RETRY) retries, as it would a real one.
 */
function losingResponse(lose: (input: Input) => boolean) {
  const c = createWriteClient({ endpoint: store.endpoint });
  let lost = false;
  c.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      const input = (args as { input: Input }).input;
      if (!lost && lose(input)) {
        lost = true;
        loseResponse(out);
      }
      return out;
    },
    { step: 'deserialize', name: 'lose-response' },
  );
  return c;
}

describe('B: a landed conditional write whose response is lost is read as someone else\'s', () => {
  const bobGoes: Change = { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_g', user_id: 'usr_b', status: 'yes', rsvp_date: '2026-11-03T00:00:00.000Z' } };

  it('B1 lost update: the mark of a reveal is retried, fails on its own stamp, and the RSVP is never revealed', async () => {
    const table = await loaded(d0);
    const c = losingResponse((i) => sk(i) === 'RSVP#usr_b' && /revealing/.test(i.UpdateExpression ?? ''));
    expect(await applier(table, c).apply(bobGoes)).toMatchObject({ result: 'applied' });
    c.destroy();
    expect(await applier(table).apply(bobGoes)).toMatchObject({ result: 'stale' }); // a redelivery changes nothing
    const guests = (await new DynamoRepository(store.client, table).getGuests('evt_g', 'all', 100)).map((g) => g.guest.id);
    expect(guests).toEqual(['usr_c', 'usr_b']);
    // The lost answer is discarded as a timeout discards it, not left unread holding its connection (and the worker) open.
    expect(heldConnections(store.endpoint)).toEqual([]);
  });

  it('B2 unfinished tally: the listed write of a reveal is retried, fails, and its tally move is never finished', async () => {
    const table = await loaded(d0);
    const c = losingResponse((i) => sk(i) === 'PROFILE#usr_b' && i.Item !== undefined);
    expect(await applier(table, c).apply(bobGoes)).toMatchObject({ result: 'applied' });
    c.destroy();
    expect(await applier(table).apply(bobGoes)).toMatchObject({ result: 'stale' });
    const repo = new DynamoRepository(store.client, table);
    const listed = (await repo.listUserEvents('bob', 'PROFILE', {})).length;
    const total = await repo.countUserEvents('bob', 'PROFILE', {});
    expect({ listed, total, owed: await owed(table) }).toEqual({ listed: 1, total: 1, owed: [] });
    expect(heldConnections(store.endpoint)).toEqual([]);
  });
});

/**
 * C. The same defect inside the catalog's own shapes (before, only the deep depth reached it): the named pair
 * "deletion vs late older upsert", order [deleteAliceLater, editAlice], the deletion paused right after its
 * SEQ#usr_c number while the older edit (a late replay) runs and dies right after its own SEQ#usr_c number, then
 * the edit redelivered. Run with the project's Explorer (its checks: privacy at every observation point, a fresh
 * load of one order's fold at the end, nothing owed); the pause and crash points are found by probing.
 */
describe('C: a deep-depth schedule of the catalog', () => {
  it('C1 deletion vs late older upsert: [1 paused after its SEQ#usr_c number] [0 dies after its SEQ#usr_c number] then 0', async () => {
    const { Explorer } = await import('../support/schedules.js');
    const user = (id: string, username: string) => ({ id, username, name: `Name of ${username}`, email: `${username}@example.com` });
    const ev = (id: string, start: string) => ({ id, creator_id: 'usr_a', title: `Event ${id}`, start_date: start, timezone: 'UTC', status: 'published' as const, visibility: 'public' as const, created_at: '2026-11-01T00:00:00.000Z' });
    const aliceHostsTwo: Dataset = {
      users: [user('usr_a', 'alice'), user('usr_b', 'bob'), user('usr_c', 'carol')],
      events: [ev('evt_g', '2026-12-31T23:30:00.000Z'), ev('evt_t', '2027-02-01T18:00:00.000Z')],
      rsvps: [{ event_id: 'evt_g', user_id: 'usr_c', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' }],
    };
    const editAlice: Change = { type: 'user.upserted', version: 1, user: { ...user('usr_a', 'alice'), name: 'Alice A.' } };
    const deleteAliceLater: Change = { type: 'user.deleted', version: 2, user_id: 'usr_a' };
    const s = { name: 'deletion vs late older upsert', d0: aliceHostsTwo, changes: [editAlice, deleteAliceLater] };
    const at = isIncrementOf('SEQ#usr_c');

    // Probe: P's calls up to and including its SEQ#usr_c number; then R's writes up to and including its own.
    const table = await loaded(aliceHostsTwo);
    let calls = 0;
    let pauseAfter = 0;
    let hold!: () => void;
    const held = new Promise<void>((r) => (hold = r));
    const p = createDocumentClient({ endpoint: store.endpoint });
    p.middlewareStack.add((next, context) => async (args) => {
      const out = await next(args);
      calls++;
      if (!pauseAfter && at(String(context.commandName), args.input as Input)) {
        pauseAfter = calls;
        hold();
        await new Promise<void>(() => undefined); // P never goes on in the probe
      }
      return out;
    }, { step: 'initialize', name: 'probe' });
    void applier(table, p).apply(deleteAliceLater);
    await held;
    let writes = 0;
    let crashAfter = 0;
    const r = createDocumentClient({ endpoint: store.endpoint });
    r.middlewareStack.add((next, context) => async (args) => {
      const out = await next(args);
      if (/Put|Update|Delete/.test(String(context.commandName))) writes++;
      if (at(String(context.commandName), args.input as Input)) {
        crashAfter = writes;
        throw new Error('crash');
      }
      return out;
    }, { step: 'initialize', name: 'probe' });
    await expect(applier(table, r).apply(editAlice)).rejects.toThrow('crash');
    r.destroy();

    const explorer = new Explorer(store.endpoint, store.client, clock);
    try {
      await explorer.run(s, { paused: { change: 1, pauseAfter }, during: [{ change: 0, crashAfter }], after: [{ change: 0 }] });
    } finally {
      explorer.close();
    }
    expect(pauseAfter).toBeGreaterThan(0);
    expect(crashAfter).toBeGreaterThan(0);
  }, 60_000);
});
