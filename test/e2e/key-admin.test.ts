/**
 * The key-management API over real HTTP on the local server's own port,
 * through the typed admin client (SigV4 by the AWS SDK's signer): the IAM
 * stand-in refuses what AWS would, a created key works on the Public API at
 * once and stops at once when revoked, retries and races keep the rules, and
 * every bad input is a 4xx naming its field with nothing written.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@smithy/core/checksum';
import { KeyAdminClient, KeyAdminError, type CreatedKey } from '../../keys/admin-client.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { hashApiKey, keyIdFromHash } from '../../lambdas/core/api-key.js';
import { LOCAL_KEY_ADMIN_PRINCIPAL } from '../../local/sigv4-check.js';
import { KEYS } from '../support/fixtures.js';
import { fuzzParameters } from '../support/hostile.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';

let server: TestServer;
let admin: KeyAdminClient;
const logLines: string[] = [];
beforeAll(async () => {
  const { readableLogger } = await import('../../lambdas/http/logger.js');
  server = await startTestServer({ logger: readableLogger({ level: 'DEBUG', write: (line) => logLines.push(line) }) });
  admin = new KeyAdminClient({ baseUrl: server.keyAdminUrl, region: 'eu-west-1', credentials: LOCAL_KEY_ADMIN_PRINCIPAL });
});
afterAll(async () => server?.close());

const store = () => createDocumentClient({ endpoint: server.storeEndpoint });
/** Every key-management item (records, authorizer items, counters, create requests), to prove nothing was half-written. */
async function keyItems(): Promise<string> {
  const client = store();
  try {
    const items = (await client.send(new ScanCommand({ TableName: server.tableName }))).Items ?? [];
    return JSON.stringify(items.filter((i) => /^(APIKEY|USERKEYS|KEYREQ)#/.test(String(i.pk))).sort((a, b) => `${a.pk}${a.sk}`.localeCompare(`${b.pk}${b.sk}`)));
  } finally {
    client.destroy();
  }
}
async function refusal(p: Promise<unknown>): Promise<KeyAdminError> {
  const outcome = await p.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof KeyAdminError)) throw new Error(`expected a KeyAdminError, got ${String(outcome)}`);
  return outcome;
}
const publicGet = (key: string) => get(`${server.publicBaseUrl}/users/frank/events`, { authorization: `Bearer ${key}` });
let idem = 0;
const nextIdem = () => `test-idempotency-${String(++idem).padStart(4, '0')}`;

