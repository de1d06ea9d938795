/**
 * The key-management function's audit: every create, replayed create, revoke
 * and refusal is one KeyOperations count by operation and one log line with
 * the IAM caller, never the key or its hash; an unexpected failure is a bare
 * 500 (logged), never a stack or a half-made key.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { hashApiKey } from '../../lambdas/core/api-key.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { buildKeyAdmin, type KeyAdminHandler } from '../../lambdas/key-admin/handler.js';
import { KEY_ADMIN_BASE_PATH, type KeyAdminRoute } from '../../lambdas/key-admin/routes.js';
import type { LogFields } from '../../lambdas/http/logger.js';
import { KEY_OPERATIONS, type MetricValue } from '../../lambdas/http/metrics.js';
import { KeyManager } from '../../keys/key-manager.js';
import { demoDataset } from '../support/fixtures.js';
import { startTestStore, type TestStore } from '../support/store.js';

const CALLER = 'arn:aws:sts::123456789012:assumed-role/web-product/i-0abc';
let store: TestStore;
let handler: KeyAdminHandler;
let published: { dimensions: Record<string, string>; values: readonly MetricValue[] }[];
let lines: { level: string; message: string; fields: LogFields }[];

beforeEach(async () => {
  store = await startTestStore(demoDataset());
  published = [];
  lines = [];
  const log = (level: string) => (message: string, ...fields: LogFields[]) => void lines.push({ level, message, fields: Object.assign({}, ...fields) as LogFields });
  handler = buildKeyAdmin({
    manager: new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-21T12:00:00.000Z') }),
    logger: { debug: log('DEBUG'), info: log('INFO'), warn: log('WARN'), error: log('ERROR') },
    metrics: { publish: (dimensions, values) => void published.push({ dimensions: { ...dimensions }, values }) },
  });
});
afterEach(async () => store?.close());

function event(method: KeyAdminRoute['method'], path: KeyAdminRoute['path'], opts: { body?: unknown; pathParameters?: Record<string, string> } = {}): APIGatewayProxyEvent {
  return {
    resource: `${KEY_ADMIN_BASE_PATH}${path}`,
    httpMethod: method,
    body: opts.body === undefined ? null : JSON.stringify(opts.body),
    isBase64Encoded: false,
    pathParameters: opts.pathParameters ?? null,
    requestContext: { identity: { userArn: CALLER, caller: 'AROAEXAMPLE:i-0abc' } },
  } as unknown as APIGatewayProxyEvent; // the fields the handler reads
}
const counted = () => published.map((p) => [p.dimensions.operation, p.values.map((v) => `${v.name}=${v.value}`).join(',')]);

describe('audit', () => {
  it('counts and logs each operation with the caller and key id, never the key or its hash', async () => {
    const body = { idempotencyKey: 'audit-0001', username: 'frank', name: 'Audit' };
    const created = await handler(event('POST', '/keys', { body }));
    expect(created.statusCode).toBe(201);
    const { key, keyId } = (JSON.parse(created.body) as { data: { key: string; keyId: string } }).data;
    expect((await handler(event('POST', '/keys', { body }))).statusCode).toBe(200);
    expect((await handler(event('DELETE', '/keys/{keyId}', { pathParameters: { keyId } }))).statusCode).toBe(200);
    expect((await handler(event('DELETE', '/keys/{keyId}', { pathParameters: { keyId } }))).statusCode).toBe(409);
    expect((await handler(event('GET', '/users/{username}/keys', { pathParameters: { username: 'frank' } }))).statusCode).toBe(200);

    expect(counted()).toEqual([
      ['created', 'KeyOperations=1'],
      ['replayed', 'KeyOperations=1'],
      ['revoked', 'KeyOperations=1'],
      ['refused', 'KeyOperations=1'],
    ]);
    expect(new Set(counted().map(([op]) => op))).toEqual(new Set(KEY_OPERATIONS));
    expect(lines.map((l) => [l.level, l.message, l.fields.caller])).toEqual([
      ['INFO', 'Key created', CALLER],
      ['INFO', 'Key create replayed', CALLER],
      ['INFO', 'Key revoked', CALLER],
      ['WARN', 'Key management request refused', CALLER],
    ]);
    expect(lines[0]!.fields).toMatchObject({ username: 'frank', keyId });
    expect(lines[2]!.fields).toMatchObject({ keyId });
    expect(lines[3]!.fields).toMatchObject({ operation: 'revoke', code: 'ALREADY_REVOKED', field: 'keyId' });
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain(key);
    expect(logged).not.toContain(hashApiKey(key));
  });

  it('answers an unexpected failure with a bare 500 and logs it', async () => {
    // A table that does not exist: every call fails as an unexpected error would.
    const broken = buildKeyAdmin({
      manager: new KeyManager(store.client, 'no-such-table'),
      logger: { debug: () => {}, info: () => {}, warn: () => {}, error: (message: string, ...fields: LogFields[]) => void lines.push({ level: 'ERROR', message, fields: Object.assign({}, ...fields) as LogFields }) },
      metrics: { publish: (dimensions, values) => void published.push({ dimensions: { ...dimensions }, values }) },
    });
    const res = await broken(event('POST', '/keys', { body: { idempotencyKey: 'audit-0002', username: 'frank', name: 'x' } }));
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body)).toEqual({ success: false, message: 'Internal server error.' });
    expect(lines.find((l) => l.level === 'ERROR')).toMatchObject({ message: 'Key management failed', fields: { caller: CALLER, operation: 'create' } });
    expect(published).toEqual([]);
  });

  it('answers a method or resource it does not serve with 404', async () => {
    const res = await handler({ ...event('GET', '/keys'), httpMethod: 'PUT' });
    expect(res.statusCode).toBe(404);
  });
});
