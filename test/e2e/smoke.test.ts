/** The deployment smoke script, run against the local server. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runSmoke } from '../../scripts/smoke.js';
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
    expect(results.filter((r) => !r.ok).map((r) => r.name)).toEqual(['GET public /events/{eventId}/guests']);
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
