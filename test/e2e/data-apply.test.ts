/**
 * `npm run data:apply` and `npm run data:load --replace` as other tools run
 * them: real processes against the store of a running `npm start`, answers
 * checked over HTTP.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KEYS } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { runTs, waitForOutput } from '../support/process.js';
import { blockAfter } from '../support/shown-commands.js';
import { DEMO_FILE } from '../support/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'pe-apply-'));
const EXAMPLE = new URL('../fixtures/changes-example.jsonl', import.meta.url).pathname;
let server: ReturnType<typeof runTs>;
let publicUrl: string;
let store: string;
const auth = { 'x-events-api-key': KEYS.both };
const ids = (reply: { body: { data?: unknown } }) => (reply.body.data as { id: string }[]).map((e) => e.id);

beforeAll(async () => {
  server = runTs('local/cli/start.ts', ['--port', '0']);
  [, publicUrl] = (await waitForOutput(server, /Public API: (\S+)\n/)) as [string, string];
  [, store] = (await waitForOutput(server, /Store: +(\S+)/)) as [string, string];
}, 60_000);
afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.done;
});

describe('npm run data:apply', () => {
  it('applies the contract example: hides a private event everywhere, follows a rename and an RSVP flip', async () => {
    expect(ids(await get(`${publicUrl}/users/bob.builder/profile-events`, auth))).toContain('evt_jazz01');
    // As the page shows it: the file named from the checkout's root, the output it prints.
    const { code, stdout, stderr } = await runTs('local/cli/data-apply.ts', ['test/fixtures/changes-example.jsonl', '--endpoint', store]).done;
    expect(stdout).toBe(blockAfter('docs/data-and-changes.md', 'test/fixtures/changes-example.jsonl --endpoint URL` prints'));
    expect(stdout).toContain('line 6: stale, version 2 is not newer than 4 (event evt_jazz01); nothing changed\nApplied 8 of the 9 change records in test/fixtures/changes-example.jsonl to public-events-local\napplied: 8\nstale: 1\nwaiting: 0\ninvalid: 0\n');
    expect(stderr).toBe(''); // no AWS SDK Node-version notice on Node 20, nothing else either
    expect(code).toBe(0);
    expect((await get(`${publicUrl}/events/evt_jazz01`, auth)).status).toBe(404);
    expect((await get(`${publicUrl}/users/bob.builder/profile-events`, auth)).status).toBe(404);
    const bob = await get(`${publicUrl}/users/bob.b/profile-events`, auth);
    expect(ids(bob)).not.toContain('evt_jazz01');
    for (const path of ['/users/alice/profile-events', '/users/alice/events?type=profile', '/users/alice/upcoming-events']) {
      expect(JSON.stringify((await get(`${publicUrl}${path}`, auth)).body)).not.toContain('evt_jazz01');
    }
    expect((await get(`${publicUrl}/events/evt_meetup02`, auth)).status).toBe(404);
    // The same file again: every line stale, nothing changes.
    const again = await runTs('local/cli/data-apply.ts', [EXAMPLE, '--endpoint', store]).done;
    expect(again.stdout).toMatch(/applied: 0\nstale: 9\nwaiting: 0\ninvalid: 0/);
    // Each stale line named by its number; the summary says nothing was applied.
    expect(again.stdout.match(/^line (\d+): stale, /gm)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `line ${n}: stale, `));
    expect(again.stdout).toContain(`Applied none of the 9 change records in ${EXAMPLE} to public-events-local\n`);
    expect(again.code).toBe(0);
  });

  it('reports bad lines by number and field path, waiting ones by reference, and exits 1', async () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(
      file,
      [
        '{"type":"user.upserted","version":7,"user":{"id":"usr_zed","username":"zed","email":"zed@example.com"}}',
        '',
        '{"type":"event.upserted","version":1,"event":{"id":"evt_z1","creator_id":"usr_zed","title":"Z","start_date":"soon","timezone":"UTC","status":"published","visibility":"public","created_at":"2026-11-01T00:00:00Z"}}',
        'not json',
        '{"type":"rsvp.upserted","version":1,"rsvp":{"event_id":"evt_jazz99","user_id":"usr_zed","status":"yes","rsvp_date":"2026-11-01T00:00:00Z"}}',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await runTs('local/cli/data-apply.ts', [file, '--endpoint', store]).done;
    expect(code).toBe(1);
    expect(stdout).toBe(`Applied 1 of the 4 change records in ${file} to public-events-local\napplied: 1\nstale: 0\nwaiting: 1\ninvalid: 2\n`);
    expect(stderr).toContain('line 3: event.start_date: invalid date-time');
    expect(stderr).toMatch(/line 4: invalid JSON/);
    expect(stderr).toContain('line 5: not applied, waiting for event evt_jazz99');
    expect(stdout + stderr).not.toContain('zed@example.com');
    expect((await get(`${publicUrl}/users/zed/events`, auth)).status).toBe(200);
  });

  it('says so when nothing was applied, and exits 1', async () => {
    const file = join(dir, 'invalid-only.jsonl');
    writeFileSync(file, '{"type":"event.deleted","version":0,"event_id":"evt_jazz01"}\n\n');
    const { code, stdout, stderr } = await runTs('local/cli/data-apply.ts', [file, '--endpoint', store]).done;
    expect({ code, stdout }).toEqual({ code: 1, stdout: `Applied none of the 1 change record in ${file} to public-events-local\napplied: 0\nstale: 0\nwaiting: 0\ninvalid: 1\n` });
    expect(stderr).toMatch(/^line 1: version: /);
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '\n');
    const none = await runTs('local/cli/data-apply.ts', [empty, '--endpoint', store]).done;
    expect({ code: none.code, first: none.stdout.split('\n')[0] }).toEqual({ code: 0, first: `No change records in ${empty}: nothing to apply to public-events-local` });
  });

  it('exits 2 on bad usage: no file, a file that cannot be read, no table', async () => {
    const [none, missing, noTable] = await Promise.all([
      runTs('local/cli/data-apply.ts', []).done,
      runTs('local/cli/data-apply.ts', [join(dir, 'nope.jsonl'), '--endpoint', store]).done,
      runTs('local/cli/data-apply.ts', [EXAMPLE]).done,
    ]);
    expect([none.code, missing.code, noTable.code]).toEqual([2, 2, 2]);
    expect(missing.stderr).toContain(`data:apply: cannot read ${join(dir, 'nope.jsonl')}: ENOENT`);
    expect(noTable.stderr).toContain('--table is required');
  });
});

describe('npm run data:load into a table that holds data', () => {
  it('refuses without --replace, writing nothing', async () => {
    const { code, stderr } = await runTs('local/cli/data-load.ts', [DEMO_FILE, '--endpoint', store]).done;
    expect(code).toBe(1);
    expect(stderr).toMatch(/already holds data \(\d+ users or events, \d+ tombstones, \d+ changes feeds\); nothing was written/);
  });

  it('--replace --dry-run says what it would do and writes nothing; --replace converges to the file', async () => {
    const file = join(dir, 'resync.json');
    const demo = JSON.parse(readFileSync(DEMO_FILE, 'utf8'));
    demo.events = demo.events.filter((e: { id: string }) => e.id !== 'evt_workshop05');
    writeFileSync(file, JSON.stringify(demo));
    const dry = await runTs('local/cli/data-load.ts', [file, '--endpoint', store, '--replace', '--dry-run']).done;
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/Dry run \(nothing written\)/);
    expect(dry.stdout).toMatch(/added: \d+ users, \d+ events, \d+ rsvps\nchanged: \d+ users, [1-9]\d* events, \d+ rsvps\nremoved: \d+ users, [1-9]\d* events, \d+ rsvps/);
    const before = await get(`${publicUrl}/events/evt_workshop05`, auth);
    expect(before.status).toBe(200);
    // A consumer of the catalogue feed, up to date before the replace.
    let cursor = '';
    for (let more = true; more; ) {
      const page = (await get(`${publicUrl}/changes/events${cursor ? `?cursor=${cursor}` : ''}`, auth)).body.data as { next_cursor: string; has_more: boolean };
      [cursor, more] = [page.next_cursor, page.has_more];
    }

    const run = await runTs('local/cli/data-load.ts', [file, '--endpoint', store, '--replace']).done;
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Replaced the read model');
    expect((await get(`${publicUrl}/users/zed/profile-events`, auth)).status).toBe(404);
    expect((await get(`${publicUrl}/events/evt_workshop05`, auth)).status).toBe(404);
    // The feed says so: the removed event arrives as a bare `removed`.
    const after = (await get(`${publicUrl}/changes/events?cursor=${cursor}`, auth)).body.data as { changes: unknown[] };
    expect(after.changes).toContainEqual({ id: 'evt_workshop05', change: 'removed' });
    expect(ids(await get(`${publicUrl}/users/bob.builder/profile-events`, auth))).toContain('evt_jazz01');
    // Keys survive a resync.
    expect((await get(`${publicUrl}/events/evt_jazz01`, { authorization: `Bearer ${KEYS.both}` })).status).toBe(200);
    const again = await runTs('local/cli/data-load.ts', [file, '--endpoint', store, '--replace']).done;
    expect(again.stdout).toMatch(/added: 0 users, 0 events, 0 rsvps\nchanged: 0 users, 0 events, 0 rsvps\nremoved: 0 users, 0 events, 0 rsvps/);
  });
});
