/** client/examples/first-calls.ts, the example of docs/client.md, run as a script against the local server. */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
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
