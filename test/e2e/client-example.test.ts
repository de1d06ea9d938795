/**
 * client/examples/first-calls.ts (docs/client.md) and client/examples/keep-in-sync.ts
 * (docs/keeping-in-sync.md), each run as a script against the local server.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { CURSOR_LIFETIME_SECONDS } from '../../lambdas/core/feed-cursor.js';
import { cursorOf, signed } from '../support/feed-keys.js';
import { ChangeApplier } from '../../lambdas/store/applier.js';
import { createDocumentClient } from '../../lambdas/store/client.js';
import { LOCAL_TABLE } from '../../local/dynalite.js';
import { demoDataset, NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { KEYS } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { runTs } from '../support/process.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

it('prints the upcoming events, the first one read by id, and a typed 404', async () => {
  const { done } = runTs('client/examples/first-calls.ts', ['alice'], { PUBLIC_API_KEY: KEYS.both, PUBLIC_API_BASE_URL: server.publicBaseUrl });
  const { code, stdout, stderr } = await done;
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const lines = stdout.trim().split('\n');
  expect(lines.filter((l) => / evt_\w+ /.test(l)).length).toBeGreaterThan(0);
  expect(lines).toContainEqual(expect.stringMatching(/^first: /));
  expect(lines.at(-1)).toBe('error: 404 Resource not found.');
});

it('keeps a JSON copy of a host\'s events across restarts: changes since the last run, a hide removed, an expired cursor restarted', async () => {
  const env = { PUBLIC_API_KEY: KEYS.both, PUBLIC_API_BASE_URL: server.publicBaseUrl };
  const file = join(mkdtempSync(join(tmpdir(), 'mirror-')), 'mirror.json');
  const run = async () => {
    const { code, stdout, stderr } = await runTs('client/examples/keep-in-sync.ts', ['alice', file], env).done;
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    return { out: stdout.trim(), mirror: JSON.parse(readFileSync(file, 'utf8')) as { cursor: string; events: Record<string, { id: string }> } };
  };
  // Alice's hosted events as the read route lists them.
  const listed = async () => {
    const reply = await get<{ data: { events: { id: string }[] } }>(`${server.publicBaseUrl}/users/alice/events?limit=100`, { 'x-events-api-key': KEYS.both });
    return reply.body.data.events.map((e) => e.id).sort();
  };

  const first = await run();
  expect(Object.keys(first.mirror.events).sort()).toEqual(await listed());
  expect(first.out).toMatch(/^applied \d+ changes; \d+ events in /);
  // A second run right after: nothing changed.
  expect((await run()).out).toMatch(/^applied 0 changes/);

  // The web product hides one of Alice's events.
  const event = demoDataset().events.find((e) => e.creator_id === 'usr_alice' && e.visibility === 'public' && e.status === 'published')!;
  const store = createDocumentClient({ endpoint: server.storeEndpoint });
  await new ChangeApplier(store, LOCAL_TABLE, { clock: fixedClock(NOW) }).apply({ type: 'event.upserted', version: 1, event: { ...event, visibility: 'private' } });
  store.destroy();
  const second = await run();
  expect(second.out).toMatch(/^applied 1 changes/);
  expect(second.mirror.events[event.id]).toBeUndefined();
  expect(Object.keys(second.mirror.events).sort()).toEqual(await listed());

  // A cursor past the 30 days: the example starts again and ends with the same copy.
  const old = cursorOf(second.mirror.cursor);
  const expired = signed({ ...old, asOf: Date.parse(NOW) / 1000 - CURSOR_LIFETIME_SECONDS - 1 });
  writeFileSync(file, JSON.stringify({ ...second.mirror, cursor: expired, events: { ...second.mirror.events, evt_stale: { id: 'evt_stale' } } }));
  const third = await run();
  expect(third.out.split('\n')[0]).toBe('cursor expired: starting again');
  expect(Object.keys(third.mirror.events).sort()).toEqual(await listed());
});
