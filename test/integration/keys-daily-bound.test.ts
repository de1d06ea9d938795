/**
 * The per-user daily bound on key creates (PRODUCT P3, docs/keys-and-quota.md)
 * across the day's boundary and across a user's deletion (issue 45, k1 and
 * k2, adopted from the review's reproducers):
 *
 * - each function reads its own clock when a create starts, and its slot
 *   write may land after a create that read a later clock (a slow call, a
 *   slot write retried under contention). The stored day only moves forward
 *   (the rule, lambdas/core/key-rules.ts `reserve`, and a condition on the
 *   slot record's write): a create that read 23:59:59.9 and lands after the
 *   new day's first create counts against the new day instead of starting
 *   its count again from zero;
 * - a user's deletion closes their slots and keeps the day's count, so the
 *   same user id brought back by a newer `user.upserted` the same day goes
 *   on from it.
 * The exploration (keys-schedules.exhaustive.test.ts) checks both after
 * every write, with clocks that straddle 00:00 UTC.
 */
import { beforeEach, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { demoDataset } from '../support/fixtures.js';
import { slotsOf } from '../support/keys.js';
import { useTestStores, type TestStore } from '../support/store.js';

const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: { code?: string }) => e.code ?? String(e));

it("a create that started before 00:00 UTC and lands after a create of the new day does not reset the new day's count", async () => {
  const today = new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-22T00:00:00.100Z') });
  // The user's 10 creates of 2026-11-22, each revoked again (so the 10-key limit is not what stops them).
  for (let i = 0; i < 10; i++) {
    const { info } = await today.create({ userId: 'usr_frank', name: `day2-${i}` });
    await today.revoke('usr_frank', info.keyId);
  }
  expect(await code(today.create({ userId: 'usr_frank', name: 'eleventh' }))).toBe('CREATE_LIMIT');
  // A create whose function read its clock at 23:59:59.900 the day before, and takes its slot now: it counts against the new day.
  const straggler = new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-21T23:59:59.900Z') });
  expect(await code(straggler.create({ userId: 'usr_frank', name: 'straggler' }))).toBe('CREATE_LIMIT');
  expect(await code(today.create({ userId: 'usr_frank', name: 'twelfth' }))).toBe('CREATE_LIMIT');
  expect(await slotsOf(store.client, store.tableName, 'usr_frank')).toMatchObject({ day: '2026-11-22', created: 10 });
});

it('a straggler that lands before the new day\'s first create counts against its own day, and the new day starts afresh', async () => {
  const straggler = new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-21T23:59:59.900Z') });
  const today = new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-22T00:00:00.100Z') });
  expect(await code(straggler.create({ userId: 'usr_frank', name: 'straggler' }))).toBe('ok');
  expect(await slotsOf(store.client, store.tableName, 'usr_frank')).toMatchObject({ day: '2026-11-21', created: 1 });
  expect(await code(today.create({ userId: 'usr_frank', name: 'first of the day' }))).toBe('ok');
  expect(await slotsOf(store.client, store.tableName, 'usr_frank')).toMatchObject({ day: '2026-11-22', created: 1 });
});

it("a user deleted and brought back the same UTC day does not get a second day's worth of creates", async () => {
  const clock = fixedClock('2026-11-21T12:00:00.000Z');
  const mgr = new KeyManager(store.client, store.tableName, { clock });
  const createsUntilRefused = async () => {
    let n = 0;
    for (; n < 15; n++) if (!(await mgr.create({ userId: 'usr_alice', name: `k${n}` }).then(({ info }) => mgr.revoke('usr_alice', info.keyId), () => null))) break;
    return n;
  };
  const before = await createsUntilRefused();
  const applier = new ChangeApplier(store.client, store.tableName, { clock });
  await applier.apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });
  await applier.apply({ type: 'user.upserted', version: 1001, user: { id: 'usr_alice', username: 'alice' } });
  const after = await createsUntilRefused();
  expect({ before, afterRecreation: after }).toEqual({ before: 10, afterRecreation: 0 });
  expect(await slotsOf(store.client, store.tableName, 'usr_alice')).toMatchObject({ day: '2026-11-21', created: 10 });
});
