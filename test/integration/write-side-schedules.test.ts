/**
 * Reproducers: five schedules, crash points and inputs that left the table
 * different from fold(D0, S) on the change path as it stood on 2026-11-24
 * (issue 18). Each failed on that code. Adapted where the call sequence
 * moved: the crash points are now named by the call they follow (the
 * tombstone's write), not by a count, and F4's input is now refused at the
 * contract. schedules.exhaustive.test.ts explores the classes these stand for.
 */
import { describe, expect, it } from '@jest/globals';
import { parseChange, type Change } from '../../lambdas/core/changes.js';
import { validateDataset, type Dataset } from '../../lambdas/core/dataset.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { fold } from '../../lambdas/core/fold.js';
import { ChangeApplier, FanOutIncomplete } from '../../lambdas/store/changes/applier.js';
import { freshLoadReadModel, reachable, readModel, scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';
import { Turns } from '../support/turns.js';

const clock = fixedClock('2026-11-21T12:00:00.000Z');
const store = useFileStore();

const loaded = (d0: Dataset): Promise<string> => store.loaded('review', d0);

const applier = (table: string) => new ChangeApplier(store.client, table, { clock });
const model = async (table: string) => readModel(await scanAll(store.client, table));
const expected = async (d0: Dataset, s: Change[]) => freshLoadReadModel(store.client, store.nextTable('review-exp'), fold(d0, s).dataset);
/** Event ids any GSI (any public read path) reaches. */
const reachableEvents = async (table: string) => [...new Set((await reachable(store.client, table)).filter((i) => i.type !== 'USER').map((i) => String(i.event_id)))].sort();

/** Dies right after the first call `after` matches (the call lands). */
async function applyUntilCrash(table: string, change: Change, after: (input: Record<string, unknown>) => boolean): Promise<void> {
  const dying = store.newClient();
  dying.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      if (after(args.input as Record<string, unknown>)) throw new Error('crash');
      return out;
    },
    { step: 'initialize', name: 'crash' },
  );
  try {
    await new ChangeApplier(dying, table, { clock, fanOutConcurrency: 1 }).apply(change);
  } catch (error) {
    if ((error as Error).message !== 'crash') throw error;
  } finally {
    dying.destroy();
  }
}

const alice = { id: 'usr_a', username: 'alice' };
const bob = { id: 'usr_b', username: 'bob' };
const carol = { id: 'usr_c', username: 'carol' };
const gig = { id: 'evt_g', creator_id: 'usr_a', title: 'Gig', start_date: '2026-12-01T20:00:00.000Z', timezone: 'UTC', status: 'published' as const, visibility: 'public' as const, created_at: '2026-11-01T00:00:00.000Z' };

