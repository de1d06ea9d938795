/**
 * A deleted user's keys (issue 37, defect 5, adopted from the security
 * review's reproducer; PRODUCT P3): from the deletion on, every key of theirs
 * answers 401, their API Gateway plan keys are deleted, and their key items
 * keep nothing of them but each key's id (docs/keys-and-quota.md). The web
 * product finds the user gone (UNKNOWN_USER): there is nothing left to list
 * or revoke. The same whether the deletion is a change record applied with
 * the applier (`npm run data:apply`), through the ingest Lambda, or a resync
 * (`npm run data:load -- FILE --replace`) of a file without the user; a user
 * a later change brings back starts with no keys and may make new ones.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { fixedClock } from '../../lambdas/core/clock.js';
import { KeyManager, type PlanKeys } from '../../lambdas/key-admin/key-manager.js';
import { buildKeyAdminFunction } from '../../lambdas/key-admin/handler.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { closeOutcome } from '../../lambdas/ingest/key-closer.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { sqsEvent } from '../support/events.js';
import { KEYS, demoDataset } from '../support/fixtures.js';
import { authenticates, withoutUser } from '../support/keys.js';
import { useTestStores, type TestStore } from '../support/store.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';

// One store for the file, a fresh table per test (test/support/store.ts).
const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

const T = '2026-11-21T12:00:00.000Z';
const clock = fixedClock(T);

/** API Gateway's plan keys in memory: made, attached, deleted. */
function fakePlan() {
  const live = new Map<string, { keyId: string; attached: boolean }>();
  let n = 0;
  const planKeys: PlanKeys = {
    create: async (keyId) => {
      const id = `apikey${++n}`;
      live.set(id, { keyId, attached: false });
      return id;
    },
    attach: async (id) => void (live.get(id)!.attached = true),
    remove: async (id) => void live.delete(id),
  };
  return { planKeys, live };
}

/** Every item of alice's keys (her slot record, her key records, their authorizer items), as stored. */
async function aliceKeyItems(hashes: string[]): Promise<Record<string, unknown>[]> {
  const items = ((await store.client.send(new ScanCommand({ TableName: store.tableName, ConsistentRead: true }))).Items ?? []) as Record<string, unknown>[];
  return items.filter((i) => String(i.pk).startsWith('USERKEYS#usr_alice') || hashes.some((h) => i.pk === `APIKEY#${h}`));
}