describe('the IAM stand-in refuses what API Gateway would, before anything runs', () => {
  const body = JSON.stringify({ idempotencyKey: 'unsigned-0001', userId: 'usr_frank', name: 'x' });
  const signed = async (creds: { accessKeyId: string; secretAccessKey: string }, opts: { service?: string; date?: Date; tamper?: boolean; noHashHeader?: boolean } = {}) => {
    const url = new URL(`${server.keyAdminUrl}/keys`);
    const signer = new SignatureV4({ service: opts.service ?? 'execute-api', region: 'eu-west-1', sha256: Sha256, credentials: creds, applyChecksum: !opts.noHashHeader });
    const request = await signer.sign(
      { method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, headers: { host: url.host, 'content-type': 'application/json' }, body },
      opts.date ? { signingDate: opts.date } : {},
    );
    const { host: _host, ...headers } = request.headers;
    void _host;
    return fetch(url, { method: 'POST', headers, body: opts.tamper ? body.replace('"x"', '"y"') : body });
  };

  it.each([
    ['no signature', () => fetch(`${server.keyAdminUrl}/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }), 'Missing Authentication Token'],
    ['a Public API key instead of a signature', () => fetch(`${server.keyAdminUrl}/keys`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.both}`, 'x-events-api-key': KEYS.both }, body }), 'valid AWS4-HMAC-SHA256'],
    ['an unknown access key', () => signed({ accessKeyId: 'AKIAUNKNOWN000000000', secretAccessKey: LOCAL_KEY_ADMIN_PRINCIPAL.secretAccessKey }), 'security token'],
    ['the wrong secret', () => signed({ accessKeyId: LOCAL_KEY_ADMIN_PRINCIPAL.accessKeyId, secretAccessKey: 'not-the-secret' }), 'signature we calculated does not match'],
    ['a signature for another service', () => signed(LOCAL_KEY_ADMIN_PRINCIPAL, { service: 'lambda' }), "scoped to correct service: 'execute-api'"],
    ['a signature ten minutes old', () => signed(LOCAL_KEY_ADMIN_PRINCIPAL, { date: new Date(Date.now() - 10 * 60 * 1000) }), 'Signature expired'],
    ['a body changed after signing', () => signed(LOCAL_KEY_ADMIN_PRINCIPAL, { tamper: true }), 'x-amz-content-sha256 header does not match'],
    ['a body changed after signing without a hash header', () => signed(LOCAL_KEY_ADMIN_PRINCIPAL, { tamper: true, noHashHeader: true }), 'signature we calculated does not match'],
  ])('%s: 403, and nothing written', async (_, send, message) => {
    const before = await keyItems();
    const res = await send();
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toContain(message);
    expect(await keyItems()).toBe(before);
  });

  it('a signed request to a path that is not a route: 403 as API Gateway answers it', async () => {
    const other = new KeyAdminClient({ baseUrl: server.keyAdminUrl.replace('/admin/v1', '/admin/v2'), region: 'eu-west-1', credentials: LOCAL_KEY_ADMIN_PRINCIPAL });
    const e = await refusal(other.list('usr_frank'));
    expect([e.status, e.message]).toEqual([403, 'Missing Authentication Token']);
  });

  it('the Public API port does not serve it', async () => {
    const res = await fetch(`${server.url}/admin/v1/users/usr_frank/keys`);
    expect(res.status).toBe(404);
  });
});

