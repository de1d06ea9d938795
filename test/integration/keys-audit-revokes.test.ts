/**
 * Every revoke that took effect is on the record once (issue 45, k4, adopted
 * from the review's reproducer): one `Key revoked` line naming the user id
 * and the key id, and one `revoked` count in KeyOperations, whatever the
 * request then answered and whoever revoked. The key store writes it as the
 * record flips, before the slot and the plan key (which may fail and answer
 * 503, or 500 for a refusal that is not a throttle); a revoke that died between its flip and its line leaves the
 * record unclaimed, and whoever meets it next (the retry answering 409, a
 * redelivered deletion, the erase) writes it; the line is claimed on the
 * record first, so it is written once (lambdas/store/keys/key-store.ts).
 */
import { beforeEach, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { buildKeyAdmin, type KeyAdminHandler } from '../../lambdas/key-admin/handler.js';
import { KeyManager, type PlanKeys, type RevokedKey } from '../../lambdas/key-admin/key-manager.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { demoDataset } from '../support/fixtures.js';
import { authenticates } from '../support/keys.js';
import { keyAdminEvent as event, type LoggedLine, type PublishedMetrics } from '../support/key-admin-handler.js';
import { useTestStores, type TestStore } from '../support/store.js';

const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

const clock = fixedClock('2026-11-21T12:00:00.000Z');

function audited(planKeys?: PlanKeys): { handler: KeyAdminHandler; lines: LoggedLine[]; published: PublishedMetrics[] } {
  const lines: LoggedLine[] = [];
  const published: PublishedMetrics[] = [];
  const log = (level: string) => (message: string, ...fields: Record<string, unknown>[]) => void lines.push({ level, message, fields: Object.assign({}, ...fields) });
  const handler = buildKeyAdmin({
    manager: new KeyManager(store.client, store.tableName, { clock, ...(planKeys ? { planKeys } : {}) }),
    logger: { debug: log('DEBUG'), info: log('INFO'), warn: log('WARN'), error: log('ERROR') },
    metrics: { publish: (dimensions, values) => void published.push({ dimensions: { ...dimensions }, values }) },
  });
  return { handler, lines, published };
}

const createFor = async (handler: KeyAdminHandler, idempotencyKey: string) =>
  (JSON.parse((await handler(event('POST', '/keys', { body: { idempotencyKey, userId: 'usr_frank', name: 'laptop' } }))).body) as { data: { key: string; keyId: string } }).data;
const revokeOf = (keyId: string) => event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_frank', keyId } });
const revokedLines = (lines: LoggedLine[], keyId: string) => lines.filter((l) => l.message === 'Key revoked' && l.fields.keyId === keyId);
const revokedCounts = (published: PublishedMetrics[]) => published.filter((p) => p.dimensions.operation === 'revoked').length;

/** Fails the store's writes that `matches` picks while `state.armed`: `after` lets the write land first (a crash after it), else it never lands. */
function failWrites(s: TestStore, matches: (command: string, input: Record<string, unknown>) => boolean, error: () => Error, opts: { after: boolean }) {
  const state = { armed: false };
  s.client.middlewareStack.add(
    (next, context) => async (args) => {
      const hit = state.armed && matches(context.commandName ?? '', args.input as Record<string, unknown>);
      if (hit && !opts.after) throw error();
      const out = await next(args);
      if (hit) throw error();
      return out;
    },
    { step: 'initialize', name: 'failWrites' },
  );
  return state;
}

it('a revoke that answered 503 (API Gateway throttled its plan key\'s deletion) has its line and count once, its retry answering 409 adds none', async () => {
  let apiGatewayDown = false;
  const planKeys: PlanKeys = {
    create: async (keyId) => `pk-${keyId}`,
    attach: async () => undefined,
    remove: async () => {
      if (apiGatewayDown) throw Object.assign(new Error('Too Many Requests'), { name: 'TooManyRequestsException' });
    },
  };
  const { handler, lines, published } = audited(planKeys);
  const created = await createFor(handler, 'audit-revoke-0001');
  lines.length = 0;
  published.length = 0;

  apiGatewayDown = true;
  const first = (await handler(revokeOf(created.keyId))).statusCode;
  apiGatewayDown = false;
  const retry = (await handler(revokeOf(created.keyId))).statusCode;

  expect(await authenticates(store.repository, created.key)).toBe(false);
  expect({ answers: [first, retry], lines: revokedLines(lines, created.keyId).map((l) => l.fields), counted: revokedCounts(published) }).toEqual({
    answers: [503, 409],
    lines: [expect.objectContaining({ userId: 'usr_frank', keyId: created.keyId, by: 'revoke', caller: expect.any(String) })],
    counted: 1,
  });
});

it('a revoke cut off right after its record flipped has its line written by the retry that answers 409, once', async () => {
  const { handler, lines, published } = audited();
  const created = await createFor(handler, 'audit-revoke-0002');
  lines.length = 0;
  published.length = 0;
  // The flip lands, then the function dies (its answer never comes).
  const cut = failWrites(store, (command, input) => command === 'UpdateItemCommand' && String(input.UpdateExpression).includes('revoke_id'), () => new Error('Lambda cut off'), { after: true });
  cut.armed = true;
  const first = (await handler(revokeOf(created.keyId))).statusCode;
  cut.armed = false;
  expect(revokedLines(lines, created.keyId)).toHaveLength(0);
  const retry = (await handler(revokeOf(created.keyId))).statusCode;
  const again = (await handler(revokeOf(created.keyId))).statusCode;
  expect({ answers: [first, retry, again], lines: revokedLines(lines, created.keyId).length, counted: revokedCounts(published) }).toEqual({ answers: [500, 409, 409], lines: 1, counted: 1 });
});

it('a revoke that answered 503 (its slot record kept changing) has its line once', async () => {
  const { handler, lines, published } = audited();
  const created = await createFor(handler, 'audit-revoke-0003');
  lines.length = 0;
  published.length = 0;
  const busy = failWrites(
    store,
    (command, input) => command === 'PutItemCommand' && (input.Item as { sk?: string } | undefined)?.sk === 'COUNTER',
    () => Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' }),
    { after: false },
  );
  busy.armed = true;
  const first = (await handler(revokeOf(created.keyId))).statusCode;
  busy.armed = false;
  const retry = (await handler(revokeOf(created.keyId))).statusCode;
  expect({ answers: [first, retry], lines: revokedLines(lines, created.keyId).length, counted: revokedCounts(published) }).toEqual({ answers: [503, 409], lines: 1, counted: 1 });
});

it("a user's deletion puts each of their keys on the record once (a redelivery adds none)", async () => {
  const revoked: RevokedKey[] = [];
  const mgr = new KeyManager(store.client, store.tableName, { clock });
  const made = await mgr.create({ userId: 'usr_alice', name: 'made' });
  const applier = new ChangeApplier(store.client, store.tableName, { clock, revokeAudit: (r) => void revoked.push(r) });
  await applier.apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });
  await applier.apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });
  const seeded = (demoDataset().api_keys ?? []).filter((k) => k.user_id === 'usr_alice' && !k.revoked).length;
  expect(revoked).toHaveLength(seeded + 1);
  expect(revoked.every((r) => r.userId === 'usr_alice' && r.by === 'user deleted')).toBe(true);
  expect(new Set(revoked.map((r) => r.keyId)).size).toBe(revoked.length);
  expect(revoked.map((r) => r.keyId)).toContain(made.info.keyId);
});

it('an audit line names the subject by user id; a create naming a username is refused, nothing made', async () => {
  const { handler, lines } = audited();
  // Usernames are case-insensitive, mutable and reusable: "FRANK" and "frank" are one subject, and "frank" may be someone else tomorrow.
  const byName = await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-subject-01', username: 'FRANK', name: 'a' } }));
  await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-subject-02', userId: 'usr_frank', name: 'b' } }));
  expect(byName.statusCode).toBe(400);
  expect(lines.filter((l) => l.message === 'Key created').map((l) => l.fields.userId)).toEqual(['usr_frank']);
});
