/**
 * The key-management function's audit: every create, replayed create, revoke
 * and refusal is one KeyOperations count by operation and one log line with
 * the IAM caller, never the key or its hash; an unexpected failure is a bare
 * 500 (logged), never a stack or a half-made key.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { hashApiKey } from '../../lambdas/core/api-key.js';
import { buildKeyAdmin, type KeyAdminHandler } from '../../lambdas/key-admin/handler.js';
import type { LogFields } from '../../lambdas/http/logger.js';
import { KEY_OPERATIONS } from '../../lambdas/http/metrics.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { demoDataset } from '../support/fixtures.js';
import { fuzzParameters } from '../support/hostile.js';
import { auditedKeyAdmin, CALLER, keyAdminEvent as event, type LoggedLine, type PublishedMetrics } from '../support/key-admin-handler.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { PLAN_ID, startApiGatewayKeys, type ApiGatewayKeys } from '../support/api-gateway-keys.js';
import { authenticates } from '../support/keys.js';
import { ApiGatewayPlanKeys } from '../../lambdas/key-admin/usage-plan.js';

let store: TestStore;
let handler: KeyAdminHandler;
let published: PublishedMetrics[];
let lines: LoggedLine[];

beforeEach(async () => {
  store = await startTestStore(demoDataset());
  ({ handler, lines, published } = auditedKeyAdmin(store));
});
afterEach(async () => store?.close());

const counted = () => published.map((p) => [p.dimensions.operation, p.values.map((v) => `${v.name}=${v.value}`).join(',')]);

describe('audit', () => {
  it('counts and logs each operation with the caller and key id, never the key or its hash', async () => {
    const body = { idempotencyKey: 'audit-0001', userId: 'usr_frank', name: 'Audit' };
    const created = await handler(event('POST', '/keys', { body }));
    expect(created.statusCode).toBe(201);
    const { key, keyId } = (JSON.parse(created.body) as { data: { key: string; keyId: string } }).data;
    expect((await handler(event('POST', '/keys', { body }))).statusCode).toBe(200);
    expect((await handler(event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_frank', keyId } }))).statusCode).toBe(200);
    expect((await handler(event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_frank', keyId } }))).statusCode).toBe(409);
    expect((await handler(event('GET', '/users/{userId}/keys', { pathParameters: { userId: 'usr_frank' } }))).statusCode).toBe(200);

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
    expect(lines[0]!.fields).toMatchObject({ userId: 'usr_frank', keyId });
    expect(lines[1]!.fields).toMatchObject({ userId: 'usr_frank', keyId });
    expect(lines[2]!.fields).toMatchObject({ userId: 'usr_frank', keyId });
    expect(lines[3]!.fields).toMatchObject({ operation: 'revoke', code: 'ALREADY_REVOKED', field: 'keyId', userId: 'usr_frank', keyId });
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
    const res = await broken(event('POST', '/keys', { body: { idempotencyKey: 'audit-0002', userId: 'usr_frank', name: 'x' } }));
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body)).toEqual({ success: false, message: 'Internal server error.' });
    expect(lines.find((l) => l.level === 'ERROR')).toMatchObject({ message: 'Key management failed', fields: { caller: CALLER, operation: 'create' } });
    expect(published).toEqual([]);
  });

  it('answers a table throttled through every retry with 503 BUSY and Retry-After, whatever the operation, logged as a warning', async () => {
    // What the SDK throws once its own retries are used up on a throttled partition (isThrottle also matches it by name).
    const throttled = { send: () => Promise.reject(Object.assign(new Error('Throughput exceeds the current capacity of your table or index.'), { name: 'ProvisionedThroughputExceededException', $retryable: { throttling: true } })) };
    const warned: LoggedLine[] = [];
    const busy = buildKeyAdmin({
      manager: new KeyManager(throttled as unknown as TestStore['client'], store.tableName),
      logger: { debug: () => {}, info: () => {}, warn: (message: string, ...fields: LogFields[]) => void warned.push({ level: 'WARN', message, fields: Object.assign({}, ...fields) as LogFields }), error: (message: string) => void warned.push({ level: 'ERROR', message, fields: {} }) },
      metrics: { publish: (dimensions, values) => void published.push({ dimensions: { ...dimensions }, values }) },
    });
    const requests = [
      event('POST', '/keys', { body: { idempotencyKey: 'throttle-0001', userId: 'usr_frank', name: 'x' } }),
      event('GET', '/users/{userId}/keys', { pathParameters: { userId: 'usr_frank' } }),
      event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_frank', keyId: 'key_0123456789abcdef' } }),
    ];
    for (const request of requests) {
      const res = await busy(request);
      expect({ status: res.statusCode, retryAfter: res.headers?.['Retry-After'], body: JSON.parse(res.body) }).toEqual({ status: 503, retryAfter: '3', body: { success: false, message: 'Service busy, please retry shortly.', code: 'BUSY' } });
    }
    expect(warned.map((l) => [l.level, l.message, l.fields.operation])).toEqual([
      ['WARN', 'Key management throttled; answered 503', 'create'],
      ['WARN', 'Key management throttled; answered 503', 'list'],
      ['WARN', 'Key management throttled; answered 503', 'revoke'],
    ]);
    expect(published).toEqual([]);
  });

  it('names the user and the key on refusals, and only what looks like a user id or key id', async () => {
    const refusals = [
      await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-0003', userId: 'usr_nobody', name: 'x' } })),
      await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-0004', userId: 'pk_looks-like-a-key-0123456789', name: 'x' } })),
      await handler(event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_frank', keyId: 'key_unknown01' } })),
      await handler(event('DELETE', '/keys/{keyId}', { pathParameters: { keyId: 'key_unknown01' } })),
      await handler(event('GET', '/users/{userId}/keys', { pathParameters: { userId: 'usr_nobody' } })),
      // A username where a user id belongs: refused before any lookup, naming the field.
      await handler(event('GET', '/users/{userId}/keys', { pathParameters: { userId: 'frank' } })),
      await handler(event('POST', '/keys', { body: { idempotencyKey: 'audit-0005', username: 'frank', name: 'x' } })),
    ];
    expect(refusals.map((r) => r.statusCode)).toEqual([404, 400, 404, 410, 404, 400, 400]);
    expect(lines.map((l) => [l.fields.code, l.fields.field, l.fields.userId, l.fields.keyId])).toEqual([
      ['UNKNOWN_USER', 'userId', 'usr_nobody', undefined],
      ['BAD_INPUT', 'userId', '(malformed)', undefined],
      ['UNKNOWN_KEY', 'keyId', 'usr_frank', 'key_unknown01'],
      ['REVOKE_NEEDS_USER', 'keyId', undefined, 'key_unknown01'],
      ['UNKNOWN_USER', 'userId', 'usr_nobody', undefined],
      ['BAD_INPUT', 'userId', '(malformed)', undefined],
      ['BAD_INPUT', 'username', undefined, undefined],
    ]);
    expect(JSON.parse(refusals[6]!.body)).toMatchObject({ message: expect.stringContaining('Name the user by userId') });
    expect(JSON.stringify(lines)).not.toContain('pk_looks');
  });

  it('answers a method or resource it does not serve with 404', async () => {
    const res = await handler({ ...event('GET', '/keys'), httpMethod: 'PUT' });
    expect(res.statusCode).toBe(404);
  });
});

describe("API Gateway refusing a plan-key call (a real SDK client over HTTP)", () => {
  let gateway: ApiGatewayKeys;
  beforeEach(async () => {
    gateway = await startApiGatewayKeys();
    ({ handler, lines, published } = auditedKeyAdmin(store, { planKeys: new ApiGatewayPlanKeys(gateway.client, PLAN_ID) }));
  });
  afterEach(async () => gateway?.close());

  const BUSY = { status: 503, retryAfter: '3', body: { success: false, message: 'Service busy, please retry shortly.', code: 'BUSY' } };
  const answer = (res: { statusCode: number; headers?: Record<string, unknown>; body: string }) => ({ status: res.statusCode, retryAfter: res.headers?.['Retry-After'], body: JSON.parse(res.body) as unknown });
  const create = (idempotencyKey: string) => handler(event('POST', '/keys', { body: { idempotencyKey, userId: 'usr_frank', name: 'laptop' } }));
  const revoke = (keyId: string) => handler(event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_frank', keyId } }));
  const made = (res: { body: string }) => (JSON.parse(res.body) as { data: { key: string; keyId: string } }).data;
  const codeOf = (res: { body: string }) => (JSON.parse(res.body) as { code?: string }).code;

  it('a revoke whose plan key API Gateway throttles answers 503 BUSY with Retry-After, the key already refused; its retry deletes the plan key and answers 409', async () => {
    const key = made(await create('plan-throttle-1'));
    expect(gateway.apiKeys.planKeys.size).toBe(1);

    gateway.refuse.set('DeleteApiKey', 'TooManyRequestsException');
    expect(answer(await revoke(key.keyId))).toEqual(BUSY);
    expect(await authenticates(store.repository, key.key)).toBe(false);
    expect(gateway.apiKeys.planKeys.size).toBe(1);
    expect(lines.filter((l) => l.level !== 'INFO').map((l) => [l.level, l.message, l.fields.operation, l.fields.keyId])).toEqual([['WARN', 'Key management throttled; answered 503', 'revoke', key.keyId]]);

    gateway.refuse.clear();
    const retry = await revoke(key.keyId);
    expect([retry.statusCode, codeOf(retry)]).toEqual([409, 'ALREADY_REVOKED']);
    expect({ planKeys: gateway.apiKeys.planKeys.size, apiKeys: gateway.apiKeys.list().length }).toEqual({ planKeys: 0, apiKeys: 0 });
    expect(gateway.calls).toEqual(['CreateApiKey 201', 'CreateUsagePlanKey 201', 'DeleteApiKey 429', 'DeleteApiKey 202']);
  });

  it.each(['CreateApiKey', 'CreateUsagePlanKey'])('a create whose %s API Gateway throttles answers 503 BUSY, leaves no key and no plan key, and its retry makes the key', async (operation) => {
    gateway.refuse.set(operation, 'TooManyRequestsException');
    expect(answer(await create('plan-throttle-2'))).toEqual(BUSY);
    expect({ planKeys: gateway.apiKeys.planKeys.size, apiKeys: gateway.apiKeys.list().length }).toEqual({ planKeys: 0, apiKeys: 0 });

    gateway.refuse.clear();
    const retry = await create('plan-throttle-2');
    expect(retry.statusCode).toBe(201);
    expect(await authenticates(store.repository, made(retry).key)).toBe(true);
    expect({ planKeys: gateway.apiKeys.planKeys.size, apiKeys: gateway.apiKeys.list().length }).toEqual({ planKeys: 1, apiKeys: 1 });
  });

  it('a plan-key refusal that is not a throttle (a role that may not delete the key) stays a logged 500, the key already refused; the retry after the fix finishes the revoke', async () => {
    const key = made(await create('plan-denied-1'));
    gateway.refuse.set('DeleteApiKey', 'AccessDeniedException');
    expect(answer(await revoke(key.keyId))).toEqual({ status: 500, retryAfter: undefined, body: { success: false, message: 'Internal server error.' } });
    expect(await authenticates(store.repository, key.key)).toBe(false);
    expect(lines.filter((l) => l.level === 'ERROR').map((l) => [l.message, l.fields.operation, l.fields.keyId])).toEqual([['Key management failed', 'revoke', key.keyId]]);

    gateway.refuse.clear();
    expect(codeOf(await revoke(key.keyId))).toBe('ALREADY_REVOKED');
    expect(gateway.apiKeys.planKeys.size).toBe(0);
  });
});

describe('any create body (fast-check)', () => {
  const keyItems = async () =>
    JSON.stringify(((await store.client.send(new ScanCommand({ TableName: store.tableName }))).Items ?? []).filter((i) => /^(APIKEY|USERKEYS|KEYREQ)#/.test(String(i.pk))).sort((a, b) => `${a.pk}${a.sk}`.localeCompare(`${b.pk}${b.sk}`)));
  const text = fc.string({ unit: 'grapheme', maxLength: 110 });
  // Mostly valid values, so that creates, replays and the 11th-key refusal all happen, and hostile ones among them.
  const often = <T>(valid: fc.Arbitrary<T>, hostile: fc.Arbitrary<unknown>) => fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: hostile });
  const body = fc.record(
    {
      idempotencyKey: often(fc.oneof({ weight: 4, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constant('fixed-key-0001') }), fc.oneof(fc.constantFrom('short', ''), text, fc.integer())),
      userId: often(fc.constantFrom('usr_frank', 'usr_alice', 'usr_dave'), fc.oneof(fc.constantFrom('usr_nobody', '', 'frank', 'FRANK', '../usr_frank', `usr_${'a'.repeat(65)}`), text)),
      name: often(fc.string({ minLength: 1, maxLength: 100 }).filter((n) => n.trim() !== ''), fc.oneof(text, fc.constantFrom('x'.repeat(101), '   '), fc.integer(), fc.constant(null))),
      scopes: often(fc.subarray(['events:read', 'guests:read'] as const, { minLength: 1 }), fc.array(fc.oneof(fc.constantFrom('events:write', ''), text), { maxLength: 3 })),
      owner: text,
    },
    { requiredKeys: ['idempotencyKey', 'userId', 'name'] },
  ).map(({ owner, ...rest }) => (owner !== undefined && owner.length % 7 === 0 ? { ...rest, owner } : rest));
  // The same request again and again: its first run creates, the others replay.
  const retried = fc.constant({ idempotencyKey: 'fixed-key-0001', userId: 'usr_alice', name: 'Retried', scopes: ['events:read'] });
  const anyBody = fc.oneof({ weight: 4, arbitrary: body }, { weight: 1, arbitrary: retried });

  it('is made exactly as asked (201 or a replay) or refused with a 4xx naming a field it sent, with nothing written', async () => {
    const seen = new Set<string>();
    const statuses: number[] = [];
    await fc.assert(
      fc.asyncProperty(anyBody, async (b: Record<string, unknown>) => {
        const before = await keyItems();
        const res = await handler(event('POST', '/keys', { body: b }));
        statuses.push(res.statusCode);
        const answer = JSON.parse(res.body) as { success: boolean; data?: { key?: string; name: string; scopes: string[]; replayed: boolean }; errors?: { field: string }[] };
        expect(res.statusCode).toBeLessThan(500);
        if (res.statusCode === 201) {
          const name = typeof b.name === 'string' ? b.name.trim() : null;
          expect(name !== null && answer.data!.name === name && name.length >= 1 && name.length <= 100).toBe(true);
          expect(answer.data!.scopes.every((s) => ((b.scopes as string[] | undefined) ?? ['events:read', 'guests:read']).includes(s))).toBe(true);
          expect(answer.data!.key).toMatch(/^pk_/);
          // Idempotency keys are each user's own: the same one for two users is two requests.
          expect(seen.has(`${String(b.userId)} ${String(b.idempotencyKey)}`)).toBe(false);
          seen.add(`${String(b.userId)} ${String(b.idempotencyKey)}`);
        } else if (res.statusCode === 200) {
          expect({ replayed: answer.data!.replayed, key: answer.data!.key, seenBefore: seen.has(`${String(b.userId)} ${String(b.idempotencyKey)}`) }).toEqual({ replayed: true, key: undefined, seenBefore: true });
        } else {
          expect(res.statusCode).toBeGreaterThanOrEqual(400);
          const field = answer.errors?.[0]?.field ?? '';
          expect(field === 'body' || Object.keys(b).includes(field.split('.')[0]!) || ['idempotencyKey', 'userId', 'name'].includes(field)).toBe(true);
          expect(await keyItems()).toBe(before);
        }
      }),
      fuzzParameters(60),
    );
    // The run really made keys, replayed one and refused others.
    expect([201, 200, 400].map((status) => statuses.includes(status))).toEqual([true, true, true]);
  });
});

describe('the routes of this release', () => {
  const create = (name: string, idem: string, userId = 'usr_frank') => handler(event('POST', '/keys', { body: { idempotencyKey: idem, userId, name } }));

  it('the first release\'s DELETE /keys/{keyId} answers 410 naming the path to use, and revokes nothing', async () => {
    const made = await create('Old client', 'moved-0001');
    const { keyId } = (JSON.parse(made.body) as { data: { keyId: string } }).data;
    const res = await handler(event('DELETE', '/keys/{keyId}', { pathParameters: { keyId } }));
    expect(res.statusCode).toBe(410);
    expect(JSON.parse(res.body)).toMatchObject({ success: false, code: 'REVOKE_NEEDS_USER', message: expect.stringContaining('DELETE /admin/v1/users/{userId}/keys/{keyId}'), errors: [{ field: 'keyId' }] });
    const listed = JSON.parse((await handler(event('GET', '/users/{userId}/keys', { pathParameters: { userId: 'usr_frank' } }))).body) as { data: { keyId: string; revoked: boolean }[] };
    expect(listed.data.find((k) => k.keyId === keyId)).toMatchObject({ revoked: false });
  });

  it("a revoke names the key's owner: another user's key is 404 UNKNOWN_KEY, and stays usable", async () => {
    const made = await create('Mine', 'owner-0001', 'usr_alice');
    const { keyId } = (JSON.parse(made.body) as { data: { keyId: string } }).data;
    const res = await handler(event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_frank', keyId } }));
    expect([res.statusCode, (JSON.parse(res.body) as { code: string }).code]).toEqual([404, 'UNKNOWN_KEY']);
    expect((await handler(event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_alice', keyId } }))).statusCode).toBe(200);
  });

  it.each([
    ['a control character', 'Web\u0007site', 'U+0007'],
    ['a right-to-left override', 'Invoice \u202Egnp.exe', 'U+202E'],
    ['a first-strong isolate', '\u2068Website', 'U+2068'],
    ['a line break', 'Web\nsite', 'U+000A'],
  ])('refuses a name with %s, naming the field and the character', async (_, name, code) => {
    const res = await create(name, `name-${code.replace('+', '')}-1`);
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'BAD_INPUT', errors: [{ field: 'name', message: expect.stringContaining(code) }] });
  });

  it('lists a page at a time: limit and cursor, in creation order, the last page without a cursor', async () => {
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const ticking = buildKeyAdmin({
      manager: new KeyManager(store.client, store.tableName, { clock: () => new Date((now += 1000)) }),
      logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      metrics: { publish: () => {} },
    });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((JSON.parse((await ticking(event('POST', '/keys', { body: { idempotencyKey: `page-000${i}`, userId: 'usr_frank', name: `k${i}` } }))).body) as { data: { keyId: string } }).data.keyId);
    const page = async (cursor?: string) => {
      const res = await handler({ ...event('GET', '/users/{userId}/keys', { pathParameters: { userId: 'usr_frank' } }), queryStringParameters: { limit: '2', ...(cursor ? { cursor } : {}) } });
      expect(res.statusCode).toBe(200);
      return JSON.parse(res.body) as { data: { keyId: string }[]; cursor: string | null };
    };
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const p = await page(cursor);
      seen.push(...p.data.map((k) => k.keyId));
      if (!p.cursor) break;
      expect(p.data).toHaveLength(2);
      cursor = p.cursor;
    }
    expect(seen).toEqual(made);
    for (const [query, field] of [[{ limit: '0' }, 'limit'], [{ limit: 'x' }, 'limit'], [{ cursor: '!!' }, 'cursor'], [{ cursor: 'a2V5' }, 'cursor']] as const) {
      const res = await handler({ ...event('GET', '/users/{userId}/keys', { pathParameters: { userId: 'usr_frank' } }), queryStringParameters: query });
      expect([res.statusCode, (JSON.parse(res.body) as { errors: { field: string }[] }).errors[0]!.field]).toEqual([400, field]);
    }
    // A query parameter the list does not read is ignored, as on every route (PRODUCT P6; docs/design.md).
    const list = (query: Record<string, string>) => handler({ ...event('GET', '/users/{userId}/keys', { pathParameters: { userId: 'usr_frank' } }), queryStringParameters: query });
    const plain = await list({ limit: '2' });
    const extra = await list({ limit: '2', sort: 'x', utm_source: 'mail' });
    expect([extra.statusCode, extra.body]).toEqual([200, plain.body]);
  });

  it('refuses an 11th create of the day for a user with 429 CREATE_LIMIT naming userId, whatever was revoked', async () => {
    for (let i = 0; i < 10; i++) {
      const made = await create(`day ${i}`, `daily-00${i}0`, 'usr_dave');
      expect(made.statusCode).toBe(201);
      const { keyId } = (JSON.parse(made.body) as { data: { keyId: string } }).data;
      expect((await handler(event('DELETE', '/users/{userId}/keys/{keyId}', { pathParameters: { userId: 'usr_dave', keyId } }))).statusCode).toBe(200);
    }
    const res = await create('one more', 'daily-0100', 'usr_dave');
    expect([res.statusCode, JSON.parse(res.body).code, JSON.parse(res.body).errors[0].field]).toEqual([429, 'CREATE_LIMIT', 'userId']);
  });
});
