/**
 * What else a key holds dies with it (PRODUCT P18: its webhooks), through
 * the one per-key step a key's close joins (KeyRecords.closeHoldings):
 * every retire runs it, and so does a deletion's close for a key it finds
 * revoked already, which it erases without retiring it again (issue 57's
 * bounded close). So a key whose revoke was cut off after it flipped and
 * before its webhooks were closed has them closed by its user's deletion,
 * like the live keys'.
 */
import { beforeEach, expect, it } from '@jest/globals';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../../lambdas/core/clock.js';
import { hashApiKey } from '../../lambdas/core/api-key.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { batchWriteAll } from '../../lambdas/store/table/batch-write.js';
import { keys } from '../../lambdas/store/table/table.js';
import { webhookKeys } from '../../lambdas/store/webhooks/webhook-items.js';
import { WebhookRecords } from '../../lambdas/store/webhooks/webhook-records.js';
import { demoDataset } from '../support/fixtures.js';
import { useTestStores, type TestStore } from '../support/store.js';

const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});
const clock = fixedClock('2026-11-21T12:00:00.000Z');

/** A webhook of the key, as the webhook manager leaves one: the key's places name it, its item is open. */
async function webhookOf(userId: string, keyId: string, webhookId: string): Promise<void> {
  await batchWriteAll(store.client, store.tableName, [
    { ...webhookKeys.keyHooks(userId, keyId), type: 'KEYHOOKS', hooks: { [webhookId]: '2026-11-21T11:00:00.000Z' }, rev: 1 },
    { ...webhookKeys.webhook(webhookId), type: 'WEBHOOK', webhook_id: webhookId, user_id: userId, key_id: keyId, scope: { kind: 'catalogue' }, feed: 'EVENTS', url: 'https://hooks.example/in', secret: 'sealed', state: 'active' },
  ]);
}

it("a user's deletion closes the webhooks of every key of theirs, a live one's and those of a key whose revoke was cut off before closing them", async () => {
  const mgr = new KeyManager(store.client, store.tableName, { clock });
  const live = await mgr.create({ userId: 'usr_alice', name: 'live' });
  const cut = await mgr.create({ userId: 'usr_alice', name: 'revoked, cut off' });
  await webhookOf('usr_alice', live.info.keyId, 'wh_live');
  await webhookOf('usr_alice', cut.info.keyId, 'wh_cut');
  // A revoke cut off after its flip (the authorizer's item and the record revoked, the line written), before the webhooks.
  await store.client.send(new UpdateCommand({ TableName: store.tableName, Key: keys.apiKey(hashApiKey(cut.key)), UpdateExpression: 'SET revoked = :t', ExpressionAttributeValues: { ':t': true } }));
  await store.client.send(new UpdateCommand({ TableName: store.tableName, Key: keys.keyRecord('usr_alice', cut.info.keyId), UpdateExpression: 'SET revoked = :t, revoked_by = :by, audited = :a', ExpressionAttributeValues: { ':t': true, ':by': 'revoke', ':a': 'claim' } }));
  await mgr.store.releaseSlot('usr_alice', cut.info.keyId);

  await new ChangeApplier(store.client, store.tableName, { clock }).apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });

  const records = new WebhookRecords(store.client, store.tableName);
  const state = async (id: string) => {
    const w = await records.webhook(id);
    return { key_closed: w?.key_closed ?? false, url: w?.url ?? null, secret: w?.secret ?? null };
  };
  expect({ live: await state('wh_live'), cut: await state('wh_cut') }).toEqual({ live: { key_closed: true, url: null, secret: null }, cut: { key_closed: true, url: null, secret: null } });
  // Both keys erased, as the close leaves every key of a deleted user.
  expect((await mgr.store.recordPage('usr_alice', { limit: 100 })).records).toEqual([]);
});
