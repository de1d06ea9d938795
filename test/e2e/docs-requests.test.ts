/**
 * Every request the README and docs/*.md show (`curl` lines of their ```sh
 * blocks), sent as shown to the real local server over HTTP, demo data, with
 * the block's variables substituted: it gets the status its page says (the
 * leading number of its comment, else 200), and its answer matches the
 * surface's OpenAPI document (test/support/http.ts). `$TODAY` is the date of
 * the server's clock (pinned at NOW, the demo's own week), never the wall
 * clock's; docs-requests-any-day runs them in other weeks. The key-management
 * API's requests (`curl --aws-sigv4`, signed with the local key pair) are
 * run with curl itself against the server's key-management port: what is
 * tested is curl's own signing, as a reader runs it; so are the requests
 * that send a body or another method (the local clock's `curl -X PUT`),
 * in the pages' order. The server allows loopback webhook receivers, as
 * docs/webhooks.md runs it (`npm start -- --allow-loopback-webhooks`), and
 * its outbound guard asks a resolver of the test's own for the pages'
 * example host, so that no request depends on DNS.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { get } from '../support/http.js';
import { NOW } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { asRequest, shownCommands, type ShownCommand } from '../support/shown-commands.js';
import { dnsTable } from '../support/dns-table.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const curls = shownCommands().filter((c) => c.command.startsWith('curl '));
/** Run with curl itself: signed, or sending a body or another method than GET. */
const byCurl = (c: ShownCommand) => c.command.includes('--aws-sigv4') || /\s(-X|-d|--data)\s/.test(c.command);
const requests = curls.filter((c) => !byCurl(c)).map((c) => asRequest(c, new Date(NOW)));
const signed = curls.filter(byCurl);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ allowLoopbackWebhooks: true, webhookGuard: { resolver: dnsTable({ 'hooks.example.com': ['93.184.215.14'] }).resolver } });
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

describe('the requests the docs show that curl runs itself (signed for the key-management API, or sending a body)', () => {
  it('are there to run', () => {
    expect(signed.filter((c) => c.page === 'docs/managing-keys.md').length).toBeGreaterThanOrEqual(2);
    expect(signed.filter((c) => c.page === 'docs/webhooks.md' && c.command.includes('--aws-sigv4')).length).toBeGreaterThanOrEqual(3);
    expect(signed.filter((c) => c.command.startsWith('curl -X PUT')).map((c) => c.page)).toEqual(['docs/webhooks.md', 'docs/webhooks.md']);
  });

  it.each(signed.map((c) => [`${c.page}: ${c.command}`, c] as const))('%s', async (_, shown) => {
    const words = [...shown.command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)]
      .map((m) => (m[1] ?? m[2] ?? m[3]) as string)
      .map((w) => w.replace(/\$([A-Z_]+)/g, (all, name: string) => shown.vars[name] ?? all))
      // The page names the key-management port npm start prints, and npm start's port 3000; the test's server has its own.
      .map((w) => w.replace('http://127.0.0.1:PORT/admin/v1', server.keyAdminUrl).replace('http://127.0.0.1:3000', server.url));
    expect(words[0]).toBe('curl');
    const { stdout } = await promisify(execFile)('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', ...words.slice(1)]);
    const status = Number(/^(\d{3})\b/.exec(shown.comment)?.[1] ?? 200);
    expect({ status: Number(stdout) }).toEqual({ status });
  });
});
