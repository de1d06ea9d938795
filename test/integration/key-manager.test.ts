/**
 * The key manager against dynalite with the real table: lifecycle, the
 * 10-active-keys limit under racing creates (conditional writes; dynalite has
 * no transactions), clear errors, and compensation when a step fails.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { BatchWriteCommand, GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../../lambdas/core/clock.js';
import { hashApiKey } from '../../lambdas/core/api-key.js';
import { keys } from '../../lambdas/store/table/table.js';
import { KeyManagementError, KeyManager } from '../../lambdas/key-admin/key-manager.js';
import type { PlanKeys } from '../../lambdas/key-admin/key-manager.js';
import { KEYS, demoDataset } from '../support/fixtures.js';
import { useTestStores, type TestStore } from '../support/store.js';

// One store for the file, a fresh table per test (test/support/store.ts).
const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

const manager = (planKeys?: PlanKeys) => new KeyManager(store.client, store.tableName, { clock: fixedClock('2026-11-21T12:00:00.000Z'), planKeys, maxCreatesPerDay: 100 });
const everything = async () => JSON.stringify((await store.client.send(new ScanCommand({ TableName: store.tableName }))).Items);
async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    if (error instanceof KeyManagementError) return error.code;
    throw error;
  }
  throw new Error('expected a KeyManagementError');
}

describe('create, list, revoke', () => {
  it('creates a key of the documented form, stores only its hash, and lists it without key or hash', async () => {
    const { key, info } = await manager().create({ userId: 'usr_frank', name: 'CI', scopes: ['events:read'] });
    expect(key).toMatch(/^pk_[0-9A-Za-z]{40}$/);
    expect(info).toEqual({ keyId: expect.stringMatching(/^key_[0-9A-Za-z]{20}$/), name: 'CI', scopes: ['events:read'], createdAt: '2026-11-21T12:00:00.000Z', revoked: false, revokedAt: null });
    const stored = await everything();
    expect(stored).not.toContain(key);
    expect(stored).toContain(hashApiKey(key));
    const listed = await manager().listAll('usr_frank');
    expect(listed).toEqual([info]);
    expect(JSON.stringify(listed)).not.toContain(hashApiKey(key));
  });

  it('lists seeded keys too, revoked ones marked', async () => {
    const listed = await manager().listAll('usr_bob');
    expect(listed).toEqual([expect.objectContaining({ name: 'Old key', revoked: true, createdAt: null })]);
  });

  it('revokes irreversibly: the authorizer item flips, a second revoke is refused', async () => {
    const { key, info } = await manager().create({ userId: 'usr_frank', name: 'temp' });
    const revoked = await manager().revoke('usr_frank', info.keyId);
    expect(revoked).toMatchObject({ keyId: info.keyId, revoked: true, revokedAt: '2026-11-21T12:00:00.000Z' });
    const item = await store.client.send(new GetCommand({ TableName: store.tableName, Key: keys.apiKey(hashApiKey(key)), ConsistentRead: true }));
    expect(item.Item).toMatchObject({ revoked: true });
    expect(await errorCode(manager().revoke('usr_frank', info.keyId))).toBe('ALREADY_REVOKED');
    expect((await manager().listAll('usr_frank'))[0]).toMatchObject({ revoked: true });
  });

  it.each([
    [() => manager().create({ userId: 'usr_nobody', name: 'x' }), 'UNKNOWN_USER'],
    [() => manager().create({ userId: 'frank', name: 'x' }), 'UNKNOWN_USER'],
    [() => manager().create({ userId: 'usr_frank', name: 'x', scopes: ['events:write'] }), 'BAD_SCOPE'],
    [() => manager().create({ userId: 'usr_frank', name: 'x', scopes: [] }), 'BAD_SCOPE'],
    [() => manager().create({ userId: 'usr_frank', name: '  ' }), 'BAD_NAME'],
    [() => manager().revoke('usr_frank', 'key_doesnotexist'), 'UNKNOWN_KEY'],
    [() => manager().revoke('usr_nobody', 'key_doesnotexist'), 'UNKNOWN_USER'],
    [() => manager().list('usr_nobody'), 'UNKNOWN_USER'],
  ])('refuses clearly (%#)', async (call, code) => {
    expect(await errorCode(call())).toBe(code);
  });

  it('revokes a seeded key by its id', async () => {
    const alice = await manager().listAll('usr_alice');
    const demo = alice.find((k) => k.name === 'Demo key')!;
    await manager().revoke('usr_alice', demo.keyId);
    const item = await store.client.send(new GetCommand({ TableName: store.tableName, Key: keys.apiKey(hashApiKey(KEYS.both)), ConsistentRead: true }));
    expect(item.Item).toMatchObject({ revoked: true });
  });
});

describe('list pages past what one Query returns', () => {
  // DynamoDB ends a Query at its Limit or at 1 MB read, whichever comes first, and the erased records a deletion leaves
  // (a user brought back keeps her old key ids) count toward both yet are not listed: a page keeps reading until it
  // has its keys or the partition ends, and its cursor resumes after the last item read.
  it('a user brought back with 250 erased records before her 3 new keys: every page lists keys, none is lost or repeated', async () => {
    const erased = Array.from({ length: 250 }, (_, i) => ({ ...keys.keyRecord('usr_frank', `key_0000${String(i).padStart(16, '0')}`), type: 'KEY_RECORD', key_id: `key_0000${String(i).padStart(16, '0')}`, revoked: true, erased: true }));
    for (let i = 0; i < erased.length; i += 25) {
      await store.client.send(new BatchWriteCommand({ RequestItems: { [store.tableName]: erased.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
    }
    const made = [];
    for (const name of ['one', 'two', 'three']) made.push((await manager().create({ userId: 'usr_frank', name })).info);
    // Listed in key id order (ids begin with their creation time; these three share one instant of the pinned clock).
    made.sort((a, b) => (a.keyId < b.keyId ? -1 : 1));

    expect(await manager().list('usr_frank')).toEqual({ keys: made, cursor: null });
    const pages = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<KeyManager['list']>> = await manager().list('usr_frank', { limit: 2, cursor });
      pages.push(page.keys.map((k) => k.name));
      cursor = page.cursor;
    } while (cursor);
    expect(pages).toEqual([[made[0]!.name, made[1]!.name], [made[2]!.name]]);
    expect(await manager().listAll('usr_frank')).toEqual(made);
  });
});

describe('at most 10 active keys per user', () => {
  it('refuses the 11th, and allows one again after a revoke', async () => {
    const created = [];
    for (let i = 0; i < 10; i++) created.push(await manager().create({ userId: 'usr_frank', name: `k${i}` }));
    expect(await errorCode(manager().create({ userId: 'usr_frank', name: 'eleventh' }))).toBe('LIMIT_REACHED');
    await manager().revoke('usr_frank', created[0]!.info.keyId);
    await expect(manager().create({ userId: 'usr_frank', name: 'replacement' })).resolves.toBeDefined();
    expect((await manager().listAll('usr_frank')).filter((k) => !k.revoked)).toHaveLength(10);
  });

  it('holds when 25 creates race', async () => {
    const results = await Promise.allSettled(Array.from({ length: 25 }, (_, i) => manager().create({ userId: 'usr_frank', name: `race ${i}` })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected' && (r.reason as KeyManagementError).code === 'LIMIT_REACHED');
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(15);
    expect(await manager().listAll('usr_frank')).toHaveLength(10);
    const counter = await store.client.send(new GetCommand({ TableName: store.tableName, Key: keys.keyCounter('usr_frank'), ConsistentRead: true }));
    expect(counter.Item?.active).toBe(10);
  });

  it("counts a user's seeded active keys", async () => {
    // alice has two active seeded keys
    for (let i = 0; i < 8; i++) await manager().create({ userId: 'usr_alice', name: `k${i}` });
    expect(await errorCode(manager().create({ userId: 'usr_alice', name: 'one too many' }))).toBe('LIMIT_REACHED');
  });
});


/** A stand-in for API Gateway's plan keys that records its calls; `fail` makes one call throw. */
function recordingPlan(fail: Partial<Record<keyof PlanKeys, string>> = {}) {
  const calls: string[] = [];
  const usage = new Map<string, string>();
  const plan: PlanKeys = {
    create: async (keyId, usageIdentifier) => {
      calls.push(`create ${keyId}`);
      if (fail.create) throw new Error(fail.create);
      usage.set(`pk-${keyId}`, usageIdentifier);
      return `pk-${keyId}`;
    },
    attach: async (id) => {
      calls.push(`attach ${id}`);
      if (fail.attach) throw new Error(fail.attach);
    },
    remove: async (id) => {
      calls.push(`remove ${id}`);
      if (fail.remove) throw new Error(fail.remove);
    },
  };
  return { plan, calls, usage };
}

