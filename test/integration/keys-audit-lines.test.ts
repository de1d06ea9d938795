/**
 * Every key-management audit line names its subject (issue 37, defect 4,
 * adopted from the security review's reproducer): a refusal carries the
 * caller, the username and, where there is one, the key id, as creates,
 * replays and revokes do, so "who tried to make an 11th key" and "which key
 * did the web product try to revoke twice" are answered by the log, and the
 * operations runbook's `stats count() by caller, username` counts refusals
 * too (docs/managing-keys.md, "Audit").
 */
import { beforeEach, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { fixedClock } from '../../lambdas/core/clock.js';
import { buildKeyAdmin, type KeyAdminHandler } from '../../lambdas/key-admin/handler.js';
import { KEY_ADMIN_BASE_PATH, type KeyAdminRoute } from '../../lambdas/key-admin/routes.js';
import type { LogFields } from '../../lambdas/http/logger.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { demoDataset } from '../support/fixtures.js';
import { useTestStores, type TestStore } from '../support/store.js';

const CALLER = 'arn:aws:sts::123456789012:assumed-role/web-product/i-0abc';
let store: TestStore;
let handler: KeyAdminHandler;
let lines: { level: string; message: string; fields: LogFields }[];

const stores = useTestStores(demoDataset);
beforeEach(async () => {
  store = stores();
  lines = [];
  const log = (level: string) => (message: string, ...fields: LogFields[]) => void lines.push({ level, message, fields: Object.assign({}, ...fields) as LogFields });
  handler = buildKeyAdmin({
    manager: new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-21T12:00:00.000Z') }),
    logger: { debug: log('DEBUG'), info: log('INFO'), warn: log('WARN'), error: log('ERROR') },
    metrics: { publish: () => undefined },
  });
});

function event(method: KeyAdminRoute['method'], path: KeyAdminRoute['path'], opts: { body?: unknown; pathParameters?: Record<string, string> } = {}): APIGatewayProxyEvent {
  return {
    resource: `${KEY_ADMIN_BASE_PATH}${path}`,
    httpMethod: method,
    body: opts.body === undefined ? null : JSON.stringify(opts.body),
    isBase64Encoded: false,
    pathParameters: opts.pathParameters ?? null,
    requestContext: { identity: { userArn: CALLER, caller: 'AROAEXAMPLE:i-0abc' } },
  } as unknown as APIGatewayProxyEvent;
}

it('every create, replay, revoke and refusal line names the caller, the username and the key id', async () => {
  const made: string[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await handler(event('POST', '/keys', { body: { idempotencyKey: `audit-${i}-00000`, username: 'frank', name: `k${i}` } }));
    made.push((JSON.parse(res.body) as { data: { keyId: string } }).data.keyId);
  }
  lines = [];
  const revoke = (keyId: string) => event('DELETE', '/users/{username}/keys/{keyId}', { pathParameters: { username: 'frank', keyId } });
  // An 11th key (refused), a revoke, a second revoke of it (refused), an idempotency key reused for another name (refused), a replay.
  expect((await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-11-00000', username: 'frank', name: 'eleventh' } }))).statusCode).toBe(409);
  expect((await handler(revoke(made[0]!))).statusCode).toBe(200);
  expect((await handler(revoke(made[0]!))).statusCode).toBe(409);
  expect((await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-1-00000', username: 'frank', name: 'other' } }))).statusCode).toBe(422);
  expect((await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-2-00000', username: 'frank', name: 'k2' } }))).statusCode).toBe(200);

  const subjects = lines.map((l) => ({ message: l.message, code: l.fields.code, caller: l.fields.caller, username: l.fields.username, keyId: l.fields.keyId }));
  expect(subjects).toEqual([
    { message: 'Key management request refused', code: 'LIMIT_REACHED', caller: CALLER, username: 'frank', keyId: undefined },
    { message: 'Key revoked', code: undefined, caller: CALLER, username: 'frank', keyId: made[0] },
    { message: 'Key management request refused', code: 'ALREADY_REVOKED', caller: CALLER, username: 'frank', keyId: made[0] },
    { message: 'Key management request refused', code: 'IDEMPOTENCY_MISMATCH', caller: CALLER, username: 'frank', keyId: undefined },
    { message: 'Key create replayed', code: undefined, caller: CALLER, username: 'frank', keyId: made[2] },
  ]);
});
