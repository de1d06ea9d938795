/**
 * A deleted user's keys (PRODUCT P3): every key of theirs answers 401 from
 * the deletion on, and their items keep nothing of them but each key's id
 * (key-store.ts, `erase`); their API Gateway plan keys are deleted. Run by the
 * settle of the user's tombstone before its cascade (settle.ts), so by the
 * time the deletion is applied its keys are closed, and a deletion that dies
 * half-way is finished by its redelivery; run by a resync for the users it
 * removes (local/resync.ts).
 *
 * Closing the slots first (at the deletion's version) stops any create that
 * read the user before the deletion from taking one afterwards; a create
 * that took one already is named by it, so its key is retired too, record
 * written or not.
 */
import { systemClock, type Clock } from '../../core/clock.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { KeyStore, type PlanKeys, type RevokeAudit } from './key-store.js';
import type { WebhookAudit } from '../webhooks/key-webhooks.js';

export async function closeUserKeys(store: KeyStore, userId: string, version: number): Promise<void> {
  const holding = await store.closeSlots(userId, version);
  const ids = new Set([...holding, ...(await store.records(userId)).map((r) => r.key_id)]);
  for (const keyId of ids) await store.retire(userId, keyId, { unlessUsable: false, by: 'user deleted' });
  for (const keyId of ids) await store.erase(userId, keyId, 'user deleted');
}

/** What the change path runs for a user's deletion: closeUserKeys on the applier's table (`revokeAudit`: each key's audit line; `webhookAudit`: each of their webhooks'). */
export function userKeysCloser(
  client: DynamoDBDocumentClient,
  tableName: string,
  opts: { clock?: Clock; planKeys?: PlanKeys; revokeAudit?: RevokeAudit; webhookAudit?: WebhookAudit } = {},
): (userId: string, version: number) => Promise<void> {
  const store = new KeyStore(client, tableName, { clock: opts.clock ?? systemClock, planKeys: opts.planKeys, audit: opts.revokeAudit, webhookAudit: opts.webhookAudit });
  return (userId, version) => closeUserKeys(store, userId, version);
}
