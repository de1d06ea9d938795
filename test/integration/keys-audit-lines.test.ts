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
import type { KeyAdminHandler } from '../../lambdas/key-admin/handler.js';
import { demoDataset } from '../support/fixtures.js';
import { auditedKeyAdmin, CALLER, keyAdminEvent as event, type LoggedLine } from '../support/key-admin-handler.js';
import { useTestStores } from '../support/store.js';

let handler: KeyAdminHandler;
let lines: LoggedLine[];

const stores = useTestStores(demoDataset);
beforeEach(() => {
  ({ handler, lines } = auditedKeyAdmin(stores()));
});

it('every create, replay, revoke and refusal line names the caller, the user id and the key id', async () => {
  const made: string[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await handler(event('POST', '/keys', { body: { idempotencyKey: `audit-${i}-00000`, userId: 'usr_frank', name: `k${i}` } }));
    made.push((JSON.parse(res.body) as { data: { keyId: string } }).data.keyId);
  }
  lines.length = 0;
  const revoke = (keyId: string) => event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_frank', keyId } });
  // An 11th key (refused), a revoke, a second revoke of it (refused), an idempotency key reused for another name (refused), a replay.
  expect((await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-11-00000', userId: 'usr_frank', name: 'eleventh' } }))).statusCode).toBe(409);
  expect((await handler(revoke(made[0]!))).statusCode).toBe(200);
  expect((await handler(revoke(made[0]!))).statusCode).toBe(409);
  expect((await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-1-00000', userId: 'usr_frank', name: 'other' } }))).statusCode).toBe(422);
  expect((await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-2-00000', userId: 'usr_frank', name: 'k2' } }))).statusCode).toBe(200);

  const subjects = lines.map((l) => ({ message: l.message, code: l.fields.code, caller: l.fields.caller, userId: l.fields.userId, keyId: l.fields.keyId }));
  expect(subjects).toEqual([
    { message: 'Key management request refused', code: 'LIMIT_REACHED', caller: CALLER, userId: 'usr_frank', keyId: undefined },
    { message: 'Key revoked', code: undefined, caller: CALLER, userId: 'usr_frank', keyId: made[0] },
    { message: 'Key management request refused', code: 'ALREADY_REVOKED', caller: CALLER, userId: 'usr_frank', keyId: made[0] },
    { message: 'Key management request refused', code: 'IDEMPOTENCY_MISMATCH', caller: CALLER, userId: 'usr_frank', keyId: undefined },
    { message: 'Key create replayed', code: undefined, caller: CALLER, userId: 'usr_frank', keyId: made[2] },
  ]);
});
