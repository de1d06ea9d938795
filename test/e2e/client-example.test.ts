/**
 * client/examples/first-calls.ts (docs/client.md) and client/examples/keep-in-sync.ts
 * (docs/keeping-in-sync.md), each run as a script against the local server.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { CURSOR_LIFETIME_SECONDS } from '../../lambdas/core/feed-cursor.js';
import { cursorOf, signed } from '../support/feed-keys.js';
import { NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { KEYS } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { ROOT, runTs } from '../support/process.js';
import { shownCommands } from '../support/shown-commands.js';

const SYNC_COMMAND = 'PUBLIC_API_KEY=$KEY PUBLIC_API_BASE_URL=http://127.0.0.1:3000/api/public/v1 npx tsx client/examples/keep-in-sync.ts alice';

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

it("keeps a JSON copy of a host's events across restarts, as docs/keeping-in-sync.md runs it: a change file applied at the source reaches the copy, an expired cursor restarts", async () => {
  // The page's commands as shown: the sync run (env, script, username), the change file's data:apply line.
  const shown = shownCommands().filter((c) => c.page === 'docs/keeping-in-sync.md');
  const syncs = shown.filter((c) => c.command.includes('client/examples/keep-in-sync.ts'));
  const applies = shown.filter((c) => c.command.startsWith('npm run data:apply'));
  expect(syncs.map((c) => c.command)).toEqual([SYNC_COMMAND, SYNC_COMMAND]);
  expect(applies.map((c) => c.command)).toEqual(['npm run data:apply -- docs/examples/alice-changes.jsonl --endpoint STORE_URL']);
  const changeFile = /data:apply -- (\S+)/.exec(applies[0]!.command)![1]!;
  const env = { PUBLIC_API_KEY: syncs[0]!.vars.KEY!, PUBLIC_API_BASE_URL: server.publicBaseUrl };

  // The page's runs write client/examples/mirror.json; this one writes a file of its own (the second argument).
  const file = join(mkdtempSync(join(tmpdir(), 'mirror-')), 'mirror.json');
  const run = async () => {
    const { code, stdout, stderr } = await runTs('client/examples/keep-in-sync.ts', ['alice', file], env).done;
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    return { out: stdout.trim().replace(relative(ROOT, file), 'client/examples/mirror.json'), mirror: JSON.parse(readFileSync(file, 'utf8')) as { cursor: string; events: Record<string, { id: string; title: string }> } };
  };
  // Alice's hosted events as the read route lists them.
  const listed = async () => {
    const reply = await get<{ data: { events: { id: string }[] } }>(`${server.publicBaseUrl}/users/alice/events?limit=100`, { 'x-events-api-key': KEYS.both });
    return reply.body.data.events.map((e) => e.id).sort();
  };
  const page = readFileSync(join(ROOT, 'docs/keeping-in-sync.md'), 'utf8');
  const printed = (out: string) => expect(page).toContain(`prints \`${out}\``);

  const first = await run();
  expect(Object.keys(first.mirror.events).sort()).toEqual(await listed());
  printed(first.out);
  // A second run right after: nothing changed.
  expect((await run()).out).toMatch(/^applied 0 changes/);

  // The web product's changes, as the page applies them: one event retitled, one hidden.
  const apply = async () => {
    const { code, stdout } = await runTs('local/cli/data-apply.ts', [changeFile, '--endpoint', server.storeEndpoint]).done;
    expect(code).toBe(0);
    return stdout;
  };
  expect(await apply()).toContain('applied: 2\n');
  const second = await run();
  printed(second.out);
  expect(second.mirror.events.evt_tie07a?.title).toBe('Double Bill (A): sold out');
  expect(second.mirror.events.evt_tie07b).toBeUndefined();
  expect(Object.keys(second.mirror.events).sort()).toEqual(await listed());
  // Again: every record stale, nothing to apply.
  expect(await apply()).toContain('stale: 2\n');
  expect((await run()).out).toMatch(/^applied 0 changes/);

  // A cursor past the 30 days: the example starts again and ends with the same copy.
  const old = cursorOf(second.mirror.cursor);
  const expired = signed({ ...old, asOf: Date.parse(NOW) / 1000 - CURSOR_LIFETIME_SECONDS - 1 });
  writeFileSync(file, JSON.stringify({ ...second.mirror, cursor: expired, events: { ...second.mirror.events, evt_stale: { id: 'evt_stale' } } }));
  const third = await run();
  expect(third.out.split('\n')[0]).toBe('cursor expired: starting again');
  expect(Object.keys(third.mirror.events).sort()).toEqual(await listed());
});

it('writes client/examples/mirror.json by default, beside the example, and git ignores it', async () => {
  const ignored = await new Promise<string>((resolve) =>
    execFile('git', ['check-ignore', 'client/examples/mirror.json', 'client/examples/mirror.json.tmp'], { cwd: ROOT }, (_, stdout) => resolve(stdout)),
  );
  expect(ignored.trim().split('\n')).toEqual(['client/examples/mirror.json', 'client/examples/mirror.json.tmp']);
  expect(readFileSync(join(ROOT, 'client/examples/keep-in-sync.ts'), 'utf8')).toContain("file = fileURLToPath(new URL('mirror.json', import.meta.url))");
});
