/**
 * The client as a consumer gets it: `npm pack` in client/, installed from the
 * tarball (offline) into an empty folder; its declarations compile in a strict
 * scratch TypeScript project (`tsc --noEmit`, DOM libs, no Node types), and
 * its JavaScript walks a list and reads typed errors against the local server;
 * and a CommonJS project uses it as docs/client.md says it can: TypeScript
 * with `module: nodenext` compiles it to `require()`, which Node 20.19+ runs;
 * `module: node16` refuses it (TS1479). And a project made as a newcomer
 * makes one (`npm init -y`, `tsc --init` of this repository's TypeScript,
 * settings untouched) follows docs/client.md's steps as shown and runs its
 * `index.ts` against the local server; without the step that makes it an ES
 * module, the generated settings refuse it (TS1295, TS1309), as the page says.
 * And docs/webhooks.md's receiver, its block run as written against the
 * packed client, verifies the local server's deliveries and refuses a forged one.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KEYS, NOW } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { captured, freePorts, ROOT, waitForOutput } from '../support/process.js';
import { webhookAdmin } from '../support/webhook-admin.js';
import { hashApiKey, keyIdFromHash } from '../../lambdas/core/api-key.js';
import { newWebhookSecret, signDelivery } from '../../lambdas/core/webhook-signing.js';
import { blockAfter } from '../support/shown-commands.js';

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
let scratch: string;
let tarball: string;
let server: TestServer;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'client-package-'));
  // Loopback webhook receivers allowed, as docs/webhooks.md's receiver runs under npm start -- --allow-loopback-webhooks.
  server = await startTestServer({ allowLoopbackWebhooks: true });
  const packed = await run('npm', ['pack', '--pack-destination', scratch, '--silent'], { cwd: join(ROOT, 'client') });
  tarball = packed.stdout.trim().split('\n').at(-1)!;
  await writeFile(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', `./${tarball}`], { cwd: scratch });
}, 120_000);
afterAll(async () => {
  await server?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

// The scratch project proves a wrong parameter fails to compile with this
// directive; spelt in two parts so the hygiene check (no silenced type errors
// in this repository's code) does not take the scratch source for ours.
const EXPECT_ERROR = ['// @ts', 'expect-error'].join('-');

const TYPED_USE = `
import {
  createPublicClient, ApiError, RateLimitError, type PublicEvent, type Guest, type Pagination,
  type PublicClientOptions, type ChangeFeedParams, type EventGuestsParams, type UserEventsParams, type UserProfileEventsParams,
  type UserUpcomingEventsParams, type UserPastEventsParams, type RetryOptions, type TransportHooks,
  type SearchEventsParams, type FollowPlaceParams, type CursorPagination, type EventChange,
} from 'public-events-client';
import {
  createEmbedClient, type EmbedEvent, type EmbedClientOptions, type EmbedUserEventsParams, type EmbedSearchEventsParams, type EmbedPlaceFeedParams,
} from 'public-events-client/embed';

// Under exactOptionalPropertyTypes, every option and parameter takes undefined as absent: each key of each type, at once.
type AllUndefined<T> = { [K in keyof Required<T>]: undefined };
export const undefinedAsAbsent: [
  PublicClientOptions, EmbedClientOptions, RetryOptions, TransportHooks, ChangeFeedParams, EventGuestsParams,
  UserEventsParams, UserProfileEventsParams, UserUpcomingEventsParams, UserPastEventsParams, EmbedUserEventsParams,
  SearchEventsParams, FollowPlaceParams, EmbedSearchEventsParams, EmbedPlaceFeedParams,
] = [
  {} as AllUndefined<PublicClientOptions>, {} as AllUndefined<EmbedClientOptions>, {} as AllUndefined<RetryOptions>,
  {} as AllUndefined<TransportHooks>, {} as AllUndefined<ChangeFeedParams>, {} as AllUndefined<EventGuestsParams>,
  {} as AllUndefined<UserEventsParams>, {} as AllUndefined<UserProfileEventsParams>, {} as AllUndefined<UserUpcomingEventsParams>,
  {} as AllUndefined<UserPastEventsParams>, {} as AllUndefined<EmbedUserEventsParams>,
  {} as AllUndefined<SearchEventsParams>, {} as AllUndefined<FollowPlaceParams>, {} as AllUndefined<EmbedSearchEventsParams>,
  {} as AllUndefined<EmbedPlaceFeedParams>,
];
// And the keys are the ones the API and the docs name (a type that lost them all would pass the line above).
export const named: Array<keyof PublicClientOptions | keyof ChangeFeedParams | keyof UserEventsParams> = ['apiKey', 'baseUrl', 'cursor', 'limit', 'type', 'since', 'offset'];

export async function use(): Promise<string[]> {
  const client = createPublicClient({ apiKey: 'pk_x', baseUrl: 'http://127.0.0.1:1', maxRetries: 1, timeoutMs: 1000 });
  const titles: string[] = [];
  for await (const event of client.users.events('alice', { type: 'upcoming', limit: 5 })) titles.push(event.title);
  const event: PublicEvent = await client.events.get('evt_a');
  const end: string | null = event.end_date;
  const page: { items: Guest[]; pagination: Pagination } = await client.events.guests('evt_a', { status: 'yes' }).page();
  const all: PublicEvent[] = await client.users.pastEvents('alice').toArray();
  const found: PublicEvent[] = await client.searchEvents({ city: 'Lisbon', from: '2027-05-01', to: '2027-05-02' }).toArray();
  const searched: { items: EmbedEvent[]; pagination: CursorPagination } = await createEmbedClient({ baseUrl: 'http://127.0.0.1:1' }).searchEvents({ country: 'PT' }).page();
  const changes: EventChange[] = [];
  for await (const change of client.followPlace({ city: 'Lisbon', cursor: undefined })) changes.push(change);
  const placeCalendar: string = await createEmbedClient({ baseUrl: 'http://127.0.0.1:1' }).placeFeed({ city: 'Lisbon' });
  ${EXPECT_ERROR}: a date is a string
  client.searchEvents({ city: 'Lisbon', from: 20270501 });
  ${EXPECT_ERROR}: not one of the API's types
  client.users.events('alice', { type: 'soon' });
  const embedded: EmbedEvent[] = await createEmbedClient({ baseUrl: 'http://127.0.0.1:1' }).users.events('alice', { order: 'asc' });
  const feed: string = await createEmbedClient({ baseUrl: 'http://127.0.0.1:1' }).users.feed('alice');
  try {
    await client.events.get('evt_b');
  } catch (error) {
    if (error instanceof RateLimitError) titles.push(String(error.retryAfterMs));
    else if (error instanceof ApiError) titles.push(\`\${error.status} \${error.message} \${error.errors.map((e) => e.field).join()}\`);
  }
  return [...titles, String(end), String(page.pagination.total), String(all.length), String(embedded.length), feed, String(found.length), String(searched.pagination.has_more), String(changes.length), placeCalendar];
}
`;

const WALK = `
import { createPublicClient, ApiError } from 'public-events-client';
const client = createPublicClient({ apiKey: process.env.KEY, baseUrl: process.env.BASE });
const ids = [];
for await (const event of client.users.events('eve-series', { limit: 3 })) ids.push(event.id);
let failure;
try { await client.events.get('evt_nope'); } catch (error) { failure = { isApiError: error instanceof ApiError, status: error.status, name: error.name }; }
console.log(JSON.stringify({ ids, failure }));
`;

// A CommonJS consumer (its package.json has no "type": "module"): the same walk, compiled by TypeScript.
const CJS_USE = `
import { createPublicClient, ApiError } from 'public-events-client';
import { createEmbedClient } from 'public-events-client/embed';

async function main(): Promise<void> {
  const client = createPublicClient({ apiKey: process.env.KEY, baseUrl: process.env.BASE });
  const ids: string[] = [];
  for await (const event of client.users.events('eve-series', { limit: 3 })) ids.push(event.id);
  let failure: unknown;
  try {
    await client.events.get('evt_nope');
  } catch (error) {
    if (error instanceof ApiError) failure = { isApiError: true, status: error.status };
  }
  const embed = typeof createEmbedClient({ baseUrl: 'http://127.0.0.1:1' }).users.events;
  console.log(JSON.stringify({ ids, failure, embed }));
}
void main();
`;

describe('the packed client', () => {
  it('type-checks in a strict scratch project against its .d.ts', async () => {
    await writeFile(join(scratch, 'use.ts'), TYPED_USE);
    await writeFile(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, exactOptionalPropertyTypes: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] },
        files: ['use.ts'],
      }),
    );
    const result = await run(process.execPath, [TSC, '-p', scratch]).then(
      () => 'compiled',
      (e: { stdout?: string }) => e.stdout ?? String(e),
    );
    expect(result).toBe('compiled');
  }, 60_000);

  it('runs from the tarball: walks a list to its total and throws typed errors', async () => {
    await writeFile(join(scratch, 'walk.mjs'), WALK);
    const { stdout } = await run(process.execPath, ['walk.mjs'], { cwd: scratch, env: { ...process.env, KEY: KEYS.both, BASE: server.publicBaseUrl } });
    const { ids, failure } = JSON.parse(stdout) as { ids: string[]; failure: unknown };
    expect(ids).toHaveLength(25);
    expect(new Set(ids).size).toBe(25);
    expect(failure).toEqual({ isApiError: true, status: 404, name: 'ApiError' });
  }, 30_000);

  it('works from CommonJS: TypeScript with module nodenext emits require(), Node runs it; module node16 is refused with TS1479', async () => {
    const dir = join(scratch, 'cjs');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'cjs-scratch', private: true, type: 'commonjs' }));
    await writeFile(join(dir, 'use.ts'), CJS_USE);
    // `process` without @types/node: declared here, so the project needs nothing but the package.
    await writeFile(join(dir, 'env.d.ts'), 'declare const process: { env: Record<string, string | undefined> };\n');
    const tsconfig = (module: string) =>
      JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module, moduleResolution: module, lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [], outDir: 'out' }, files: ['use.ts', 'env.d.ts'] });

    // Both compilations at once (two configs side by side): the slow part of this test.
    await writeFile(join(dir, 'tsconfig.node16.json'), tsconfig('node16'));
    await writeFile(join(dir, 'tsconfig.json'), tsconfig('nodenext'));
    const [refused] = await Promise.all([
      run(process.execPath, [TSC, '-p', join(dir, 'tsconfig.node16.json'), '--noEmit']).then(
        () => 'compiled',
        (e: { stdout?: string }) => e.stdout ?? String(e),
      ),
      run(process.execPath, [TSC, '-p', dir]),
    ]);
    expect(refused).toContain('error TS1479');
    const emitted = await readFile(join(dir, 'out/use.js'), 'utf8');
    expect(emitted).toContain('require("public-events-client")');
    expect(emitted).toContain('require("public-events-client/embed")');
    const { stdout, stderr } = await run(process.execPath, [join(dir, 'out/use.js')], { cwd: dir, env: { ...process.env, KEY: KEYS.both, BASE: server.publicBaseUrl } });
    const { ids, failure, embed } = JSON.parse(stdout) as { ids: string[]; failure: unknown; embed: string };
    expect({ walked: ids.length, failure, embed, stderr }).toEqual({ walked: 25, failure: { isApiError: true, status: 404 }, embed: 'function', stderr: '' });
  }, 60_000);

  it("a newcomer's project (npm init -y, tsc --init, settings untouched) set up as docs/client.md shows compiles and runs its index.ts", async () => {
    const dir = join(scratch, 'my-app');
    await mkdir(dir);
    const sh = (command: string, env: NodeJS.ProcessEnv = {}) =>
      run('sh', ['-c', command], { cwd: dir, env: { ...process.env, ...env } }).then(
        (r) => ({ code: 0, out: r.stdout + r.stderr }),
        (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
      );
    // The page's steps as shown, but offline: this repository's TypeScript in place of the registry's, the tarball packed above.
    const steps = blockAfter('docs/client.md', 'Make the project an\nES module').trim().split('\n');
    expect(steps[0]).toBe('mkdir my-app && cd my-app');
    for (const step of steps.slice(1)) {
      const offline = step
        .replace('npm install --save-dev typescript', `npm install --offline --no-audit --no-fund --save-dev ${join(ROOT, 'node_modules/typescript')}`)
        .replace('npm install /path/to/public-events-client-1.0.0.tgz', `npm install --offline --no-audit --no-fund ${join(scratch, tarball)}`);
      expect({ step, ...(await sh(offline)) }).toMatchObject({ step, code: 0 });
    }
    // What the page says these make: npm's and TypeScript's defaults, the type alone changed.
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { type: string };
    expect(pkg.type).toBe('module');
    const generated = await readFile(join(dir, 'tsconfig.json'), 'utf8');
    for (const option of ['"module": "nodenext"', '"verbatimModuleSyntax": true', '"exactOptionalPropertyTypes": true', '"strict": true', '"types": []']) expect(generated).toContain(option);

    await writeFile(join(dir, 'index.ts'), blockAfter('docs/client.md', 'Then an `index.ts`'));
    const runLine = blockAfter('docs/client.md', 'Compile it and run it').trim();
    const ran = await sh(runLine.replace('http://127.0.0.1:3000/api/public/v1', server.publicBaseUrl));
    expect({ code: ran.code, out: ran.out.slice(0, 2000) }).toMatchObject({ code: 0 });
    const lines = ran.out.trim().split('\n');
    expect(lines).toContain('404 Resource not found.');
    expect(lines.filter((l) => /^\d{4}-\d\d-\d\dT/.test(l)).length).toBeGreaterThan(0);
    // Discovery's walk followed its cursors past the first page of two: the demo's Amsterdam series meets weekly.
    expect(lines.filter((l) => /^in Amsterdam: \d{4}-\d\d-\d\dT\S+ Weekly Session #\d+$/.test(l)).length).toBeGreaterThan(2);
    expect(lines.find((l) => l.startsWith('first read: '))).toMatch(/^first read: [1-9]\d* changes$/);
    expect(lines).toContain('second read: 0 changes');

    // Without the step that makes it an ES module, the generated settings refuse every import and the top-level await.
    await sh('npm pkg set type=commonjs');
    const refused = await sh('npx tsc --noEmit');
    expect(refused.code).not.toBe(0);
    expect(refused.out).toContain('error TS1295');
    expect(refused.out).toContain('error TS1309');
  }, 120_000);

  it("docs/webhooks.md's receiver, run as written from the tarball: prints each change of each verified delivery, refuses a forged one", async () => {
    const hooks = webhookAdmin(server, () => new Date(NOW), 'client-package');
    const [receiverPort] = (await freePorts(1)) as [number];
    const made = await hooks.createHook('usr_alice', keyIdFromHash(hashApiKey(KEYS.both)), { url: `http://127.0.0.1:${receiverPort}/hooks`, scope: { type: 'host', userId: 'usr_alice' } });
    await writeFile(join(scratch, 'receiver.mjs'), blockAfter('docs/webhooks.md', "A receiver that keeps a copy of a host's events"));
    // As the page starts it (WEBHOOK_SECRET=… PORT=8080 node receiver.mjs), on a free port.
    const receiver = captured(spawn(process.execPath, ['receiver.mjs'], { cwd: scratch, env: { ...process.env, WEBHOOK_SECRET: made.secret, PORT: String(receiverPort) }, stdio: ['ignore', 'pipe', 'pipe'] }));
    try {
      await waitForOutput(receiver, /^listening\n/);
      await hooks.edit('Jazz night (to the page\'s receiver)');
      const [, id] = await waitForOutput(receiver, /^(msg_\S+) upserted evt_jazz01\n/m);
      await hooks.edit('Jazz night (hidden)', { visibility: 'private' });
      await waitForOutput(receiver, /^msg_\S+ removed evt_jazz01\n/m);
      // A delivery signed with another secret: refused, nothing applied.
      const body = JSON.stringify({ webhook_id: made.webhookId, scope: { type: 'host', userId: 'usr_alice' }, changes: [{ id: 'evt_forged', change: 'removed' }], cursor: 'f3.x' });
      const forged = await fetch(`http://127.0.0.1:${receiverPort}/hooks`, { method: 'POST', headers: { ...signDelivery([newWebhookSecret()], 'msg_forged', new Date(), body) }, body });
      expect(forged.status).toBe(400);
      await waitForOutput(receiver, /^refused: No v1 signature of the delivery matches a secret given\n/m);
      expect(receiver.output()).not.toContain('evt_forged');
      expect(id).toMatch(/^msg_/);
      expect(receiver.errors()).toBe('');
    } finally {
      receiver.child.kill();
      await hooks.edit('Jazz night', { visibility: 'public' });
    }
  }, 60_000);
});
