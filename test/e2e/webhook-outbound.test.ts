/**
 * Deliveries through the outbound guard on the local server (PRODUCT P18's
 * security list, issue 60 items 5 and 7), with the loopback setting as `npm
 * start -- --allow-loopback-webhooks` sets it, a name resolver of the test's
 * own standing for DNS, and the guard's deadline short (300 ms):
 * - receivers on 127.0.0.1 work, by address and by a name that resolves
 *   there, and without the setting they are refused (webhook-refusals.test.ts);
 * - a host that turns private after its create is a failed attempt at every
 *   delivery, recorded on the webhook (its error class, never a send), and
 *   the delivery in flight goes once the host resolves to an allowed
 *   address again (here loopback), its content as it is then;
 * - a receiver's garbage answer (a bad status line, not HTTP at all, an
 *   oversized head, an endless body, a slow drip, a redirect, a hang-up, an
 *   unasked upgrade, a closed port) is a failed attempt with its class, never
 *   a crash of the delivery, and never delays the healthy webhook beside it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type net from 'node:net';
import { dnsTable } from '../support/dns-table.js';
import { NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { closedPort, closeReceivers, httpReceiver, rawReceiver } from '../support/receivers.js';
import { recordingLogger } from '../support/telemetry.js';
import { webhookAdmin, type WebhookAdmin } from '../support/webhook-admin.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

const dns = dnsTable({ 'receiver.example.com': ['127.0.0.1'] });
const logger = recordingLogger();
let server: TestServer;
let hooks: WebhookAdmin;
let now = Date.parse(NOW);
const receivers: Receiver[] = [];
beforeAll(async () => {
  server = await startTestServer({ clock: () => new Date(now), allowLoopbackWebhooks: true, webhookGuard: { resolver: dns.resolver, timeoutMs: 300 }, logger });
  hooks = webhookAdmin(server, () => new Date(now), 'outbound');
});
afterAll(async () => {
  await server?.close();
  await Promise.all(receivers.map((r) => r.close()));
  await closeReceivers();
});
const receiver = async () => {
  const r = await startReceiver();
  receivers.push(r);
  return r;
};
/** A webhook of its own key on Alice's events, and its state after each change. */
async function hookTo(url: string) {
  const key = await hooks.newKey();
  const hook = await hooks.createHook(key.userId, key.keyId, { url, scope: { type: 'host', userId: 'usr_alice' } });
  return { ...hook, state: () => hooks.admin.getWebhook(key.userId, key.keyId, hook.webhookId) };
}
/** What the delivery side logged as broken: a run that threw (local/webhooks.ts logs it as an error). */
const crashes = () => logger.entries.filter((e) => e.level === 'ERROR');

describe('receivers on this machine, under the local setting', () => {
  it('are delivered to by address and by a name that resolves to 127.0.0.1, through the guard', async () => {
    const r = await receiver();
    const byAddress = await hookTo(r.url);
    const byName = await hookTo(r.url.replace('127.0.0.1', 'receiver.example.com'));
    r.secrets.push(byAddress.secret, byName.secret);
    await hooks.edit('Jazz night (loopback)');
    expect(r.deliveries.map((d) => d.body.webhook_id).sort()).toEqual([byAddress.webhookId, byName.webhookId].sort());
    expect(r.deliveries.every((d) => d.verified)).toBe(true);
    expect(dns.asked).toContain('receiver.example.com');
  });
});

describe('a host that turns private after its create', () => {
  it('is a failed attempt at each delivery, recorded, never a send; once it resolves to an allowed address again the delivery in flight goes, with the content as it is then', async () => {
    const r = await receiver();
    dns.set('drift.example.com', ['127.0.0.1']);
    const hook = await hookTo(r.url.replace('127.0.0.1', 'drift.example.com'));
    r.secrets.push(hook.secret);
    await hooks.edit('Before the move');
    expect(r.deliveries).toHaveLength(1);

    for (const [addresses, title] of [
      [['10.0.0.9'], 'After the move to a private address'],
      [['127.0.0.1', '169.254.169.254'], 'With the metadata service among its addresses'],
      [['::ffff:127.0.0.1'], 'As an IPv4-mapped loopback address'],
    ] as const) {
      dns.set('drift.example.com', addresses);
      await hooks.edit(title);
      now += 3_600_000; // past any retry's wait: each case is an attempt of its own
      await server.webhooks.settled();
      expect(r.deliveries).toHaveLength(1);
      expect(await hook.state()).toMatchObject({ state: 'retrying', lastFailure: { errorClass: 'address' } });
    }

    dns.set('drift.example.com', ['127.0.0.1']);
    now += 3_600_000;
    await server.webhooks.settled();
    expect(r.deliveries.length).toBeGreaterThanOrEqual(2);
    const [first, second] = r.deliveries;
    expect(second!.verified).toBe(true);
    expect(second!.id).not.toBe(first!.id);
    // The refused attempts were of this delivery: its content is the event as it is now.
    expect(second!.body.changes[0]).toMatchObject({ id: 'evt_jazz01', event: { title: 'As an IPv4-mapped loopback address' } });
    expect(await hook.state()).toMatchObject({ state: 'active' });
    expect(crashes()).toEqual([]);
  });
});

