/**
 * The join point for what else a key holds (its webhooks, PRODUCT P18):
 * KeyStoreOptions.cleanups, run by every retire once the key is refused,
 * so a revoke, a user's deletion (the close's per-key step, an already
 * revoked key's included) and the sweep each clean up every key they
 * retire; a failing clean-up fails the retire after the key is refused, and
 * the caller's retry runs it again.
 */
import { beforeEach, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { KeyManager, type KeyCleanup } from '../../lambdas/key-admin/key-manager.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { planKeyName, type PlanKeyEntry, type PlanKeys } from '../../lambdas/store/keys/key-store.js';
import { sweepPlanKeys } from '../../lambdas/store/keys/plan-key-sweep.js';
import { batchWriteAll } from '../../lambdas/store/table/batch-write.js';
import { keys } from '../../lambdas/store/table/table.js';
import { demoDataset } from '../support/fixtures.js';
import { authenticates } from '../support/keys.js';
import { useTestStores, type TestStore } from '../support/store.js';

const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});
const T = Date.parse('2026-11-21T12:00:00.000Z');

function recording() {
  const seen: string[] = [];
  let failNext = 0;
  const cleanup: KeyCleanup = async (userId, keyId) => {
    if (failNext > 0) {
      failNext--;
      throw new Error('webhook store unavailable');
    }
    seen.push(`${userId}/${keyId}`);
  };
  return { seen, cleanup, failOnce: () => void (failNext = 1) };
}

it('a revoke cleans up its key; a failing clean-up fails the revoke with the key refused, and its retry finishes it', async () => {
  const { seen, cleanup, failOnce } = recording();
  const mgr = new KeyManager(store.client, store.tableName, { clock: fixedClock(new Date(T).toISOString()), cleanups: [cleanup] });
  const { key, info } = await mgr.create({ userId: 'usr_frank', name: 'with webhooks' });
  failOnce();
  await expect(mgr.revoke('usr_frank', info.keyId)).rejects.toThrow('webhook store unavailable');
  expect(await authenticates(store.repository, key)).toBe(false);
  expect(await mgr.revoke('usr_frank', info.keyId).then(() => 'revoked', (e: { code?: string }) => e.code)).toBe('ALREADY_REVOKED');
  expect(seen).toEqual([`usr_frank/${info.keyId}`]);
});

it("a user's deletion cleans up every key it closes, the live ones and those revoked before", async () => {
  const { seen, cleanup } = recording();
  const mgr = new KeyManager(store.client, store.tableName, { clock: fixedClock(new Date(T).toISOString()) });
  const live = await mgr.create({ userId: 'usr_alice', name: 'live' });
  const old = await mgr.create({ userId: 'usr_alice', name: 'old' });
  await mgr.revoke('usr_alice', old.info.keyId);
  const all = (await mgr.store.records('usr_alice')).map((r) => `usr_alice/${r.key_id}`);
  await new ChangeApplier(store.client, store.tableName, { clock: fixedClock(new Date(T).toISOString()), cleanups: [cleanup] }).apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });
  expect(all).toEqual(expect.arrayContaining([`usr_alice/${live.info.keyId}`, `usr_alice/${old.info.keyId}`]));
  expect([...new Set(seen)].sort()).toEqual([...all].sort());
});

it('the sweep cleans up the key whose orphaned plan key it deletes', async () => {
  const { seen, cleanup } = recording();
  let now = T;
  const clock = () => new Date(now);
  const entries: PlanKeyEntry[] = [];
  const planKeys: PlanKeys = {
    create: async (keyId, _u, userId) => {
      entries.push({ id: `apikey-${keyId}`, name: planKeyName(userId, keyId), createdAt: clock() });
      return `apikey-${keyId}`;
    },
    attach: async () => undefined,
    remove: async (id) => void entries.splice(entries.findIndex((e) => e.id === id), 1),
    listPage: async () => ({ entries: [...entries] }),
  };
  // A create cut off between CreateApiKey and recording its id: a record naming no plan key.
  const keyId = 'key_orphan00000000000';
  await batchWriteAll(store.client, store.tableName, [{ ...keys.keyRecord('usr_frank', keyId), type: 'KEY_RECORD', key_id: keyId, key_hash: 'h-orphan', user_id: 'usr_frank', revoked: false }]);
  await planKeys.create(keyId, 'ui', 'usr_frank');
  now += 120_000;
  const mgr = new KeyManager(store.client, store.tableName, { clock, planKeys, cleanups: [cleanup] });
  expect((await sweepPlanKeys(mgr.store)).deleted).toEqual([`apikey-${keyId}`]);
  expect(seen).toEqual([`usr_frank/${keyId}`]);
});
