/**
 * The key-management function as the handler tests build it: the real
 * handler and KeyManager on a test store, with a clock fixed at noon, its log
 * lines and metrics captured for the audit assertions, and API Gateway's
 * event for a route, as an IAM-signed call from the web product.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { fixedClock } from '../../lambdas/core/clock.js';
import { buildKeyAdmin, type KeyAdminHandler } from '../../lambdas/key-admin/handler.js';
import { KeyManager, type PlanKeys } from '../../lambdas/key-admin/key-manager.js';
import { KEY_ADMIN_BASE_PATH, type KeyAdminRoute } from '../../lambdas/key-admin/routes.js';
import type { LogFields } from '../../lambdas/http/logger.js';
import type { MetricValue } from '../../lambdas/http/metrics.js';
import type { TestStore } from './store.js';

/** The IAM caller every event comes from. */
export const CALLER = 'arn:aws:sts::123456789012:assumed-role/web-product/i-0abc';

export interface LoggedLine {
  level: string;
  message: string;
  fields: LogFields;
}
export interface PublishedMetrics {
  dimensions: Record<string, string>;
  values: readonly MetricValue[];
}

/** The handler, and what it logged and published so far (arrays it appends to; empty one with `.length = 0`). */
export interface AuditedKeyAdmin {
  handler: KeyAdminHandler;
  lines: LoggedLine[];
  published: PublishedMetrics[];
}

/** `planKeys`: API Gateway's half of each key (none by default, as locally). */
export function auditedKeyAdmin(store: TestStore, opts: { planKeys?: PlanKeys } = {}): AuditedKeyAdmin {
  const lines: LoggedLine[] = [];
  const published: PublishedMetrics[] = [];
  const log = (level: string) => (message: string, ...fields: LogFields[]) => void lines.push({ level, message, fields: Object.assign({}, ...fields) as LogFields });
  const handler = buildKeyAdmin({
    manager: new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-21T12:00:00.000Z'), ...(opts.planKeys ? { planKeys: opts.planKeys } : {}) }),
    logger: { debug: log('DEBUG'), info: log('INFO'), warn: log('WARN'), error: log('ERROR') },
    metrics: { publish: (dimensions, values) => void published.push({ dimensions: { ...dimensions }, values }) },
  });
  return { handler, lines, published };
}

/** API Gateway's event for a key-management route, signed by CALLER. */
export function keyAdminEvent(method: KeyAdminRoute['method'], path: KeyAdminRoute['path'], opts: { body?: unknown; pathParameters?: Record<string, string> } = {}): APIGatewayProxyEvent {
  return {
    resource: `${KEY_ADMIN_BASE_PATH}${path}`,
    httpMethod: method,
    body: opts.body === undefined ? null : JSON.stringify(opts.body),
    isBase64Encoded: false,
    pathParameters: opts.pathParameters ?? null,
    requestContext: { identity: { userArn: CALLER, caller: 'AROAEXAMPLE:i-0abc' } },
  } as unknown as APIGatewayProxyEvent; // the fields the handler reads
}
