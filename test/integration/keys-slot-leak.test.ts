/**
 * A revoke, or a create's clean-up, cut off between revoking the key and
 * giving back its slot (issue 37, defect 2, adopted from the security
 * review's reproducer). The slot record names each slot's key, so giving it
 * back is idempotent: the retry of an interrupted revoke gives it back (and
 * answers ALREADY_REVOKED), and a slot whose create died is reclaimed by the
 * next create that would otherwise be refused for the limit. A user with no
 * usable key is never locked out.
 */
import { beforeEach, expect, it } from '@jest/globals';
import { KeyManager, type PlanKeys } from '../../lambdas/key-admin/key-manager.js';
import { STALE_CREATE_MS } from '../../lambdas/core/key-rules.js';
import { demoDataset } from '../support/fixtures.js';
import { slotsOf } from '../support/keys.js';
import { useTestStores, type TestStore } from '../support/store.js';

// One store for the file, a fresh table per test (test/support/store.ts).
const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

/** Fails a write of frank's slot record once `armed` (after `skip` more), as a throttled table or a function cut off right there would. */
function failNextSlotWrite(s: TestStore) {
  const state = { armed: false, skip: 0, failed: 0 };
  s.client.middlewareStack.add(
    (next, context) => async (args) => {
      const item = (args.input as { Item?: { pk?: string; sk?: string } }).Item;
      if (state.armed && context.commandName === 'PutItemCommand' && item?.pk === 'USERKEYS#usr_frank' && item.sk === 'COUNTER' && state.skip-- <= 0) {
        state.armed = false;
        state.failed++;
        throw Object.assign(new Error('Throughput exceeds the current capacity of your table'), { name: 'ProvisionedThroughputExceededException' });
      }
      return next(args);
    },
    { step: 'initialize', name: 'failSlotWrite' },
  );
  return state;
}

it('10 revokes interrupted before giving the slot back, each retried: the slots come back, and the user can create again', async () => {
  const mgr = new KeyManager(store.client, store.tableName, { clock: () => new Date('2026-11-21T12:00:00.000Z'), maxCreatesPerDay: 100 });
  const fault = failNextSlotWrite(store);
  for (let i = 0; i < 10; i++) {
    const { info } = await mgr.create({ userId: 'usr_frank', name: `k${i}` });
    fault.armed = true;
    await expect(mgr.revoke('usr_frank', info.keyId)).rejects.toThrow('Throughput exceeds');
    // The web product retries, as documented: "already revoked", and the slot given back this time.
    await expect(mgr.revoke('usr_frank', info.keyId)).rejects.toMatchObject({ code: 'ALREADY_REVOKED' });
  }
  expect(fault.failed).toBe(10);
  expect((await mgr.listAll('usr_frank')).filter((k) => !k.revoked)).toHaveLength(0);
  expect({ active: (await slotsOf(store.client, store.tableName, 'usr_frank'))?.active, create: await mgr.create({ userId: 'usr_frank', name: 'new' }).then(() => 'ok', (e: { code?: string }) => e.code) }).toEqual({
    active: 0,
    create: 'ok',
  });
});

it("a create's clean-up that cannot give its slot back: the slot is reclaimed once its create is presumed dead, by the create that would be refused", async () => {
  let now = Date.parse('2026-11-21T12:00:00.000Z');
  const failing: PlanKeys = { create: async () => Promise.reject(new Error('API Gateway is down')), attach: async () => undefined, remove: async () => undefined };
  const mgr = (planKeys?: PlanKeys) => new KeyManager(store.client, store.tableName, { clock: () => new Date(now), planKeys, maxCreatesPerDay: 100 });
  for (let i = 0; i < 9; i++) await mgr().create({ userId: 'usr_frank', name: `k${i}` });
  const fault = failNextSlotWrite(store);
  // The plan key fails; the clean-up revokes the key, then cannot give the slot back (the slot's first write, taking it, goes through).
  fault.armed = true;
  fault.skip = 1;
  await expect(mgr(failing).create({ userId: 'usr_frank', name: 'half made' })).rejects.toThrow('API Gateway is down');
  expect(fault.failed).toBe(1);
  expect((await slotsOf(store.client, store.tableName, 'usr_frank'))?.active).toBe(10);
  // Within a minute its create might still be running: the limit holds.
  await expect(mgr().create({ userId: 'usr_frank', name: 'too soon' })).rejects.toMatchObject({ code: 'LIMIT_REACHED' });
  // Past it, the create at the limit checks the stale slots first: the dead create's is reclaimed, the nine usable keys keep theirs.
  now += STALE_CREATE_MS;
  await expect(mgr().create({ userId: 'usr_frank', name: 'tenth' })).resolves.toMatchObject({ info: { name: 'tenth' } });
  expect((await slotsOf(store.client, store.tableName, 'usr_frank'))?.active).toBe(10);
  expect((await mgr().listAll('usr_frank')).filter((k) => !k.revoked).map((k) => k.name).sort()).toEqual([...Array.from({ length: 9 }, (_, i) => `k${i}`), 'tenth']);
});