describe('review findings', () => {
  it('F1 race: a creator deletion tombstones a NEWER version that moved the event to another host', async () => {
    const d0: Dataset = { users: [alice, bob, carol], events: [gig], rsvps: [{ event_id: 'evt_g', user_id: 'usr_c', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' }] };
    // The source hands the event to bob, then deletes alice; two Lambda invocations apply them at once.
    const move: Change = { type: 'event.upserted', version: 1, event: { ...gig, creator_id: 'usr_b' } };
    const del: Change = { type: 'user.deleted', version: 1, user_id: 'usr_a' };
    const table = await loaded(d0);
    // The deletion runs to cascadeUserFrom's first read of the event (creator alice), the move lands, the deletion goes on.
    const turns = new Turns([1, 1, 1, 1, 0, 0, 0, 0, ...Array<number>(400).fill(1)], 2);
    const clients = [0, 1].map((i) => turns.gate(i, store.newClient()));
    await Promise.all([move, del].map((c, i) => turns.run(i, () => new ChangeApplier(clients[i]!, table, { clock, fanOutConcurrency: 1 }).apply(c))));
    clients.forEach((c) => c.destroy());
    const either = [JSON.stringify(await expected(d0, [move, del])), JSON.stringify(await expected(d0, [del, move]))];
    // In both orders the event survives under bob (fold: [del, move] re-creates it without carol's RSVP).
    expect(await reachableEvents(table)).toEqual(['evt_g']);
    expect(either).toContain(JSON.stringify(await model(table)));
  });

  it('F2 crash: an event deletion interrupted after its tombstone, then the event re-created: the deleted RSVP comes back', async () => {
    const d0: Dataset = { users: [alice, bob], events: [gig], rsvps: [{ event_id: 'evt_g', user_id: 'usr_b', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' }] };
    const del: Change = { type: 'event.deleted', version: 1, event_id: 'evt_g' };
    const recreate: Change = { type: 'event.upserted', version: 2, event: gig };
    const table = await loaded(d0);
    const tombstoneWrite = (input: Record<string, unknown>) => (input.Item as { sk?: string; deleted?: boolean } | undefined)?.sk === 'SRC' && (input.Item as { deleted?: boolean }).deleted === true;
    await applyUntilCrash(table, del, tombstoneWrite); // tombstone lands; Lambda dies (timeout / throttle) before the RSVPs go
    await applier(table).apply(recreate); // standard queue: the newer change is processed before the redelivery
    expect(await applier(table).apply(del)).toMatchObject({ result: 'stale' }); // redelivery: stale, pending already cleared
    // Contract: "a newer upsert re-creates it, without the dependents the delete removed".
    const guests = (await reachable(store.client, table)).filter((i) => i.type === 'RSVP').map((i) => (i.guest as { id: string }).id);
    expect(guests).toEqual([]);
    expect(await model(table)).toEqual(await expected(d0, [del, recreate]));
  });

  it('F3 time limit: a user deletion stopped by FanOutIncomplete, then a late OLDER upsert clears `pending` with the wrong work', async () => {
    const evt = (id: string) => ({ ...gig, id });
    const d0: Dataset = { users: [alice, bob], events: [evt('evt_1'), evt('evt_2')], rsvps: [{ event_id: 'evt_2', user_id: 'usr_b', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' }] };
    const edit: Change = { type: 'user.upserted', version: 1, user: { ...alice, name: 'Alice' } };
    const del: Change = { type: 'user.deleted', version: 2, user_id: 'usr_a' };
    const restore: Change = { type: 'user.upserted', version: 3, user: alice };
    const table = await loaded(d0);
    // Designed path, no crash: the ingest stops the fan-out between chunks when time runs short.
    const short = new ChangeApplier(store.client, table, { clock, fanOutConcurrency: 1, remainingMs: () => 0, reserveMs: 1 });
    await expect(short.apply(del)).rejects.toBeInstanceOf(FanOutIncomplete);
    expect(await applier(table).apply(edit)).toMatchObject({ result: 'stale' }); // the older edit, delivered late
    expect(await applier(table).apply(del)).toMatchObject({ result: 'stale' }); // the redelivery finds nothing pending
    const afterDelete = await model(table);
    const afterRestore = await (async () => {
      await applier(table).apply(restore);
      return { model: await model(table), reachable: await reachableEvents(table) };
    })();
    expect({ afterDelete, afterRestore }).toEqual({
      afterDelete: await expected(d0, [edit, del]),
      afterRestore: { model: await expected(d0, [edit, del, restore]), reachable: [] },
    });
  });

  it('F5 crash + race: an older derivation\'s write lands after the hide and its applier dies: a private event stays listed until the redelivery', async () => {
    const d0: Dataset = { users: [alice, bob], events: [gig], rsvps: [] };
    const rsvp: Change = { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_g', user_id: 'usr_b', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' } };
    const hide: Change = { type: 'event.upserted', version: 1, event: { ...gig, visibility: 'private' } };
    const table = await loaded(d0);
    // The RSVP's applier reads the (public) event, the hide runs whole, then the RSVP's applier writes bob's profile entry and dies.
    const turns = new Turns([...Array<number>(10).fill(0), ...Array<number>(400).fill(1)], 2);
    const clients = [0, 1].map((i) => turns.gate(i, store.newClient()));
    clients[0]!.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        const item = (args.input as { Item?: { sk?: string } }).Item;
        if (item?.sk === 'PROFILE#usr_b') throw new Error('crash');
        return out;
      },
      { step: 'initialize', name: 'crash' },
    );
    await Promise.all(
      [rsvp, hide].map((c, i) =>
        turns.run(i, () => new ChangeApplier(clients[i]!, table, { clock, fanOutConcurrency: 1 }).apply(c).catch((e: Error) => { if (e.message !== 'crash') throw e; })),
      ),
    );
    clients.forEach((c) => c.destroy());
    // Until SQS redelivers the RSVP (visibility timeout 720 s), what do the read paths reach? fold says: nothing (the event is private).
    const listed = (await reachable(store.client, table)).filter((i) => i.type !== 'USER').map((i) => `${String(i.sk)} ${String(i.gsi2pk ?? i.gsi1pk)}`);
    expect(listed).toEqual([]);
  });

  it('F4 input: a start in year 10000 after its offset is refused with its field path, in change records and datasets alike', async () => {
    const late: Change = { type: 'event.upserted', version: 1, event: { ...gig, id: 'evt_y', start_date: '9999-12-31T23:00:00-05:00' } };
    expect(parseChange(late)).toEqual({ ok: false, problems: ['event.start_date: outside years 0001-9999 in UTC'] });
    const early = { ...gig, id: 'evt_y', created_at: '0001-01-01T00:30:00+01:00' };
    expect(validateDataset({ users: [alice], events: [early], rsvps: [] })).toMatchObject({ ok: false, problems: ['events[0].created_at: outside years 0001-9999 in UTC'] });
    expect(parseChange({ ...late, occurred_at: '+010000-01-01T00:00:00Z' })).toMatchObject({ ok: false });
  });

  it('F4 boundary: the last instant of year 9999 is accepted, and its year tally equals the fresh load\'s', async () => {
    const d0: Dataset = { users: [alice], events: [], rsvps: [] };
    const last = parseChange({ type: 'event.upserted', version: 1, event: { ...gig, id: 'evt_y', start_date: '9999-12-31T18:59:59.999-05:00' } });
    if (!last.ok) throw new Error(last.problems.join('; '));
    const table = await loaded(d0);
    expect(await applier(table).apply(last.change)).toMatchObject({ result: 'applied' });
    const tally = (items: Record<string, unknown>[]) => items.filter((i) => String(i.pk).startsWith('TALLY#') && String(i.sk).startsWith('Y#'));
    expect(tally(await model(table))).toEqual(tally(await expected(d0, [last.change])));
    expect(tally(await model(table))).not.toEqual([]);
  });
});