describe('a key through its life, used on the Public API', () => {
  let created: CreatedKey;
  const idempotencyKey = 'lifecycle-0001';

  it('create answers the key once (201); it works on the Public API at once', async () => {
    const answer = await admin.create({ idempotencyKey, userId: 'usr_frank', name: '  Website  ', scopes: ['events:read'] });
    expect(answer).toEqual({ key: expect.stringMatching(/^pk_[0-9A-Za-z]{40}$/), keyId: expect.stringMatching(/^key_/), name: 'Website', scopes: ['events:read'], createdAt: expect.any(String), revoked: false, revokedAt: null, replayed: false });
    created = answer as CreatedKey;
    expect((await publicGet(created.key)).status).toBe(200);
  });

  it('a retry answers the same key id, without the key, and makes nothing', async () => {
    const before = await keyItems();
    const again = await admin.create({ idempotencyKey, userId: 'usr_frank', name: 'Website', scopes: ['events:read'] });
    expect(again).toEqual({ keyId: created.keyId, name: 'Website', scopes: ['events:read'], createdAt: created.createdAt, revoked: false, revokedAt: null, replayed: true });
    expect(JSON.stringify(again)).not.toContain('pk_');
    expect(await keyItems()).toBe(before);
  });

  it.each([
    ['name', { name: 'Other name', scopes: ['events:read'] as const }],
    ['scopes', { name: 'Website', scopes: ['events:read', 'guests:read'] as const }],
  ])('the same idempotency key with another %s: 422 naming idempotencyKey, nothing made', async (what, change) => {
    const before = await keyItems();
    const e = await refusal(admin.create({ idempotencyKey, userId: 'usr_frank', ...change, scopes: [...change.scopes] }));
    expect([e.status, e.field, e.code]).toEqual([422, 'idempotencyKey', 'IDEMPOTENCY_MISMATCH']);
    expect(e.message).toContain(`different ${what}`);
    expect(await keyItems()).toBe(before);
  });

  it("the same idempotency key for another user is that user's own request: a key of theirs, nothing said of frank's", async () => {
    const made = (await admin.create({ idempotencyKey, userId: 'usr_alice', name: 'Website', scopes: ['events:read'] })) as CreatedKey;
    expect([made.replayed, made.keyId === created.keyId]).toEqual([false, false]);
    await admin.revoke('usr_alice', made.keyId);
  });

  it('list shows it, never a key or its hash', async () => {
    const list = await admin.list('usr_frank');
    expect(list).toContainEqual({ keyId: created.keyId, name: 'Website', scopes: ['events:read'], createdAt: created.createdAt, revoked: false, revokedAt: null });
    const text = JSON.stringify(list);
    expect(text).not.toMatch(/pk_|[0-9a-f]{64}/);
  });

  it('revoke is immediate: the very next Public request with the key is 401; a second revoke is 409 naming keyId', async () => {
    const revoked = await admin.revoke('usr_frank', created.keyId);
    expect(revoked).toMatchObject({ keyId: created.keyId, revoked: true, revokedAt: expect.any(String)});
    expect((await publicGet(created.key)).status).toBe(401);
    const e = await refusal(admin.revoke('usr_frank', created.keyId));
    expect([e.status, e.field, e.code]).toEqual([409, 'keyId', 'ALREADY_REVOKED']);
    expect((await admin.list('usr_frank')).find((k) => k.keyId === created.keyId)).toMatchObject({ revoked: true });
  });

  it('audits creates and revokes with the caller, user and key id, never the key', () => {
    const text = logLines.join('\n');
    expect(text).toMatch(new RegExp(`Key created caller=${LOCAL_KEY_ADMIN_PRINCIPAL.principalArn.replace(/[/:]/g, '.')} userId=usr_frank keyId=${created.keyId}`));
    expect(text).toContain(`Key revoked caller=${LOCAL_KEY_ADMIN_PRINCIPAL.principalArn}`);
    expect(text).toContain('Key create replayed');
    expect(text).not.toContain(created.key);
  });
});

describe('races', () => {
  it('25 concurrent creates for one user: exactly 10 keys, 15 refused 409 naming userId', async () => {
    const results = await Promise.allSettled(Array.from({ length: 25 }, (_, i) => admin.create({ idempotencyKey: nextIdem(), userId: 'usr_dave', name: `race ${i}` })));
    const made = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as KeyAdminError);
    expect(made).toHaveLength(10);
    expect(refused.map((e) => [e.status, e.field, e.code])).toEqual(Array.from({ length: 15 }, () => [409, 'userId', 'LIMIT_REACHED']));
    expect((await admin.list('usr_dave')).filter((k) => !k.revoked)).toHaveLength(10);
  });

  it('10 concurrent creates with one idempotency key: one key, shown once; the others replay it or are told it is in progress', async () => {
    const idempotencyKey = nextIdem();
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => admin.create({ idempotencyKey, userId: 'usr_eve', name: 'Same request' })));
    const answers = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as KeyAdminError);
    expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.keyId)).size).toBe(1);
    for (const e of refused) expect([e.status, e.field, e.code]).toEqual([409, 'idempotencyKey', 'IN_PROGRESS']);
    const keys = (await admin.list('usr_eve')).filter((k) => k.name === 'Same request');
    expect(keys).toHaveLength(1);
    expect(await admin.create({ idempotencyKey, userId: 'usr_eve', name: 'Same request' })).toMatchObject({ keyId: keys[0]!.keyId, replayed: true });
  });

  it('concurrent revokes of one key: exactly one succeeds, the others are 409, and the slot is freed once', async () => {
    const made = (await admin.create({ idempotencyKey: nextIdem(), userId: 'usr_carol', name: 'to revoke' })) as CreatedKey;
    const activeBefore = (await admin.list('usr_carol')).filter((k) => !k.revoked).length;
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => admin.revoke('usr_carol', made.keyId)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as KeyAdminError).code).toBe('ALREADY_REVOKED');
    expect((await admin.list('usr_carol')).filter((k) => !k.revoked)).toHaveLength(activeBefore - 1);
    // Exactly 10 - (activeBefore - 1) creates fit now: the slot came back once, not eight times.
    const room = 10 - (activeBefore - 1);
    for (let i = 0; i < room; i++) await admin.create({ idempotencyKey: nextIdem(), userId: 'usr_carol', name: `fill ${i}` });
    expect((await refusal(admin.create({ idempotencyKey: nextIdem(), userId: 'usr_carol', name: 'one too many' }))).code).toBe('LIMIT_REACHED');
  });
});