describe('compensation', () => {
  it('gives the authorizer the plan key\'s value, and deletes the plan key on revoke', async () => {
    const { plan, calls, usage } = recordingPlan();
    const { key, info } = await manager(plan).create({ userId: 'usr_frank', name: 'aws' });
    const item = await store.client.send(new GetCommand({ TableName: store.tableName, Key: keys.apiKey(hashApiKey(key)) }));
    expect(item.Item).toMatchObject({ usage_identifier: usage.get(`pk-${info.keyId}`) });
    expect(item.Item?.usage_identifier).toMatch(/^ui_[0-9A-Za-z]{32}$/);
    await manager(plan).revoke('usr_frank', info.keyId);
    expect(calls).toEqual([`create ${info.keyId}`, `attach pk-${info.keyId}`, `remove pk-${info.keyId}`]);
  });

  it.each<[string, Partial<Record<keyof PlanKeys, string>>, (id: string) => string[]]>([
    ['made', { create: 'API Gateway is down' }, (id) => [`create ${id}`]],
    ['attached', { attach: 'API Gateway is down' }, (id) => [`create ${id}`, `attach pk-${id}`, `remove pk-${id}`]],
  ])('a plan key that cannot be %s: nothing usable, the slot free, the plan key deleted, nothing listed', async (_, fail, expected) => {
    const { plan, calls } = recordingPlan(fail);
    await expect(manager(plan).create({ userId: 'usr_frank', name: 'x' })).rejects.toThrow('API Gateway is down');
    const keyId = /^create (key_\w+)$/.exec(calls[0]!)![1]!;
    expect(calls).toEqual(expected(keyId));
    const items = JSON.parse(await everything()) as { pk: string; sk: string; active?: number; revoked?: boolean; erased?: boolean; name?: string }[];
    expect(items.filter((i) => i.pk.startsWith('APIKEY#') && i.revoked === false && i.name === 'x')).toEqual([]);
    expect(items.find((i) => i.pk === 'USERKEYS#usr_frank' && i.sk === 'COUNTER')?.active).toBe(0);
    expect(await manager().listAll('usr_frank')).toEqual([]);
  });

  it('when the authorizer item cannot be written: no active key, the plan key deleted, the slot free', async () => {
    const { plan, calls } = recordingPlan();
    const activeKeys = async () => (JSON.parse(await everything()) as { pk: string; revoked?: boolean }[]).filter((i) => i.pk.startsWith('APIKEY#') && i.revoked === false).map((i) => i.pk);
    const before = await activeKeys();
    // Fail the last write (the authorizer's item) as a throttled table would.
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Item?: { pk?: string; revoked?: boolean } };
        if (context.commandName === 'PutItemCommand' && input.Item?.pk?.startsWith('APIKEY#') && input.Item.revoked === false) throw Object.assign(new Error('Throttled'), { name: 'ProvisionedThroughputExceededException' });
        return next(args);
      },
      { step: 'initialize', name: 'failApiKeyPut' },
    );
    await expect(manager(plan).create({ userId: 'usr_frank', name: 'x' })).rejects.toThrow('Throttled');
    expect(calls).toEqual([expect.stringMatching(/^create key_/), expect.stringMatching(/^attach pk-key_/), expect.stringMatching(/^remove pk-key_/)]);
    const items = JSON.parse(await everything()) as { pk: string; sk: string; active?: number; revoked?: boolean }[];
    expect(await activeKeys()).toEqual(before);
    expect(items.find((i) => i.pk === 'USERKEYS#usr_frank' && i.sk === 'COUNTER')?.active).toBe(0);
  });
});

