/**
 * Webhooks on the local server (PRODUCT P18), over real HTTP: created through
 * the key-management API (SigV4, the typed admin client), delivered by the
 * server itself to receivers on this machine, each delivery's signature
 * checked with the standardwebhooks package, every send and URL check the
 * outbound guard's (loopback receivers opened by the local setting, its
 * deadline short); changes applied to the store
 * as `data:apply` does (over the store's HTTP port, which wakes the
 * webhooks as the table's stream does in AWS); the clock moved, never slept.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { KeyAdminClient, KeyAdminError } from '../../keys/admin-client.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import type { Change } from '../../lambdas/core/changes.js';
import { LOCAL_KEY_ADMIN_PRINCIPAL } from '../../local/sigv4-check.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { startReceiver, type Answer, type Delivery, type Receiver } from '../support/webhook-receiver.js';
import { demoDataset, KEYS, NOW } from '../support/fixtures.js';

let server: TestServer;
let admin: KeyAdminClient;
let now = Date.parse(NOW);
const receivers: Receiver[] = [];
beforeAll(async () => {
  // The outbound guard itself sends and checks, loopback receivers opened as `npm start -- --allow-loopback-webhooks` opens them; its deadline short.
  server = await startTestServer({ clock: () => new Date(now), allowLoopbackWebhooks: true, webhookGuard: { timeoutMs: 300 } });
  admin = new KeyAdminClient({ baseUrl: server.keyAdminUrl, region: 'eu-west-1', credentials: LOCAL_KEY_ADMIN_PRINCIPAL });
});
afterAll(async () => {
  await server?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

const receiver = async (answer?: (d: Delivery) => Answer) => {
  const r = await startReceiver({ answer });
  receivers.push(r);
  return r;
};
let version = 1_000;
const event = demoDataset().events.find((e) => e.id === 'evt_jazz01')!;
async function apply(change: Record<string, unknown>): Promise<void> {
  const client = createDocumentClient({ endpoint: server.storeEndpoint });
  try {
    await new ChangeApplier(client, server.tableName, { clock: () => new Date(now) }).apply({ version: ++version, ...change } as Change);
  } finally {
    client.destroy();
  }
  await server.webhooks.settled();
}
const edit = (title: string, more: Record<string, unknown> = {}) => apply({ type: 'event.upserted', event: { ...event, title, ...more } });
let idem = 0;
const USERS = ['usr_alice', 'usr_carol', 'usr_dave', 'usr_eve'];
async function newKey(userId = USERS[idem % USERS.length]!, scopes?: ('events:read' | 'guests:read')[]) {
  const made = await admin.create({ idempotencyKey: `webhook-test-${String(++idem).padStart(4, '0')}`, userId, name: `hooks ${idem}`, ...(scopes ? { scopes } : {}) });
  if (!('key' in made)) throw new Error('no key');
  return { ...made, userId };
}
/** A create that must succeed: its answer with the secret. */
async function createHook(userId: string, keyId: string, input: Parameters<KeyAdminClient['createWebhook']>[2]) {
  const made = await admin.createWebhook(userId, keyId, input);
  if (!('secret' in made)) throw new Error('no secret');
  return made;
}
async function refusal(p: Promise<unknown>): Promise<KeyAdminError> {
  const outcome = await p.then(() => undefined, (e: unknown) => e);
  if (!(outcome instanceof KeyAdminError)) throw new Error(`expected a refusal, got ${String(outcome)}`);
  return outcome;
}
/** The catalogue as a pull from no cursor gives it (P16: exactly the scope's members): id → event. */
async function catalogue(): Promise<Map<string, unknown>> {
  const held = new Map<string, unknown>();
  let cursor: string | undefined;
  for (;;) {
    const page = (await get(`${server.publicBaseUrl}/changes/events${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, { authorization: `Bearer ${KEYS.both}` })).body as { data: { changes: { id: string; change: string; event?: unknown }[]; next_cursor: string; has_more: boolean } };
    for (const c of page.data.changes) if (c.change === 'upserted') held.set(c.id, c.event);
    cursor = page.data.next_cursor;
    if (!page.data.has_more) return held;
  }
}

describe('a webhook delivers the feed, signed, in order', () => {
  it('sends each change of its scope once acknowledged, with a cursor the pull feed continues from', async () => {
    const key = await newKey();
    const r = await receiver();
    const hook = await createHook(key.userId, key.keyId, { url: r.url, scope: { type: 'host', userId: 'usr_alice' } });
    expect(hook).toMatchObject({ state: 'active', replayed: false, scope: { type: 'host', userId: 'usr_alice' } });
    expect(hook.secret).toMatch(/^whsec_/);
    r.secrets.push(hook.secret);
    await edit('Jazz night (moved)');
    expect(r.deliveries).toHaveLength(1);
    const [d] = r.deliveries;
    expect(d!.verified).toBe(true);
    expect(d!.body).toMatchObject({ webhook_id: hook.webhookId, scope: { type: 'host', userId: 'usr_alice' }, changes: [{ id: 'evt_jazz01', change: 'upserted', event: { title: 'Jazz night (moved)' } }] });
    expect(d!.headers['webhook-signature']).toMatch(/^v1,/);
    // The delivered cursor is a P16 cursor of the host's feed: a pull from it is up to date.
    const pull = await get(`${server.publicBaseUrl}/changes/users/Alice/events?cursor=${encodeURIComponent(d!.body.cursor)}`, { authorization: `Bearer ${key.key}` });
    expect(pull.status).toBe(200);
    expect((pull.body as { data: { changes: unknown[]; has_more: boolean } }).data).toMatchObject({ changes: [], has_more: false });
    // A hide arrives as removed, never with content.
    await edit('Jazz night (private)', { visibility: 'private' });
    expect(r.deliveries.at(-1)!.body.changes).toEqual([{ id: 'evt_jazz01', change: 'removed' }]);
    expect(r.replica.has('evt_jazz01')).toBe(false);
    await edit('Jazz night', { visibility: 'public' });
  });

  it('backfills the scope\'s present contents, then follows it: the receiver equals the read route', async () => {
    const key = await newKey();
    const r = await receiver();
    const hook = await createHook(key.userId, key.keyId, { url: r.url, scope: { type: 'catalogue' }, backfill: true });
    r.secrets.push(hook.secret);
    await server.webhooks.settled();
    await edit('Jazz night, again');
    expect(r.replica).toEqual(await catalogue());
    expect(r.deliveries.every((d) => d.verified)).toBe(true);
  });
});

describe('failures, retries and disables, on the moved clock', () => {
  it('retries a failing receiver with the same webhook-id, then delivers the content as it is now', async () => {
    const key = await newKey();
    let status = 503;
    const r = await receiver(() => status);
    const hook = await createHook(key.userId, key.keyId, { url: r.url, scope: { type: 'host', userId: 'usr_alice' } });
    r.secrets.push(hook.secret);
    await edit('Retry me');
    expect(r.deliveries).toHaveLength(1);
    const state = await admin.getWebhook(key.userId, key.keyId, hook.webhookId);
    expect(state).toMatchObject({ state: 'retrying', lastFailure: { status: 503 } });
    await edit('Retry me, edited meanwhile');
    expect(r.deliveries).toHaveLength(1); // still waiting for its retry
    status = 200;
    now += 3_600_000;
    await server.webhooks.settled();
    expect(r.deliveries.length).toBeGreaterThanOrEqual(2);
    expect(r.deliveries[1]!.id).toBe(r.deliveries[0]!.id);
    expect(r.deliveries[1]!.body.changes[0]).toMatchObject({ event: { title: 'Retry me, edited meanwhile' } });
    expect(await admin.getWebhook(key.userId, key.keyId, hook.webhookId)).toMatchObject({ state: 'active' });
  });

  it('disables at a 410, and after 3 days without a 2xx; resume goes on from where it stopped', async () => {
    const key = await newKey();
    const gone = await receiver(() => 410);
    const failing = await receiver(() => 500);
    const g = await createHook(key.userId, key.keyId, { url: gone.url, scope: { type: 'catalogue' } });
    const f = await createHook(key.userId, key.keyId, { url: failing.url, scope: { type: 'catalogue' } });
    await edit('Gone and failing');
    expect(await admin.getWebhook(key.userId, key.keyId, g.webhookId)).toMatchObject({ state: 'disabled', disabledReason: 'gone', lastFailure: { status: 410 } });
    for (let hour = 0; hour < 80; hour++) {
      now += 3_600_000;
      await server.webhooks.settled();
    }
    expect(await admin.getWebhook(key.userId, key.keyId, f.webhookId)).toMatchObject({ state: 'disabled', disabledReason: 'failing', lastFailure: { status: 500 } });
    const attempts = failing.deliveries.length;
    expect(attempts).toBeGreaterThan(20);
    expect(new Set(failing.deliveries.map((d) => d.id)).size).toBe(1);
    failing.answer = () => 200;
    await admin.resumeWebhook(key.userId, key.keyId, f.webhookId);
    await server.webhooks.settled();
    expect(failing.replica.size).toBeGreaterThan(0);
    expect(failing.deliveries.at(-1)!.id).toBe(failing.deliveries[0]!.id);
  });

  it('a receiver that never answers is a failed attempt, and never delays another webhook', async () => {
    const key = await newKey();
    const hang = await receiver(() => 'hang');
    const ok = await receiver();
    await createHook(key.userId, key.keyId, { url: hang.url, scope: { type: 'catalogue' } });
    await createHook(key.userId, key.keyId, { url: ok.url, scope: { type: 'catalogue' } });
    await edit('One hangs');
    expect(ok.deliveries).toHaveLength(1);
    expect(hang.deliveries).toHaveLength(1);
  });
});

describe('a webhook lives and dies with its key', () => {
  it('after a revoke has answered, no delivery starts', async () => {
    const key = await newKey();
    const r = await receiver();
    const hook = await createHook(key.userId, key.keyId, { url: r.url, scope: { type: 'catalogue' } });
    await admin.revoke(key.userId, key.keyId);
    await edit('After the revoke');
    expect(r.deliveries).toHaveLength(0);
    expect((await refusal(admin.getWebhook(key.userId, key.keyId, hook.webhookId))).status).toBe(409);
  });
});

describe('management: bad input names its field and stores nothing', () => {
  const webhookItems = async () => {
    const client = createDocumentClient({ endpoint: server.storeEndpoint });
    try {
      return JSON.stringify(((await client.send(new ScanCommand({ TableName: server.tableName }))).Items ?? []).filter((i) => /^(WEBHOOK|WHSCOPE)#|HOOKS#/.test(`${i.pk}${i.sk}`)).sort((a, b) => `${a.pk}${a.sk}`.localeCompare(`${b.pk}${b.sk}`)));
    } finally {
      client.destroy();
    }
  };
  let shared: Awaited<ReturnType<typeof newKey>> | undefined;
  it.each([
    [{ url: 'http://example.com/hook', scope: { type: 'catalogue' } }, 400, 'url'],
    [{ url: 'x', scope: { type: 'everything' } }, 400, 'scope.type'],
    [{ url: 'x', scope: { type: 'place' } }, 400, 'scope.city'],
    [{ url: 'x', scope: { type: 'host', userId: 'alice' } }, 400, 'scope.userId'],
    [{ url: 'http://127.0.0.1:9/hook', scope: { type: 'catalogue' }, start_cursor: 'f3.nope' }, 400, 'start_cursor'],
    [{ url: 'x', scope: { type: 'catalogue' }, extra: 1 }, 400, 'extra'],
  ])('%j → %i naming %s', async (input, status, field) => {
    const key = (shared ??= await newKey());
    const before = await webhookItems();
    const refused = await refusal(admin.createWebhook(key.userId, key.keyId, input as never));
    expect([refused.status, refused.field]).toEqual([status, field]);
    expect(await webhookItems()).toBe(before);
  });

  it('refuses a sixth webhook, another user\'s key, a revoked key, guests without guests:read', async () => {
    const key = await newKey();
    const r = await receiver();
    for (let i = 0; i < 5; i++) await createHook(key.userId, key.keyId, { url: r.url, scope: { type: 'catalogue' } });
    expect(await refusal(admin.createWebhook(key.userId, key.keyId, { url: r.url, scope: { type: 'catalogue' } }))).toMatchObject({ status: 409, field: 'keyId' });
    expect(await refusal(admin.createWebhook('usr_bob', key.keyId, { url: r.url, scope: { type: 'catalogue' } }))).toMatchObject({ status: 404, field: 'keyId' });
    const eventsOnly = await newKey('usr_alice', ['events:read']);
    expect(await refusal(admin.createWebhook('usr_alice', eventsOnly.keyId, { url: r.url, scope: { type: 'guests', eventId: 'evt_jazz01' } }))).toMatchObject({ status: 400, field: 'scope' });
    await admin.revoke('usr_alice', eventsOnly.keyId);
    expect(await refusal(admin.createWebhook('usr_alice', eventsOnly.keyId, { url: r.url, scope: { type: 'catalogue' } }))).toMatchObject({ status: 409, field: 'keyId' });
    expect(await admin.listWebhooks(key.userId, key.keyId)).toHaveLength(5);
  });

  it('rotates: for 24 hours both secrets sign', async () => {
    const key = await newKey();
    const r = await receiver();
    const hook = await createHook(key.userId, key.keyId, { url: r.url, scope: { type: 'catalogue' } });
    const rotated = await admin.rotateWebhookSecret(key.userId, key.keyId, hook.webhookId);
    r.secrets.push(rotated.secret);
    await edit('Rotated');
    const signature = String(r.deliveries.at(-1)!.headers['webhook-signature']);
    expect(signature.split(' ')).toHaveLength(2);
    expect(r.deliveries.at(-1)!.verified).toBe(true);
    r.secrets.splice(0, 1, hook.secret);
    expect(r.deliveries.at(-1)!.verified).toBe(true);
    await admin.deleteWebhook(key.userId, key.keyId, hook.webhookId);
    await edit('Deleted');
    expect(r.deliveries.at(-1)!.body.changes[0]).not.toMatchObject({ event: { title: 'Deleted' } });
  });
});