describe('bad input: a 4xx naming the field, nothing written', () => {
  const raw = async (method: string, path: string, body?: string) => {
    const url = new URL(`${server.keyAdminUrl}${path}`);
    const signer = new SignatureV4({ service: 'execute-api', region: 'eu-west-1', sha256: Sha256, credentials: LOCAL_KEY_ADMIN_PRINCIPAL });
    const request = await signer.sign({ method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, headers: { host: url.host }, ...(body !== undefined ? { body } : {}) });
    const { host: _host, ...headers } = request.headers;
    void _host;
    const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
    return { status: res.status, body: (await res.json()) as { success: boolean; message: string; errors?: { field: string }[]; code?: string } };
  };
  const create = (fields: Record<string, unknown>) => raw('POST', '/keys', JSON.stringify({ idempotencyKey: nextIdem(), userId: 'usr_frank', name: 'ok', ...fields }));

  it.each([
    ['an unknown user id', () => create({ userId: 'usr_nobody' }), 404, 'userId', /Unknown user id/],
    ['an impossible user id', () => create({ userId: 'usr_../etc' }), 400, 'userId', /userId must be a user id/],
    ['an empty user id', () => create({ userId: '' }), 400, 'userId', /userId must be a user id/],
    ['a username in place of the user id', () => create({ userId: 'frank' }), 400, 'userId', /not a username/],
    ['a create naming its user by username', () => raw('POST', '/keys', JSON.stringify({ idempotencyKey: nextIdem(), username: 'frank', name: 'ok' })), 400, 'username', /Name the user by userId/],
    ['a bad scope', () => create({ scopes: ['events:write'] }), 400, 'scopes.0', /scopes must each be one of events:read, guests:read/],
    ['no scopes at all', () => create({ scopes: [] }), 400, 'scopes', /at least one/],
    ['an empty name', () => create({ name: '' }), 400, 'name', /name must be 1-100 characters/],
    ['a blank name', () => create({ name: '   ' }), 400, 'name', /name must be 1-100 characters/],
    ['an over-long name', () => create({ name: 'x'.repeat(101) }), 400, 'name', /name must be 1-100 characters/],
    ['no name', () => create({ name: undefined }), 400, 'name', /name is required/],
    ['no idempotency key', () => create({ idempotencyKey: undefined }), 400, 'idempotencyKey', /idempotencyKey is required/],
    ['a short idempotency key', () => create({ idempotencyKey: 'abc' }), 400, 'idempotencyKey', /8-128 characters/],
    ['an unknown field', () => create({ owner: 'frank' }), 400, 'owner', /Unknown field: owner/],
    ['a body that is not JSON', () => raw('POST', '/keys', '{"name":'), 400, 'body', /JSON object/],
    ['a body that is an array', () => raw('POST', '/keys', '[]'), 400, 'body', /.+/],
    ['an unknown key id', () => raw('DELETE', '/users/usr_frank/keys/key_doesnotexist'), 404, 'keyId', /has no key "key_doesnotexist"/],
    ["another user's key id (alice's demo key)", () => raw('DELETE', `/users/usr_frank/keys/${keyIdFromHash(hashApiKey(KEYS.both))}`), 404, 'keyId', /has no key/],
    ['a malformed key id', () => raw('DELETE', '/users/usr_frank/keys/not-a-key'), 400, 'keyId', /keyId must look like key_/],
    ['the first release\'s revoke path, without the user', () => raw('DELETE', '/keys/key_doesnotexist'), 410, 'keyId', /DELETE \/admin\/v1\/users\/\{userId\}\/keys\/\{keyId\}/],
    ['a name with a bidirectional override', () => create({ name: 'Invoice \u202Egnp.exe' }), 400, 'name', /U\+202E/],
    ['listing an unknown user', () => raw('GET', '/users/usr_nobody/keys'), 404, 'userId', /Unknown user/],
    ['listing by username', () => raw('GET', '/users/frank/keys'), 400, 'userId', /not a username/],
  ])('%s', async (_, send, status, field, message) => {
    const before = await keyItems();
    const { status: got, body } = await send();
    expect({ got, success: body.success, field: body.errors?.[0]?.field }).toEqual({ got: status, success: false, field });
    expect(body.message).toMatch(message);
    expect(await keyItems()).toBe(before);
  });

  it('the 11th active key: 409 naming userId, nothing written', async () => {
    // bob.builder has one revoked key and no active one.
    for (let i = 0; i < 10; i++) await admin.create({ idempotencyKey: nextIdem(), userId: 'usr_bob', name: `k${i}` });
    const before = await keyItems();
    const { status, body } = await create({ userId: 'usr_bob', name: 'eleventh' });
    expect([status, body.errors?.[0]?.field, body.code]).toEqual([409, 'userId', 'LIMIT_REACHED']);
    expect(body.message).toMatch(/already has 10 active keys/);
    expect(await keyItems()).toBe(before);
  });
});