describe('createOnce: an idempotency key', () => {
  const at = (iso: string, planKeys?: PlanKeys) => new KeyManager(store.client, store.tableName, { clock: fixedClock(iso), planKeys, maxCreatesPerDay: 100 });
  const T0 = '2026-11-21T12:00:00.000Z';

  it('makes one key; a retry answers its id without the key; other parameters are refused naming the field', async () => {
    const first = await at(T0).createOnce({ idempotencyKey: 'req-00000001', userId: 'usr_frank', name: 'CI', scopes: ['guests:read', 'events:read'] });
    expect(first).toMatchObject({ created: true, key: expect.stringMatching(/^pk_/) });
    const again = await at(T0).createOnce({ idempotencyKey: 'req-00000001', userId: 'usr_frank', name: ' CI ', scopes: ['events:read', 'guests:read'] });
    expect(again).toEqual({ created: false, info: first.info, userId: 'usr_frank' });
    const refusal = await at(T0).createOnce({ idempotencyKey: 'req-00000001', userId: 'usr_frank', name: 'CI', scopes: ['events:read'] }).catch((e: KeyManagementError) => e);
    expect(refusal).toMatchObject({ code: 'IDEMPOTENCY_MISMATCH', field: 'idempotencyKey', message: expect.stringContaining('different scopes') });
    expect(await manager().listAll('usr_frank')).toHaveLength(1);
  });

  it('forgets a create that failed, so its retry makes the key', async () => {
    const failing = recordingPlan({ create: 'API Gateway is down' }).plan;
    await expect(at(T0, failing).createOnce({ idempotencyKey: 'req-00000002', userId: 'usr_frank', name: 'x' })).rejects.toThrow('API Gateway is down');
    expect(await at(T0).createOnce({ idempotencyKey: 'req-00000002', userId: 'usr_frank', name: 'x' })).toMatchObject({ created: true });
    expect(await manager().listAll('usr_frank')).toHaveLength(1);
  });

  it('forgets a refused create (the 11th key), so the same request succeeds after a revoke', async () => {
    const made = [];
    for (let i = 0; i < 10; i++) made.push(await manager().create({ userId: 'usr_frank', name: `k${i}` }));
    expect(await errorCode(at(T0).createOnce({ idempotencyKey: 'req-00000003', userId: 'usr_frank', name: 'eleventh' }))).toBe('LIMIT_REACHED');
    await manager().revoke('usr_frank', made[0]!.info.keyId);
    expect(await at(T0).createOnce({ idempotencyKey: 'req-00000003', userId: 'usr_frank', name: 'eleventh' })).toMatchObject({ created: true });
  });

  it('is remembered for 24 hours, then free for a new key', async () => {
    const first = await at(T0).createOnce({ idempotencyKey: 'req-00000004', userId: 'usr_frank', name: 'day one' });
    expect(await at('2026-11-22T11:59:59.000Z').createOnce({ idempotencyKey: 'req-00000004', userId: 'usr_frank', name: 'day one' })).toMatchObject({ created: false, info: { keyId: first.info.keyId } });
    const later = await at('2026-11-22T12:00:01.000Z').createOnce({ idempotencyKey: 'req-00000004', userId: 'usr_frank', name: 'day two' });
    expect(later).toMatchObject({ created: true, info: { name: 'day two' } });
    expect(later.info.keyId).not.toBe(first.info.keyId);
  });

  it('under 12 racing retries of one request: one key, the key shown once', async () => {
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => at(T0).createOnce({ idempotencyKey: 'req-00000005', userId: 'usr_frank', name: 'race' })));
    const answers = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    expect(answers.filter((a) => a.created)).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as KeyManagementError).code).toBe('IN_PROGRESS');
    expect(await manager().listAll('usr_frank')).toHaveLength(1);
  });
});


