/**
 * The audit of the revokes an operator command makes (`npm run keys`, a
 * user's deletion through `data:apply`, a resync through `data:load
 * --replace`): the same `Key revoked` line as the key-management function's
 * (lambdas/key-admin/revoke-audit.ts), naming the command as the caller, on
 * stderr, where the operator's terminal or CI job keeps it; and the same
 * `Webhook closed` line for each webhook of those keys (PRODUCT P18: a
 * webhook dies with its key, on the record). No CloudWatch
 * metric: the commands have no CloudWatch client (the project has no
 * dependency on one); the KeyOperations metric counts the function's revokes.
 */
import { readableLogger } from '../lambdas/http/logger.js';
import { noMetrics } from '../lambdas/http/metrics.js';
import { revokeAudit } from '../lambdas/key-admin/revoke-audit.js';
import { webhookAudit } from '../lambdas/key-admin/webhook-audit.js';
import type { WebhookAudit } from '../lambdas/store/webhooks/key-webhooks.js';
import type { RevokeAudit } from '../lambdas/store/keys/key-store.js';

export function operatorAudit(command: string, write?: (line: string) => void): RevokeAudit {
  return revokeAudit(readableLogger(write ? { write } : {}), noMetrics, () => ({ caller: `operator (${command})` }));
}

export function operatorWebhookAudit(command: string, write?: (line: string) => void): WebhookAudit {
  return webhookAudit(readableLogger(write ? { write } : {}), noMetrics, () => ({ caller: `operator (${command})` }));
}