/** A raw receiver that answers `answer` once the request's first bytes arrive. */
const answersWith = (answer: (socket: net.Socket) => void) =>
  rawReceiver((socket) => {
    socket.once('data', () => answer(socket));
  });

describe("a receiver's garbage answer is a failed attempt, never a crash", () => {
  it('each fails with its class while the healthy webhook beside them is delivered; the server and its deliveries go on', async () => {
    const elsewhere = await receiver();
    const endless = (status: number) =>
      httpReceiver((_req, res) => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(16_384);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        res.on('close', () => res.removeAllListeners('drain'));
        pump();
      });
    const garbage: [string, Promise<{ origin: string }>, Record<string, unknown>][] = [
      ['a bad status line', answersWith((s) => s.end('HTTP/1.1 2xx Fine\r\ncontent-length: 0\r\n\r\n')), { errorClass: 'protocol' }],
      ['not HTTP at all', answersWith((s) => s.end('SSH-2.0-OpenSSH_9.6\r\n')), { errorClass: 'protocol' }],
      ['a head over 16 KiB', answersWith((s) => s.end(`HTTP/1.1 200 OK\r\nx-junk: ${'a'.repeat(20_000)}\r\ncontent-length: 0\r\n\r\n`)), { errorClass: 'too_large' }],
      ['an endless body after a 500', endless(500), { status: 500 }],
      [
        'a head dripped a byte every 20 ms',
        answersWith((s) => {
          const head = 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n';
          let i = 0;
          const drip = setInterval(() => (s.destroyed || i >= head.length ? clearInterval(drip) : s.write(head[i++]!)), 20);
          s.on('close', () => clearInterval(drip));
        }),
        { errorClass: 'timeout' },
      ],
      ['a redirect to another receiver', httpReceiver((_req, res) => res.writeHead(307, { location: `${elsewhere.url}?redirected` }).end()), { status: 307 }],
      ['a permanent redirect', httpReceiver((_req, res) => res.writeHead(308, { location: elsewhere.url }).end()), { status: 308 }],
      ['a hang-up before answering', answersWith((s) => s.destroy()), { errorClass: 'protocol' }],
      ['an upgrade nobody asked for', answersWith((s) => s.end('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n')), { errorClass: 'protocol' }],
      ['a closed port', closedPort().then((port) => ({ origin: `http://127.0.0.1:${port}` })), { errorClass: 'connect' }],
    ];
    const healthy = await receiver();
    const made = [];
    for (const [name, started, failure] of garbage) made.push({ name, failure, hook: await hookTo(`${(await started).origin}/hooks`) });
    const ok = await hookTo(healthy.url);
    // A 200 whose body never ends is taken at the guard's bound (64 KiB read, the rest never): acknowledged, not a failure.
    const endlessOk = await hookTo(`${(await endless(200)).origin}/hooks`);

    await hooks.edit('Garbage all around');
    const states = await Promise.all(made.map(async ({ name, hook }) => [name, await hook.state()] as const));
    expect(Object.fromEntries(states.map(([name, s]) => [name, { state: s.state, ...s.lastFailure, at: undefined }]))).toEqual(
      Object.fromEntries(made.map(({ name, failure }) => [name, { state: 'retrying', ...failure, at: undefined }])),
    );
    expect(healthy.deliveries.filter((d) => d.body.webhook_id === ok.webhookId)).toHaveLength(1);
    expect(await endlessOk.state()).toMatchObject({ state: 'active', lastFailure: null });
    expect(elsewhere.deliveries).toEqual([]);

    // Retried when due, each fails the same way again; the healthy one takes the next change at once.
    now += 3_600_000;
    await hooks.edit('Garbage again');
    expect(healthy.deliveries.filter((d) => d.body.webhook_id === ok.webhookId)).toHaveLength(2);
    for (const { hook } of made) expect((await hook.state()).state).toBe('retrying');
    expect(elsewhere.deliveries).toEqual([]);
    expect(crashes()).toEqual([]);
    expect((await get(`${server.publicBaseUrl}/events/evt_jazz01`, { authorization: 'Bearer pk_demo_0123456789abcdefghijklmnopqrstuv' })).status).toBe(200);
  });
});
