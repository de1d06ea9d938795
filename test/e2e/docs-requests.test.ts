/**
 * Every request the README and docs/*.md show (`curl` lines of their ```sh
 * blocks), sent as shown to the real local server over HTTP, demo data, with
 * the block's variables substituted: it gets the status its page says (the
 * leading number of its comment, else 200), and its answer matches the
 * surface's OpenAPI document (test/support/http.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { get } from '../support/http.js';
import { NOW } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { asRequest, shownCommands } from '../support/shown-commands.js';

const requests = shownCommands()
  .filter((c) => c.command.startsWith('curl '))
  .map(asRequest);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('the requests the docs show', () => {
  it('are there to run (the README shows its first three)', () => {
    expect(requests.filter((r) => r.shown.page === 'README.md')).toHaveLength(3);
    expect(requests.length).toBeGreaterThanOrEqual(15);
  });

  it("the README's Embed request answers what the README says: the events Alice hosts, earliest start first, past ones before upcoming ones", async () => {
    const embed = requests.filter((r) => r.shown.page === 'README.md' && r.url.includes('/api/embed/v1/users/alice/events'));
    expect(embed).toHaveLength(1);
    const reply = await get(embed[0]!.url.replace('http://127.0.0.1:3000', server.url), embed[0]!.headers);
    const starts = (reply.body as { data: Array<{ start_date: string }> }).data.map((e) => e.start_date);
    expect(starts).toHaveLength(3);
    expect(starts).toEqual([...starts].sort());
    // The demo data's first of them is past at the pinned clock: the list is not an upcoming one.
    expect(starts[0]! < NOW).toBe(true);
  });

  it.each(requests.map((r) => [`${r.shown.page}: ${r.shown.command}`, r] as const))('%s', async (_, request) => {
    // The pages name the local server npm start runs, on port 3000; the test's runs on a free port.
    expect(request.url.startsWith('http://127.0.0.1:3000/')).toBe(true);
    const reply = await get(request.url.replace('http://127.0.0.1:3000', server.url), request.headers);
    expect({ status: reply.status }).toEqual({ status: request.status });
  });
});