describe('a revoke interrupted half-way is finished by the next one', () => {
  it('after only the authorizer item flipped: the next revoke flips the record and frees the slot, once', async () => {
    const { key, info } = await manager().create({ userId: 'usr_frank', name: 'half' });
    await store.client.send(
      new UpdateCommand({ TableName: store.tableName, Key: keys.apiKey(hashApiKey(key)), UpdateExpression: 'SET revoked = :t', ExpressionAttributeValues: { ':t': true } }),
    );
    await expect(manager().revoke('usr_frank', info.keyId)).resolves.toMatchObject({ revoked: true });
    expect((await manager().listAll('usr_frank'))[0]).toMatchObject({ revoked: true });
    const counter = await store.client.send(new GetCommand({ TableName: store.tableName, Key: keys.keyCounter('usr_frank'), ConsistentRead: true }));
    expect(counter.Item?.active).toBe(0);
    expect(await errorCode(manager().revoke('usr_frank', info.keyId))).toBe('ALREADY_REVOKED');
  });

  it('a plan key that could not be deleted fails the revoke (the key is revoked already) and is deleted by its retry, which says already revoked', async () => {
    let down = true;
    const removed: string[] = [];
    const { plan } = recordingPlan();
    const flaky: PlanKeys = {
      ...plan,
      remove: async (id) => {
        if (down) throw new Error('API Gateway is down');
        removed.push(id);
      },
    };
    const { key, info } = await manager(flaky).create({ userId: 'usr_frank', name: 'plan' });
    await expect(manager(flaky).revoke('usr_frank', info.keyId)).rejects.toThrow('API Gateway is down');
    const item = await store.client.send(new GetCommand({ TableName: store.tableName, Key: keys.apiKey(hashApiKey(key)), ConsistentRead: true }));
    expect(item.Item).toMatchObject({ revoked: true });
    down = false;
    expect(await errorCode(manager(flaky).revoke('usr_frank', info.keyId))).toBe('ALREADY_REVOKED');
    expect(removed).toEqual([`pk-${info.keyId}`]);
    // Recorded as done: a third revoke deletes nothing more.
    expect(await errorCode(manager(flaky).revoke('usr_frank', info.keyId))).toBe('ALREADY_REVOKED');
    expect(removed).toHaveLength(1);
  });
});
