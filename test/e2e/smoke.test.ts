/** The deployment smoke script, run against the local server. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { quotaCheck, runSmoke } from '../../scripts/smoke.js';
import { widgetRelease } from '../../lib/widget-bundle.js';
import { KEYS } from '../support/fixtures.js';
import { runTs } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/local.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('npm run smoke', () => {
  it('passes every check with known data', async () => {
    const results = await runSmoke({ publicUrl: server.publicBaseUrl, embedUrl: server.embedBaseUrl, key: KEYS.both, username: 'alice', eventId: 'evt_jazz01' });
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results.length).toBeGreaterThanOrEqual(8 + 4);
  });

  it('passes without known data, through the 404 envelopes', async () => {
    const results = await runSmoke({ publicUrl: server.publicBaseUrl, embedUrl: server.embedBaseUrl, key: KEYS.both });
    expect(results.filter((r) => !r.ok)).toEqual([]);
  });

  it('fails, per route, with a key that lacks a scope', async () => {
    const results = await runSmoke({ publicUrl: server.publicBaseUrl, embedUrl: server.embedBaseUrl, key: KEYS.eventsOnly, username: 'alice', eventId: 'evt_jazz01' });
    // Every route that needs guests:read: the guest list and its changes feed.
    expect(results.filter((r) => !r.ok).map((r) => r.name)).toEqual(['GET public /events/{eventId}/guests', 'GET public /changes/events/{eventId}/guests']);
  });

  it("with --widget-url and --widget-integrity, checks the release a host page loads (the local server serves it as a stage does), and fails on another hash", async () => {
    const release = widgetRelease();
    const widget = (integrity: string) => runSmoke({ publicUrl: server.publicBaseUrl, embedUrl: server.embedBaseUrl, key: KEYS.both, widgetUrl: `${server.url}${release.path}`, widgetIntegrity: integrity });
    const ok = (await widget(release.integrity)).find((r) => r.name.startsWith("The widget's release"));
    expect(ok).toMatchObject({ ok: true, detail: `${Buffer.byteLength(release.body)} bytes` });
    const wrong = (await widget('sha384-AAAA')).find((r) => r.name.startsWith("The widget's release"));
    expect(wrong).toMatchObject({ ok: false, detail: `integrity ${release.integrity}, not sha384-AAAA` });
  });

  it("with --quota-key, spends that key's day and reports the headers of the quota's 429", async () => {
    // A key of its own, so the other checks' keys keep their day.
    const client = createDocumentClient({ endpoint: server.storeEndpoint });
    const { key } = await new KeyManager(client, server.tableName).create({ userId: 'usr_alice', name: 'smoke quota' });
    client.destroy();
    const results = await runSmoke({ publicUrl: server.publicBaseUrl, embedUrl: server.embedBaseUrl, key: KEYS.both, quotaKey: key, quotaPaceMs: 0 });
    const quota = results.find((r) => r.name.startsWith("Daily quota's 429"))!;
    expect(quota).toMatchObject({ ok: true });
    // The local server knows everything the context mapping gives in AWS, and its own count.
    expect(quota.headers).toEqual({ 'X-RateLimit-Limit': '1000', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(Date.parse('2026-11-22T00:00:00Z') / 1000), 'Retry-After': '43200' });
    expect(quota.detail).toBe('429 after 1001 requests; sent X-RateLimit-Limit: 1000, X-RateLimit-Remaining: 0, X-RateLimit-Reset: 1795305600, Retry-After: 43200; not sent: none');
    expect(quota.detail).not.toContain(key);
    expect(results.filter((r) => !r.ok)).toEqual([]);
  }, 120_000);

  it("reports what a default deployment's 429 lacks: the literal gateway response has no Reset and no Retry-After", async () => {
    // What lib/gateway-responses.ts deploys by default (quotaHeaders=static), served on loopback after two 404s.
    let n = 0;
    const fake = createServer((_req, res) => {
      n += 1;
      if (n <= 2) res.writeHead(404, { 'content-type': 'application/json', 'X-RateLimit-Limit': '1000' }).end('{"success":false,"message":"Resource not found."}');
      else res.writeHead(429, { 'content-type': 'application/json', 'X-RateLimit-Limit': '1000', 'X-RateLimit-Remaining': '0' }).end('{"success":false,"message":"Too many requests. Please try again later."}');
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const result = await quotaCheck(`http://127.0.0.1:${(fake.address() as AddressInfo).port}/api/public/v1/events/x`, {}, 0);
      expect(result).toMatchObject({
        ok: true,
        detail: '429 after 3 requests; sent X-RateLimit-Limit: 1000, X-RateLimit-Remaining: 0; not sent: X-RateLimit-Reset, Retry-After',
        headers: { 'X-RateLimit-Limit': '1000', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': null, 'Retry-After': null },
      });
    } finally {
      fake.closeAllConnections();
      await new Promise<void>((resolve) => fake.close(() => resolve()));
    }
  });

  it('runs as a CLI, never printing the key, and exits 1 on failure', async () => {
    const args = ['--public-url', server.publicBaseUrl, '--embed-url', server.embedBaseUrl, '--key', KEYS.both, '--username', 'alice', '--event-id', 'evt_jazz01'];
    const ok = await runTs('scripts/smoke.ts', args).done;
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^PASS {2}GET public \/events\/\{eventId\}/m);
    expect(ok.stdout).toMatch(/\d+ passed, 0 failed/);
    expect(ok.stdout + ok.stderr).not.toContain(KEYS.both);
    const bad = await runTs('scripts/smoke.ts', args.map((a) => (a === KEYS.both ? KEYS.revoked : a))).done;
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).not.toContain(KEYS.revoked);
  });
});
