/**
 * The metrics port and the metrics this service emits. In Lambda the sink is
 * Powertools Metrics writing CloudWatch EMF (lambdas/http/powertools.ts); the
 * local server and unit tests use `noMetrics`. The CDK dashboard and alarms
 * (lib/monitoring.ts) read the same names, so they cannot drift apart.
 *
 * Dimensions are few and bounded: a route id (from lambdas/routes.ts), a
 * status class, an authorizer outcome, a change result. Never a username, a
 * key id, an event id or anything else a request chooses.
 */
export const METRICS = {
  /** Every HTTP request, by `route` and `statusClass`. */
  requests: 'Requests',
  /** Requests answered 5xx, by `route` and `statusClass`: failures the envelope caught, which Lambda's own Errors metric never counts. */
  errors: 'Errors',
  /** Every authorizer decision, by `outcome`. */
  authorizerDecisions: 'AuthorizerDecisions',
  /** Every change record the ingest handled, by `result`. */
  changes: 'Changes',
  /** Items written for one change (its fan-out), by `result`. */
  changeWrites: 'ChangeWrites',
  /** Events re-derived for one change, by `result`. */
  changeDerivations: 'ChangeDerivations',
  /** Seconds from the change's `occurred_at` (when the record has one) to its handling, by `result`. */
  changeLag: 'ChangeLag',
  /** Every request of the key-management API that did something or was refused, by `operation` (lambdas/key-admin/handler.ts). */
  keyOperations: 'KeyOperations',
  /** Every delivery attempt of a webhook (PRODUCT P18), by `result` (DELIVERY_RESULTS). */
  webhookDeliveries: 'WebhookDeliveries',
  /** Seconds from a delivery's first attempt to its 2xx: 0 when the first attempt is acknowledged. */
  webhookDeliveryLag: 'WebhookDeliveryLag',
  /** Webhooks disabled (a 410, 3 days failing), by `result` (`gone`, `failing`). */
  webhooksDisabled: 'WebhooksDisabled',
  /** Webhooks woken by the fan-out for a change of their scope. */
  webhookNudges: 'WebhookNudges',
  /** Seconds a webhook's wake-up waited in the queue for a delivery function, counted at its first receive (retries excluded). */
  webhookWakeLag: 'WebhookWakeLag',
} as const;

export type MetricName = (typeof METRICS)[keyof typeof METRICS];

export const DIMENSIONS = {
  route: 'route',
  statusClass: 'statusClass',
  outcome: 'outcome',
  result: 'result',
  operation: 'operation',
} as const;

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

export const AUTHORIZER_OUTCOMES = ['allowed', 'unauthenticated', 'insufficient_scope', 'error'] as const;
export type AuthorizerOutcome = (typeof AUTHORIZER_OUTCOMES)[number];

/**
 * `incomplete`: a fan-out stopped for time (its redelivery resumes it);
 * `throttled`: DynamoDB refused for throughput (it comes back with backoff);
 * `failed`: anything else that threw.
 */
export const CHANGE_RESULTS = ['applied', 'stale', 'waiting', 'invalid', 'incomplete', 'throttled', 'failed'] as const;
export type ChangeResult = (typeof CHANGE_RESULTS)[number];

/** `replayed`: a retried create answered with the key id it made before; `refused`: every 4xx. */
export const KEY_OPERATIONS = ['created', 'replayed', 'revoked', 'refused'] as const;
export type KeyOperation = (typeof KEY_OPERATIONS)[number];

/** A delivery attempt: acknowledged (2xx), answered otherwise, not answered (timeout, connection, TLS, too large), refused by the guard. */
export const DELIVERY_RESULTS = ['delivered', 'rejected', 'unanswered', 'refused'] as const;
export type DeliveryResult = (typeof DELIVERY_RESULTS)[number];

export interface MetricValue {
  name: MetricName;
  unit: 'Count' | 'Seconds';
  value: number;
}

export interface MetricsSink {
  /** One EMF document: these values under exactly these dimensions, published at once. */
  publish(dimensions: Readonly<Record<string, string>>, values: readonly MetricValue[]): void;
}

export const noMetrics: MetricsSink = { publish: () => {} };

export function statusClass(statusCode: number): StatusClass {
  if (statusCode >= 500) return '5xx';
  if (statusCode >= 400) return '4xx';
  if (statusCode >= 300) return '3xx';
  return '2xx';
}
