/**
 * The keys across a resync (`npm run data:load -- FILE --replace`,
 * local/resync.ts): FILE's seeded keys added by a resync hold slots of their
 * user (the counter is raised, as a load would have written it), a seeded
 * key revoked in the table since stays revoked and holds none, running it
 * again changes nothing, and a user FILE removes and a later FILE brings back
 * may make keys again.
 */
import { beforeEach, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { hashApiKey, keyIdFromHash } from '../../lambdas/core/api-key.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { demoDataset } from '../support/fixtures.js';
import { authenticates, slotsOf } from '../support/keys.js';
import { useTestStores, type TestStore } from '../support/store.js';

const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

const clock = fixedClock('2026-11-21T12:00:00.000Z');
const resync = async (file: Dataset) => executeResync(store.client, store.tableName, planResync(await scanTable(store.client, store.tableName), file), { clock });
const seeded = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `pk_seeded_frank_${i}_0123456789abcdefghijklmnop`, user_id: 'usr_frank', name: `seeded ${i}` }));

it("raises the user's slots for the seeded keys it adds, so the limit counts them; a second run changes nothing", async () => {
  const mgr = new KeyManager(store.client, store.tableName, { clock });
  for (let i = 0; i < 8; i++) await mgr.create({ userId: 'usr_frank', name: `made ${i}` });
  const file: Dataset = { ...demoDataset(), api_keys: [...(demoDataset().api_keys ?? []), ...seeded(2)] };
  await resync(file);
  for (const { key } of seeded(2)) expect(await authenticates(store.repository, key)).toBe(true);
  expect((await slotsOf(store.client, store.tableName, 'usr_frank'))?.active).toBe(10);
  await expect(mgr.create({ userId: 'usr_frank', name: 'eleventh' })).rejects.toMatchObject({ code: 'LIMIT_REACHED' });
  const before = JSON.stringify(await slotsOf(store.client, store.tableName, 'usr_frank'));
  await resync(file);
  expect(JSON.stringify(await slotsOf(store.client, store.tableName, 'usr_frank'))).toBe(before);
});

it('leaves a seeded key revoked in the table revoked, holding no slot', async () => {
  const file: Dataset = { ...demoDataset(), api_keys: [...(demoDataset().api_keys ?? []), ...seeded(1)] };
  await resync(file);
  const mgr = new KeyManager(store.client, store.tableName, { clock });
  await mgr.revoke('usr_frank', keyIdFromHash(hashApiKey(seeded(1)[0]!.key)));
  await resync(file);
  expect(await authenticates(store.repository, seeded(1)[0]!.key)).toBe(false);
  expect((await slotsOf(store.client, store.tableName, 'usr_frank'))?.active).toBe(0);
});

it('a user a resync removed and a later one brings back may make keys again', async () => {
  const mgr = new KeyManager(store.client, store.tableName, { clock });
  const { key } = await mgr.create({ userId: 'usr_frank', name: 'before' });
  const d = demoDataset();
  const without: Dataset = { ...d, users: d.users.filter((u) => u.id !== 'usr_frank'), events: d.events.filter((e) => e.creator_id !== 'usr_frank'), rsvps: (d.rsvps ?? []).filter((r) => r.user_id !== 'usr_frank' && d.events.find((e) => e.id === r.event_id)?.creator_id !== 'usr_frank'), api_keys: (d.api_keys ?? []).filter((k) => k.user_id !== 'usr_frank') };
  await resync(without);
  expect(await authenticates(store.repository, key)).toBe(false);
  await expect(mgr.create({ userId: 'usr_frank', name: 'while gone' })).rejects.toMatchObject({ code: 'UNKNOWN_USER' });
  await resync(d);
  expect(await mgr.listAll('usr_frank')).toEqual([]);
  const again = await mgr.create({ userId: 'usr_frank', name: 'after' });
  expect(await authenticates(store.repository, again.key)).toBe(true);
});
