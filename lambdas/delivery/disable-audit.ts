/**
 * Every disable of a webhook on the audit trail (PRODUCT P18: "every disable
 * has an audit line with user, key and webhook ids"), once: the line is
 * claimed on the webhook's item (DeliveryState.claimDisabled) by the run
 * that disabled it, or, when that run failed after its disable landed (a
 * lost answer, a crash, a throttle on the next call), by the next run that
 * meets the webhook disabled and not yet on the record. The fan-out stops
 * waking it first (its scope entry), then the one that holds the claim
 * writes the line and counts it: a run that fails on the way leaves the
 * claim to the next one, which does both.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../http/logger.js';
import { DIMENSIONS, METRICS, type MetricsSink } from '../http/metrics.js';
import type { DeliveryState } from '../store/webhooks/delivery-state.js';
import type { WebhookItem } from '../store/webhooks/webhook-items.js';

/** Whether a webhook's item is a disable (410, or 3 days failing) whose line is still to be written. */
export const disableUnaudited = (item: WebhookItem): boolean =>
  item.state === 'disabled' && (item.disabled_reason === 'gone' || item.disabled_reason === 'failing') && !item.key_closed && !item.deleted_at && !item.audited_disabled;

export async function auditDisable(deps: { state: DeliveryState; logger: Logger; metrics: MetricsSink }, item: WebhookItem | undefined): Promise<void> {
  if (!item || !disableUnaudited(item)) return;
  await deps.state.setScopeState(item.feed, item.webhook_id, 'disabled');
  if (!(await deps.state.claimDisabled(item.webhook_id, randomUUID()))) return;
  const reason = item.disabled_reason!;
  deps.logger.warn('Webhook disabled', { userId: item.user_id, keyId: item.key_id, webhookId: item.webhook_id, reason, disabledAt: item.disabled_at, lastFailure: item.last_failure });
  deps.metrics.publish({ [DIMENSIONS.result]: reason }, [{ name: METRICS.webhooksDisabled, unit: 'Count', value: 1 }]);
}
