/**
 * Issue 45, k3: a key belongs to a user id, never to a username. Usernames
 * change and are reused: while two renames arrive out of order (the source's
 * dave -> dave2, then frank -> dave, frank's applied first) two live users
 * share "dave". A key made then for frank is frank's (the web product names
 * him by id), listed and revocable by him, and stops authenticating once he
 * revokes it; the operator CLI's username lookup refuses the shared name as
 * ambiguous instead of picking one. Adopted from the review's reproducer.
 */
import { beforeEach, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { KeyManagementError, KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { demoDataset } from '../support/fixtures.js';
import { authenticates } from '../support/keys.js';
import { useTestStores, type TestStore } from '../support/store.js';

const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof KeyManagementError ? e.code : String(e)));

it('a key created for a user while another briefly shares their username is theirs: listed and revocable by their id, then refused', async () => {
  const clock = fixedClock('2026-11-21T12:00:00.000Z');
  const users = demoDataset().users;
  const dave = users.find((u) => u.id === 'usr_dave')!;
  const frank = users.find((u) => u.id === 'usr_frank')!;
  const applier = new ChangeApplier(store.client, store.tableName, { clock });
  const mgr = new KeyManager(store.client, store.tableName, { clock });

  // frank's rename (second in the source) arrives first: both live users are "dave" in the read model.
  await applier.apply({ type: 'user.upserted', version: 2, user: { ...frank, username: 'dave' } });
  // The web product creates a key for frank, by his id, and shows it to him.
  const made = await mgr.createOnce({ idempotencyKey: 'frank-key-000001', userId: 'usr_frank', name: "frank's key" });
  if (!made.created) throw new Error('expected a new key');
  // The operator CLI, given the shared username, refuses it rather than pick one of the two.
  expect(await codeOf(mgr.resolveUsername('dave'))).toBe('AMBIGUOUS_USER');
  // dave's rename arrives.
  await applier.apply({ type: 'user.upserted', version: 2, user: { ...dave, username: 'dave2' } });
  expect(await mgr.resolveUsername('dave')).toBe('usr_frank');

  // frank revokes the key he was shown, by his id.
  const revoke = await codeOf(mgr.revoke('usr_frank', made.info.keyId));
  expect({
    userId: made.userId,
    inFranksList: (await mgr.listAll('usr_frank')).some((k) => k.keyId === made.info.keyId),
    inDavesList: (await mgr.listAll('usr_dave')).some((k) => k.keyId === made.info.keyId),
    revoke,
    stillAuthenticates: await authenticates(store.repository, made.key),
  }).toEqual({ userId: 'usr_frank', inFranksList: true, inDavesList: false, revoke: 'ok', stillAuthenticates: false });
});

it('refuses a key for an id that is no live user (404 UNKNOWN_USER), and a username nobody holds as unknown', async () => {
  const clock = fixedClock('2026-11-21T12:00:00.000Z');
  const mgr = new KeyManager(store.client, store.tableName, { clock });
  await new ChangeApplier(store.client, store.tableName, { clock }).apply({ type: 'user.deleted', version: 5, user_id: 'usr_dave' });
  expect(await codeOf(mgr.create({ userId: 'usr_dave', name: 'after deletion' }))).toBe('UNKNOWN_USER');
  expect(await codeOf(mgr.create({ userId: 'usr_nobody', name: 'never was' }))).toBe('UNKNOWN_USER');
  expect(await codeOf(mgr.create({ userId: 'dave', name: 'a username' }))).toBe('UNKNOWN_USER');
  expect(await codeOf(mgr.resolveUsername('dave'))).toBe('UNKNOWN_USER');
});

it("scopes idempotency keys by user: one user's key never meets, nor reveals, another user's", async () => {
  const mgr = new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-21T12:00:00.000Z') });
  const frank = await mgr.createOnce({ idempotencyKey: 'shared-idem-0001', userId: 'usr_frank', name: 'laptop' });
  // The same idempotency key for another user is that user's own first request: a new key, not a 422.
  const alice = await mgr.createOnce({ idempotencyKey: 'shared-idem-0001', userId: 'usr_alice', name: 'laptop' });
  expect([frank.created, alice.created, alice.info.keyId === frank.info.keyId]).toEqual([true, true, false]);
  // Each user's retry answers their own key.
  const again = await mgr.createOnce({ idempotencyKey: 'shared-idem-0001', userId: 'usr_alice', name: 'laptop' });
  expect([again.created, again.info.keyId]).toEqual([false, alice.info.keyId]);
  const refusal = await mgr.createOnce({ idempotencyKey: 'shared-idem-0001', userId: 'usr_alice', name: 'phone' }).catch((e: KeyManagementError) => e);
  expect(refusal).toMatchObject({ code: 'IDEMPOTENCY_MISMATCH', message: expect.not.stringMatching(/another user|frank|usr_frank/) });
});
