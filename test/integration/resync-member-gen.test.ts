/**
 * Issue 44, item 5 (b): does a resync (`data:load --replace`, local/resync.ts)
 * write a feed member with generation 0 that a late leave then deletes while
 * the member is shown, so that a start from no cursor misses it?
 *
 * What a resync writes: a member it finds listed is left as it is (its `gen`,
 * the version that showed it, kept); a member shown in the file's read model
 * and not listed is written with `gen: 0`, and so is every member a load
 * writes. An item the resync rewrites is unstamped (no `gen`), which the
 * feeds' writes read as 0 too. The member lists' writes are conditional on
 * `gen` (a leave `attribute_not_exists OR gen <= :gen`), so a leave of any
 * derivation would delete a member of gen 0. A leave is only ever recorded
 * for a version a derivation has just written or, recovering, for the item
 * as it now is (feed.ts, `record`), and a change delivered again after the
 * resync is stale (its source keeps the version the table knew) or finds its
 * source pending and records the item as the resync left it. So the late
 * leaves that can arrive (every earlier change delivered again, the hide
 * among them; a hide whose leave failed before the resync, delivered again
 * after it) never leave a shown member off its list, and a start from no
 * cursor holds exactly what the read routes show. Checked here after every
 * delivery, with the resync writing members of gen 0 (a reveal by the file)
 * and keeping a listed one's gen.
 */
import { describe, expect, it } from '@jest/globals';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { fold } from '../../lambdas/core/fold.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { feedMemberOf, scopesShowing } from '../../lambdas/store/feeds/feed.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { FeedConsumer, expectReplicasMatch, scopesOf } from '../support/feed-consumer.js';
import { NOW, dataset, event, user } from '../support/feed-review.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });
const clock = fixedClock(NOW.toISOString());

const ann = user('usr_ann', 'ann');
const bob = user('usr_bob', 'bob');
const d0: Dataset = dataset([ann, bob], [event('evt_a', ann.id, 'A v1')]);
const GUESTS = 'GUESTS#evt_a';

const rsvp = (version: number, status: 'yes' | 'maybe' | 'no'): Change => ({ type: 'rsvp.upserted', version, rsvp: { event_id: 'evt_a', user_id: bob.id, status, rsvp_date: `2026-11-0${version}T00:00:00.000Z` } });
const edit = (version: number, extra: Parameters<typeof event>[3] = {}): Change => ({ type: 'event.upserted', version, event: event('evt_a', ann.id, `A v${version}`, extra) });
const hide = (version: number): Change => edit(version, { visibility: 'private' });

/** The table's feed members by `scope member`, with their gen. */
async function members(table: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const item of await scanTable(store.client, table)) if (item.type === 'FEED_MEMBER') out.set(`${String(item.pk).slice('FEED#M#'.length)} ${String(item.sk).slice(2)}`, Number(item.gen));
  return out;
}

/** Every member a feed shows is on its list, and a consumer starting from no cursor holds exactly what the read routes show. */
async function expectShownListed(table: string, where: string): Promise<void> {
  const listed = await members(table);
  for (const item of await scanTable(store.client, table)) {
    for (const scope of scopesShowing(item)) {
      const member = `${scope} ${feedMemberOf(item)}`;
      expect({ where, member, listed: listed.has(member) }).toEqual({ where, member, listed: true });
    }
  }
  const scopes = scopesOf(store.client, table, new Set([ann.id, bob.id]), ['evt_a']);
  const fresh = new FeedConsumer(new DynamoRepository(store.client, table), scopes);
  await fresh.drain();
  await expectReplicasMatch(store.client, table, fresh, (await scopes()).users);
}

async function apply(table: string, change: Change): Promise<void> {
  await new ChangeApplier(store.client, table, { clock, fanOutConcurrency: 1 }).apply(change);
}

async function resync(table: string, file: Dataset): Promise<void> {
  await executeResync(store.client, table, planResync(await scanTable(store.client, table), file), { clock });
}

/** Every change of `history` delivered again, oldest first, the table checked after each. */
async function redeliver(table: string, history: readonly Change[], where: string): Promise<void> {
  for (const [i, change] of history.entries()) {
    await apply(table, change);
    await expectShownListed(table, `${where}, ${change.type} v${change.version} (#${i + 1}) again`);
  }
}

