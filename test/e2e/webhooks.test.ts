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
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { refusal, webhookAdmin, type WebhookAdmin } from '../support/webhook-admin.js';
import { startReceiver, type Answer, type Delivery, type Receiver } from '../support/webhook-receiver.js';
import { KEYS, NOW } from '../support/fixtures.js';

let server: TestServer;
let hooks: WebhookAdmin;
let now = Date.parse(NOW);
const receivers: Receiver[] = [];
beforeAll(async () => {
  // The outbound guard itself sends and checks, loopback receivers opened as `npm start -- --allow-loopback-webhooks` opens them; its deadline short.
  server = await startTestServer({ clock: () => new Date(now), allowLoopbackWebhooks: true, webhookGuard: { timeoutMs: 300 } });
  hooks = webhookAdmin(server, () => new Date(now));
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
const edit = (title: string, more?: Record<string, unknown>) => hooks.edit(title, more);
const newKey = (...args: Parameters<WebhookAdmin['newKey']>) => hooks.newKey(...args);
const createHook = (...args: Parameters<WebhookAdmin['createHook']>) => hooks.createHook(...args);
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
    const state = await hooks.admin.getWebhook(key.userId, key.keyId, hook.webhookId);
    expect(state).toMatchObject({ state: 'retrying', lastFailure: { status: 503 } });
    await edit('Retry me, edited meanwhile');
    expect(r.deliveries).toHaveLength(1); // still waiting for its retry
    status = 200;
    now += 3_600_000;
    await server.webhooks.settled();
    expect(r.deliveries.length).toBeGreaterThanOrEqual(2);
    expect(r.deliveries[1]!.id).toBe(r.deliveries[0]!.id);
    expect(r.deliveries[1]!.body.changes[0]).toMatchObject({ event: { title: 'Retry me, edited meanwhile' } });
    expect(await hooks.admin.getWebhook(key.userId, key.keyId, hook.webhookId)).toMatchObject({ state: 'active' });
  });

  it('disables at a 410, and after 3 days without a 2xx; resume goes on from where it stopped', async () => {
    const key = await newKey();
    const gone = await receiver(() => 410);
    const failing = await receiver(() => 500);
    const g = await createHook(key.userId, key.keyId, { url: gone.url, scope: { type: 'catalogue' } });
    const f = await createHook(key.userId, key.keyId, { url: failing.url, scope: { type: 'catalogue' } });
    await edit('Gone and failing');
    expect(await hooks.admin.getWebhook(key.userId, key.keyId, g.webhookId)).toMatchObject({ state: 'disabled', disabledReason: 'gone', lastFailure: { status: 410 } });
    for (let hour = 0; hour < 80; hour++) {
      now += 3_600_000;
      await server.webhooks.settled();
    }
    expect(await hooks.admin.getWebhook(key.userId, key.keyId, f.webhookId)).toMatchObject({ state: 'disabled', disabledReason: 'failing', lastFailure: { status: 500 } });
    const attempts = failing.deliveries.length;
    expect(attempts).toBeGreaterThan(20);
    expect(new Set(failing.deliveries.map((d) => d.id)).size).toBe(1);
    failing.answer = () => 200;
    await hooks.admin.resumeWebhook(key.userId, key.keyId, f.webhookId);
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
    await hooks.admin.revoke(key.userId, key.keyId);
    await edit('After the revoke');
    expect(r.deliveries).toHaveLength(0);
    expect((await refusal(hooks.admin.getWebhook(key.userId, key.keyId, hook.webhookId))).status).toBe(409);
  });
});

describe('secrets', () => {
  it('rotates: for 24 hours both secrets sign, then only the new one; a deleted webhook gets nothing more', async () => {
    const key = await newKey();
    const r = await receiver();
    const hook = await createHook(key.userId, key.keyId, { url: r.url, scope: { type: 'catalogue' } });
    const rotated = await hooks.admin.rotateWebhookSecret(key.userId, key.keyId, hook.webhookId);
    expect(rotated.secret).not.toBe(hook.secret);
    expect(Date.parse(rotated.previousSecretValidUntil!) - now).toBe(86_400_000);
    await edit('Rotated');
    const during = r.deliveries.at(-1)!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    // Each secret alone verifies it: a receiver holding either one takes the delivery.
    for (const secret of [hook.secret, rotated.secret]) expect(r.verify(during, [secret])).toBe(true);
    now += 86_400_000 + 1_000;
    await edit('Rotated a day ago');
    const after = r.deliveries.at(-1)!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect([r.verify(after, [rotated.secret]), r.verify(after, [hook.secret])]).toEqual([true, false]);
    const count = r.deliveries.length;
    await hooks.admin.deleteWebhook(key.userId, key.keyId, hook.webhookId);
    await edit('Deleted');
    expect(r.deliveries).toHaveLength(count);
  });
});