type Deletion = (planKeys: PlanKeys) => Promise<void>;
const deletions: [string, Deletion][] = [
  ['a change record (the applier, as data:apply runs it)', async (planKeys) => void (await new ChangeApplier(store.client, store.tableName, { clock, planKeys }).apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' }))],
  [
    "the ingest Lambda, invoking the key-management function's close task (as in AWS)",
    async (planKeys) => {
      const keyAdmin = buildKeyAdminFunction({ manager: new KeyManager(store.client, store.tableName, { clock, planKeys }), logger: recordingLogger(), metrics: recordingMetrics() });
      const closeUserKeys = async (userId: string, version: number) => closeOutcome(userId, await keyAdmin({ task: 'close', userId, version }));
      const ingest = buildIngest({ client: store.client, tableName: store.tableName, logger: recordingLogger(), metrics: recordingMetrics(), clock, continueLater: async () => undefined, closeUserKeys });
      const out = await ingest(sqsEvent([JSON.stringify({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' })]), { awsRequestId: 'r', getRemainingTimeInMillis: () => 60_000 } as unknown as Context);
      expect(out.batchItemFailures).toEqual([]);
    },
  ],
  [
    'a resync of a file without the user',
    async (planKeys) => {
      const without = withoutUser(demoDataset(), 'usr_alice');
      await executeResync(store.client, store.tableName, planResync(await scanTable(store.client, store.tableName), without), { clock, planKeys });
    },
  ],
];

describe.each(deletions)("alice's deletion through %s", (_, remove) => {
  it('closes every key of hers at once (seeded and made, guests:read included), deletes their plan keys, and keeps nothing of her but the key ids', async () => {
    const { planKeys, live } = fakePlan();
    const mgr = new KeyManager(store.client, store.tableName, { clock, planKeys });
    const { key, info } = await mgr.create({ userId: 'usr_alice', name: 'Integration for Alice Smith' });
    const revoked = await mgr.create({ userId: 'usr_alice', name: 'Old laptop' });
    await mgr.revoke('usr_alice', revoked.info.keyId);
    expect(await authenticates(store.repository, key)).toBe(true);
    expect([...live.values()]).toEqual([{ keyId: info.keyId, attached: true }]);
    const hashes = (await mgr.store.records('usr_alice')).map((r) => r.key_hash!);

    await remove(planKeys);

    expect({
      createdKey: await authenticates(store.repository, key),
      seededKey: await authenticates(store.repository, KEYS.both),
      seededEventsOnly: await authenticates(store.repository, KEYS.eventsOnly),
      list: await mgr.listAll('usr_alice').then((l) => `${l.length} keys`, (e: { code?: string }) => e.code),
      planKeys: [...live.keys()],
    }).toEqual({ createdKey: false, seededKey: false, seededEventsOnly: false, list: 'UNKNOWN_USER', planKeys: [] });

    // What stays: the authorizer's items (revoked, so no create can bring a key back), the records and the slot record, each with ids only.
    const items = await aliceKeyItems(hashes);
    expect(items.length).toBe(1 + 2 * hashes.length);
    const leftover = (item: Record<string, unknown>) => Object.keys(item).filter((k) => !['pk', 'sk', 'type', 'key_id', 'revoked', 'erased', 'user_id', 'active', 'holders', 'rev', 'day', 'created', 'closed_version'].includes(k));
    for (const item of items) expect({ pk: item.pk, extra: leftover(item) }).toEqual({ pk: item.pk, extra: [] });
    // No key's name, scope, hash or time; the slot record's day and count of creates stay (below), and are no key's.
    const text = JSON.stringify(items.map(({ day: _day, ...item }) => item));
    for (const word of ['Integration for Alice Smith', 'Old laptop', 'Demo key', 'events:read', '2026-11-21', ...hashes]) expect(text.includes(`"${word}"`) || text.includes(`:${word}"`)).toBe(false);
    // The slot record keeps her id (as her tombstone does), nothing held, and the day's count of creates (so the same id
    // brought back that day goes on from it: keys-daily-bound.test.ts); the records and authorizer items keep only key ids.
    expect(items.filter((i) => i.user_id !== undefined).map((i) => ({ sk: i.sk, holders: i.holders, day: i.day, created: i.created }))).toEqual([{ sk: 'COUNTER', holders: {}, day: '2026-11-21', created: 2 }]);
  });
});

it('a deletion applied twice (a redelivery) changes nothing more', async () => {
  const { planKeys } = fakePlan();
  const applier = new ChangeApplier(store.client, store.tableName, { clock, planKeys });
  await applier.apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });
  const after = JSON.stringify(await aliceKeyItems([]));
  await applier.apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });
  expect(JSON.stringify(await aliceKeyItems([]))).toBe(after);
});

it('a user brought back by a newer change starts with no keys and can make new ones; a create that read her before the deletion is refused', async () => {
  const applier = new ChangeApplier(store.client, store.tableName, { clock });
  await applier.apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });
  await applier.apply({ type: 'user.upserted', version: 1001, user: { id: 'usr_alice', username: 'alice' } } as never);
  const mgr = new KeyManager(store.client, store.tableName, { clock });
  expect(await mgr.listAll('usr_alice')).toEqual([]);
  const { key } = await mgr.create({ userId: 'usr_alice', name: 'Fresh start' });
  expect(await authenticates(store.repository, key)).toBe(true);
  // A slot taken for the user as read at the deleted version: refused.
  expect(await mgr.store.reserve('usr_alice', 'key_stale0000000000000', new Date(T), 1000)).toEqual({ refused: 'USER_GONE' });
});

it('a deletion through a table with plan keys and no API Gateway client fails (and is retried), with every key already closed', async () => {
  const { planKeys } = fakePlan();
  const { key } = await new KeyManager(store.client, store.tableName, { clock, planKeys }).create({ userId: 'usr_alice', name: 'AWS key' });
  await expect(new ChangeApplier(store.client, store.tableName, { clock }).apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' })).rejects.toThrow('has an API Gateway plan key');
  expect(await authenticates(store.repository, key)).toBe(false);
  // The redelivery, with the client, finishes it.
  await new ChangeApplier(store.client, store.tableName, { clock, planKeys }).apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });
  expect((await aliceKeyItems([])).filter((i) => i.sk !== 'COUNTER').every((i) => i.erased === true)).toBe(true);
});