describe('a resync\'s members and late leaves (issue 44, 5b)', () => {
  it('a member listed at gen N keeps N across a resync; every earlier change delivered again after it leaves it listed', async () => {
    const table = await store.loaded('resync-gen', d0);
    const history = [rsvp(1, 'yes'), rsvp(2, 'maybe'), edit(2)];
    for (const c of history) await apply(table, c);
    const before = await members(table);
    const gen = before.get(`${GUESTS} ${bob.id}`)!;
    expect(gen).toBeGreaterThan(0);
    // A file that changes the event and the RSVP: both items rewritten (unstamped), the members left as they are.
    const file = fold(d0, [...history, edit(3), rsvp(3, 'yes')]).dataset;
    const plan = planResync(await scanTable(store.client, table), file);
    expect(plan.members).toEqual({ join: [], drop: [] });
    await resync(table, file);
    expect(await members(table)).toEqual(before);
    await expectShownListed(table, 'after the resync');
    await redeliver(table, [...history, hide(1), hide(2)], 'after the resync');
  }, 30_000);

  it('a member the file reveals is written at gen 0 on an unstamped item; earlier changes again (the hide among them), then later ones, never leave it off its list', async () => {
    const table = await store.loaded('resync-gen', d0);
    const history = [rsvp(1, 'yes'), edit(2), hide(3)];
    for (const c of history) await apply(table, c);
    expect([...(await members(table)).keys()]).toEqual([]);
    // The operator's file still has the event public: the resync shows it and its guest again.
    await resync(table, fold(d0, [rsvp(1, 'yes'), edit(2)]).dataset);
    const after = await members(table);
    expect(Object.fromEntries(after)).toEqual({ [`${GUESTS} ${bob.id}`]: 0, [`EVENTS evt_a`]: 0, [`HOST#${ann.id} evt_a`]: 0 });
    const items = await scanTable(store.client, table);
    // The items it shows them by are the resync's own: unstamped.
    expect(Object.fromEntries(items.filter((i) => i.type === 'RSVP' || i.type === 'EVENT').map((i) => [i.type, 'gen' in i ? i.gen : 'none']))).toEqual({ RSVP: 'none', EVENT: 'none' });
    await expectShownListed(table, 'after the resync');
    // Late: every earlier change again (stale: the sources keep the versions the table knew), the hide among them.
    await redeliver(table, history, 'after the resync');
    // Later changes that keep the guest shown write no member (it stays at gen 0), then the hide again.
    await apply(table, rsvp(4, 'maybe'));
    await apply(table, edit(4));
    expect((await members(table)).get(`${GUESTS} ${bob.id}`)).toBe(0);
    await expectShownListed(table, 'after later changes');
    await redeliver(table, [...history, rsvp(4, 'maybe'), edit(4)], 'after later changes');
    // A new hide leaves (right: not shown), a new reveal joins at its own gen, and the hide again is stale.
    await apply(table, hide(5));
    await expectShownListed(table, 'hidden again');
    await apply(table, edit(6));
    expect((await members(table)).get(`${GUESTS} ${bob.id}`)).toBeGreaterThan(0);
    await redeliver(table, [...history, hide(5)], 'shown again');
  }, 30_000);

  it('a hide whose leave failed before the resync, delivered again after it: the member stays listed while shown, and goes when hidden', async () => {
    for (const fileHides of [false, true]) {
      const table = await store.loaded('resync-gen', d0);
      await apply(table, rsvp(1, 'yes'));
      const gen = (await members(table)).get(`${GUESTS} ${bob.id}`)!;
      // The hide dies at its guest's leave (DeleteItem of the member), its source left pending.
      const client = store.newClient();
      let failed = false;
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const key = (args as { input: { Key?: Record<string, string> } }).input.Key;
          if (!failed && /^Delete/.test(String(context.commandName)) && key?.pk === `FEED#M#${GUESTS}`) {
            failed = true;
            throw Object.assign(new Error('Rate exceeded (simulated)'), { name: 'ThrottlingException' });
          }
          return next(args);
        },
        { step: 'initialize', name: 'failLeave' },
      );
      await expect(new ChangeApplier(client, table, { clock, fanOutConcurrency: 1 }).apply(hide(2))).rejects.toThrow('Rate exceeded');
      client.destroy();
      expect(failed).toBe(true);
      expect((await members(table)).get(`${GUESTS} ${bob.id}`)).toBe(gen);
      const where = fileHides ? 'a file with the hide' : 'a file without it';
      await resync(table, fold(d0, fileHides ? [rsvp(1, 'yes'), hide(2)] : [rsvp(1, 'yes')]).dataset);
      await expectShownListed(table, `${where}: after the resync`);
      await redeliver(table, [rsvp(1, 'yes'), hide(2)], `${where}: after the resync`);
      expect((await members(table)).has(`${GUESTS} ${bob.id}`)).toBe(!fileHides);
    }
  }, 30_000);
});
