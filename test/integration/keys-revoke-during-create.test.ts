/**
 * A revoke that lands while the same key's create is still running (issue 37,
 * defect 1, adopted from the security review's reproducer). The create writes
 * the key's record (listed at once) before the authorizer's item; a revoke in
 * that window must still hold: it writes the authorizer's item revoked
 * whether or not it exists yet, so the create cannot put it active
 * afterwards and answers REVOKED_WHILE_CREATING. After a revoke answered, the
 * key is 401 on every later request, its slot is free once, and the user
 * never holds an 11th working key.
 *
 * The create's key is known to the test (seeded random characters) because
 * the create that loses the race no longer answers with it. The whole class
 * (every interleaving and crash point of create, revoke and deletion) is
 * explored in keys-schedules.exhaustive.test.ts.
 */
import { beforeEach, expect, it } from '@jest/globals';
import { hashApiKey } from '../../lambdas/core/api-key.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { KeyManagementError, KeyManager, type PlanKeys } from '../../lambdas/key-admin/key-manager.js';
import { demoDataset } from '../support/fixtures.js';
import { authenticates, keysOf, seededRandom, slotsOf } from '../support/keys.js';
import { useTestStores, type TestStore } from '../support/store.js';

// One store for the file, a fresh table per test (test/support/store.ts).
const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

/** Holds the create's put of the authorizer's item until `release()` is called (the window a concurrent revoke can hit). */
function pauseApiKeyPut(s: TestStore) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const atPut = new Promise<void>((r) => (reached = r));
  s.client.middlewareStack.add(
    (next, context) => async (args) => {
      const item = (args.input as { Item?: { pk?: string; revoked?: boolean } }).Item;
      if (context.commandName === 'PutItemCommand' && item?.pk?.startsWith('APIKEY#') && item.revoked === false) {
        reached();
        await released;
      }
      return next(args);
    },
    { step: 'initialize', name: 'pauseApiKeyPut' },
  );
  return { atPut, release };
}

const refusalOf = (p: Promise<unknown>) => p.then(() => 'answered', (e: unknown) => (e instanceof KeyManagementError ? e.code : Promise.reject(e)));
const T = '2026-11-21T12:00:00.000Z';

it('a key revoked (200) while its create is in flight never authenticates; the create answers REVOKED_WHILE_CREATING (no usage plan: the local server, npm run keys --endpoint)', async () => {
  const mgr = new KeyManager(store.client, store.tableName, { clock: fixedClock(T), random: seededRandom('race-1') });
  const [key] = keysOf('race-1', 1);
  const gate = pauseApiKeyPut(store);
  const creating = refusalOf(mgr.createOnce({ idempotencyKey: 'race-0000001', userId: 'usr_frank', name: 'new key' }));
  await gate.atPut;
  // The web product lists the user's keys: the new key is already there, active.
  const [listed] = await mgr.listAll('usr_frank');
  expect(listed).toMatchObject({ name: 'new key', revoked: false });
  // The key the test will try is the one this create made.
  expect((await mgr.store.record('usr_frank', listed!.keyId))?.key_hash).toBe(hashApiKey(key!));
  // The user clicks "revoke" on it: 200, revoked.
  expect(await mgr.revoke('usr_frank', listed!.keyId)).toMatchObject({ revoked: true });
  gate.release();
  expect(await creating).toBe('REVOKED_WHILE_CREATING');

  expect((await mgr.listAll('usr_frank'))[0]).toMatchObject({ revoked: true });
  expect((await slotsOf(store.client, store.tableName, 'usr_frank'))?.active).toBe(0);
  expect(await authenticates(store.repository, key!)).toBe(false);
  // A retry of the create answers the key it made (revoked), never a second key.
  expect(await mgr.createOnce({ idempotencyKey: 'race-0000001', userId: 'usr_frank', name: 'new key' })).toMatchObject({ created: false, info: { keyId: listed!.keyId, revoked: true } });
});

it('with a usage plan (AWS): a revoke whose plan-key delete failed is not answered as done, yet the key never authenticates; its retry deletes the plan key', async () => {
  const plan = new Map<string, { attached: boolean }>();
  let apiGatewayDown = true;
  const planKeys: PlanKeys = {
    create: async (keyId) => (plan.set(`pk-${keyId}`, { attached: false }), `pk-${keyId}`),
    attach: async (id) => void (plan.get(id)!.attached = true),
    remove: async (id) => {
      if (apiGatewayDown) throw Object.assign(new Error('Too Many Requests'), { name: 'TooManyRequestsException' });
      plan.delete(id);
    },
  };
  const mgr = new KeyManager(store.client, store.tableName, { clock: fixedClock(T), planKeys, random: seededRandom('race-2') });
  const [key] = keysOf('race-2', 1, { planKeys: true });
  const gate = pauseApiKeyPut(store);
  const creating = refusalOf(mgr.createOnce({ idempotencyKey: 'race-0000002', userId: 'usr_frank', name: 'aws key' }));
  await gate.atPut;
  const [listed] = await mgr.listAll('usr_frank');
  expect((await mgr.store.record('usr_frank', listed!.keyId))?.key_hash).toBe(hashApiKey(key!));
  // The key is revoked at the authorizer before the plan key is touched; the throttle is reported (the handler answers 503 BUSY, which the web product retries).
  await expect(mgr.revoke('usr_frank', listed!.keyId)).rejects.toThrow('Too Many Requests');
  gate.release();
  expect(await creating).toBe('REVOKED_WHILE_CREATING');
  expect(await authenticates(store.repository, key!)).toBe(false);
  apiGatewayDown = false;
  expect(await refusalOf(mgr.revoke('usr_frank', listed!.keyId))).toBe('ALREADY_REVOKED');
  expect([...plan.keys()]).toEqual([]);
});

it('the same race does not free a slot the key still holds: never more than 10 keys that authenticate', async () => {
  const mgr = new KeyManager(store.client, store.tableName, { clock: fixedClock(T), random: seededRandom('race-3'), maxCreatesPerDay: 100 });
  const made = keysOf('race-3', 11);
  const gate = pauseApiKeyPut(store);
  const creating = refusalOf(mgr.createOnce({ idempotencyKey: 'race-0000003', userId: 'usr_frank', name: 'ghost' }));
  await gate.atPut;
  const [listed] = await mgr.listAll('usr_frank');
  await mgr.revoke('usr_frank', listed!.keyId);
  gate.release();
  await creating;
  for (let i = 0; i < 10; i++) await mgr.createOnce({ idempotencyKey: `more-000000${i}`, userId: 'usr_frank', name: `k${i}` });
  await expect(mgr.create({ userId: 'usr_frank', name: 'eleventh' })).rejects.toMatchObject({ code: 'LIMIT_REACHED' });
  const authenticating = (await Promise.all(made.map((k) => authenticates(store.repository, k)))).filter(Boolean).length;
  expect(authenticating).toBe(10);
  expect((await slotsOf(store.client, store.tableName, 'usr_frank'))?.active).toBe(10);
});
