/**
 * The key-management function's webhook manager in AWS (PRODUCT P18): what
 * the local server builds in local/server.ts, built from the function's
 * environment (lib/key-admin.ts, lambdas/delivery/settings.ts):
 * - secrets sealed by KMS under the stack's webhook-secrets key, the
 *   webhook id as encryption context (the key's policy lets this role
 *   encrypt and only the delivery function decrypt);
 * - a URL checked by the outbound guard (syntax, then every address its
 *   host resolves to), loopback receivers only under the local setting the
 *   stack never sets;
 * - a webhook with something to deliver at once (a backfill, a start
 *   cursor, a resume) woken on the FIFO queue, in its own message group;
 * - the feeds read as a pull reads them (a backfill's first page, the
 *   scope's head for a start at its next change), cursors sealed with the
 *   feeds' key from Secrets Manager;
 * - every create, delete, rotation, resume and closing on the audit trail,
 *   with the caller, the closings (a revoke, a user's deletion) included.
 */
import { randomUUID } from 'node:crypto';
import { KMSClient } from '@aws-sdk/client-kms';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { systemClock } from '../core/clock.js';
import { DynamoRepository } from '../store/reads/repository.js';
import { kmsSecretBox } from '../store/webhooks/secret-box.js';
import { secretsManagerKeyring } from '../http/cursor-keys.js';
import { errorFields, type LogFields, type Logger } from '../http/logger.js';
import type { MetricsSink } from '../http/metrics.js';
import { checkUrl } from '../delivery/guard/guard.js';
import { WEBHOOK_ENV, guardPolicy, webhookSettings } from '../delivery/settings.js';
import { sqsWakeUps } from '../delivery/wake-ups.js';
import type { KeyManager } from './key-manager.js';
import { webhookAudit } from './webhook-audit.js';
import { WebhookManager, type UrlChecker } from './webhook-manager.js';

export function lambdaWebhookManager(client: DynamoDBDocumentClient, tableName: string, keys: KeyManager, logger: Logger, metrics: MetricsSink, context: () => LogFields): WebhookManager {
  const settings = webhookSettings('keyAdmin', process.env);
  const policy = guardPolicy(settings);
  const repository = new DynamoRepository(client, tableName);
  const wake = sqsWakeUps(new SQSClient({}), settings[WEBHOOK_ENV.wakeUpQueue]);
  const audit = webhookAudit(logger, metrics, context);
  // A key's revoke and a user's deletion close its webhooks: their lines carry who closed them.
  keys.store.webhookAudit = audit;
  const check: UrlChecker = async (raw) => {
    const checked = await checkUrl(raw, policy);
    return checked.ok ? { ok: true } : { ok: false, message: checked.message };
  };
  return new WebhookManager({
    client,
    tableName,
    keys: keys.store,
    feeds: repository,
    events: repository,
    keyring: secretsManagerKeyring(settings[WEBHOOK_ENV.cursorSecret], undefined, systemClock, (error) => logger.warn('Cursor key secret not read', errorFields(error))),
    secrets: kmsSecretBox(settings[WEBHOOK_ENV.secretsKey], new KMSClient({})),
    checkUrl: check,
    // Each request's wake-up is its own (a create's or resume's retry wakes again, which costs one empty run at most).
    nudge: (webhookId) => wake([{ webhookId, dedupId: `${webhookId}.admin.${randomUUID()}` }]),
    siteUrl: settings[WEBHOOK_ENV.siteUrl],
    audit,
    clock: systemClock,
  });
}