describe('hostile requests to the key-management port', () => {
  const signedFetch = async (method: string, target: string, body?: string) => {
    const url = new URL(`${new URL(server.keyAdminUrl).origin}${target}`);
    const signer = new SignatureV4({ service: 'execute-api', region: 'eu-west-1', sha256: Sha256, credentials: LOCAL_KEY_ADMIN_PRINCIPAL });
    const query = Object.fromEntries(url.searchParams);
    const request = await signer.sign({ method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query, headers: { host: url.host }, ...(body !== undefined ? { body } : {}) });
    const { host: _host, ...headers } = request.headers;
    void _host;
    return fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  };

  it('a body over its limit: 413, nothing written', async () => {
    const before = await keyItems();
    const res = await signedFetch('POST', '/admin/v1/keys', JSON.stringify({ idempotencyKey: 'big-body-0001', userId: 'usr_frank', name: 'x'.repeat(20_000) }));
    expect(res.status).toBe(413);
    expect(await keyItems()).toBe(before);
  });

  it('signed requests of any method, path and body (fast-check): never a 5xx, always JSON, the server still answering', async () => {
    const segment = fc.oneof(fc.constantFrom('admin', 'v1', 'keys', 'users', 'frank', 'key_doesnotexist', '..', '%2F', '%zz', '', '__proto__', 'é'), fc.stringMatching(/^[A-Za-z0-9_.~-]{0,12}$/));
    const target = fc.oneof(
      fc.array(segment, { maxLength: 5 }).map((parts) => `/admin/v1/${parts.join('/')}`),
      fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join('/')}`),
    );
    const method = fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS');
    const body = fc.option(fc.oneof(fc.json(), fc.string()), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(method, target, body, async (m, t, b) => {
        const res = await signedFetch(m, t, m === 'GET' || m === 'OPTIONS' ? undefined : b);
        expect(res.status).toBeLessThan(500);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        await res.json();
      }),
      fuzzParameters(60),
    );
    expect((await admin.list('usr_alice')).length).toBeGreaterThan(0);
  });
});
