/**
 * A webhook lives and dies with its key (PRODUCT P18): the per-key step that
 * a key's revoke and its user's deletion run before they answer (the key
 * manager's revoke, lambdas/store/keys/user-keys.ts). In order, each safe to
 * repeat:
 * 1. the key's places closed: no create takes one afterwards;
 * 2. each webhook that held one becomes a tombstone (`key_closed`, no URL,
 *    no secret): every delivery write is conditional on the webhook being
 *    open, so no send starts from here on, whatever is in flight; a create
 *    still running finds the tombstone and fails;
 * 3. its scope entry deleted (the fan-out stops waking it).
 * Each webhook that was live when it was closed has one audit line: claimed
 * on its tombstone right after step 2 (webhook-table.ts, `claim`), so a
 * closing that failed after its tombstone has the line written by the next
 * closing of the key (a revoke's retry, a redelivered deletion), and two
 * closings at once write one. Without an audit, no claim is made: the next
 * closing with one writes the line.
 */
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../core/clock.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { WebhookRecords } from './webhook-records.js';

export interface WebhookAuditLine {
  event: 'created' | 'deleted' | 'closed' | 'rotated' | 'resumed';
  userId: string;
  keyId: string;
  webhookId: string;
  /** What closed it: the key's revoke, its user's deletion. */
  by?: string;
}

export type WebhookAudit = (line: WebhookAuditLine) => void;

export async function closeKeyWebhooks(records: WebhookRecords, userId: string, keyId: string, by: string, audit?: WebhookAudit, clock: Clock = systemClock): Promise<string[]> {
  const ids = await records.closePlaces(userId, keyId);
  for (const webhookId of ids) {
    const before = await records.closeWebhook(webhookId, clock());
    if (audit && (await records.claimClosed(webhookId, randomUUID()))) audit({ event: 'closed', userId, keyId, webhookId, by });
    if (before?.feed) await records.deleteScopeEntry(before.feed, webhookId);
  }
  return ids;
}

/** The step bound to a table: what the key manager and a user's deletion call per key. */
export function keyWebhooksCloser(client: DynamoDBDocumentClient, tableName: string, audit?: WebhookAudit, clock?: Clock) {
  const records = new WebhookRecords(client, tableName);
  return (userId: string, keyId: string, by: string) => closeKeyWebhooks(records, userId, keyId, by, audit, clock);
}
