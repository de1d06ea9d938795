/**
 * The MCP adapter end to end: an SDK client talks to the server over the SDK's
 * in-memory transport; the server calls the real local server over HTTP. Then
 * the built bin, copied alone into an empty folder outside the checkout (no
 * node_modules anywhere above it), is driven over stdio by the SDK's client and
 * by the real MCP Inspector CLI, and the command docs/mcp.md gives a client
 * (`npm run -s mcp`) is held to a stdout that is JSON-RPC and nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PublicApiClient, defaultClientDeps } from '../../mcp/public-api.js';
import { createMcpServer } from '../../mcp/server.js';
import { buildMcp } from '../../scripts/build-mcp.js';
import { KEYS } from '../support/fixtures.js';
import { ROOT } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/local.js';

let typed: TestServer;
let dated: TestServer;
const logs: string[] = [];

async function connect(server: TestServer, key = KEYS.both) {
  const api = new PublicApiClient(
    { apiKey: key, baseUrl: server.publicBaseUrl, timeoutMs: 5000, retryAttempts: 2, retryDelayMs: 1 },
    { ...defaultClientDeps, log: (m) => logs.push(m) },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(api).connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

type Payload = { message: string; data: { id: string }[]; pagination?: { limit: number; offset: number; total: number } };
const errorOf = (result: Record<string, unknown>) => JSON.parse((result.content as { text: string }[])[0]!.text).error;

beforeAll(async () => {
  typed = await startTestServer();
  dated = await startTestServer({ userEventsVariant: 'dated' });
});
afterAll(async () => {
  await typed?.close();
  await dated?.close();
});

describe('MCP tools over the SDK transport, against the local server', () => {
  it('lists exactly the two tools, with input and output schemas and descriptions', async () => {
    const client = await connect(typed);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['get-event', 'list-events']);
    const list = tools.find((t) => t.name === 'list-events')!;
    expect(list.inputSchema.required).toEqual(['username']);
    expect(list.inputSchema.properties).toMatchObject({ type: { enum: ['upcoming', 'past', 'profile'] }, limit: { type: 'integer', minimum: 1, maximum: 100 } });
    expect(list.outputSchema?.properties).toHaveProperty('pagination');
    expect(list.description).toMatch(/timezone/);
    await client.close();
  });

  it('list-events returns normalised upcoming events as text and structured content', async () => {
    const client = await connect(typed);
    const result = await client.callTool({ name: 'list-events', arguments: { username: 'alice', type: 'upcoming', limit: 2 } });
    expect(result.isError).toBeFalsy();
    const payload = result.structuredContent as Payload;
    expect(payload.data.map((e) => e.id)).toEqual(['evt_jazz01', 'evt_workshop05']);
    expect(payload.pagination).toEqual({ limit: 2, offset: 0, total: 4 });
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(payload);
    await client.close();
  });

  it('normalises both variants of the user-events answer to events in data, with pagination only where the API pages', async () => {
    const a = await connect(typed);
    const b = await connect(dated);
    const fromTyped = (await a.callTool({ name: 'list-events', arguments: { username: 'alice' } })).structuredContent as Payload;
    const fromDated = (await b.callTool({ name: 'list-events', arguments: { username: 'alice' } })).structuredContent as Payload;
    expect(fromDated.data.map((e) => e.id)).toEqual(fromTyped.data.map((e) => e.id));
    expect(fromTyped.pagination).toEqual({ limit: 20, offset: 0, total: 6 });
    expect(fromDated).not.toHaveProperty('pagination'); // the dated variant has none; nothing is invented
    const limited = (await b.callTool({ name: 'list-events', arguments: { username: 'alice', limit: 2 } })).structuredContent as Payload;
    expect(limited.data.map((e) => e.id)).toEqual(fromDated.data.slice(0, 2).map((e) => e.id));
    expect(limited).not.toHaveProperty('pagination');
    await a.close();
    await b.close();
  });

  it('get-event returns the event', async () => {
    const client = await connect(typed);
    const result = await client.callTool({ name: 'get-event', arguments: { eventId: 'evt_jazz01' } });
    expect(result.structuredContent).toMatchObject({ message: 'Event evt_jazz01 retrieved', data: { id: 'evt_jazz01', title: 'Rooftop Jazz' } });
    await client.close();
  });

  it('reports a hidden or missing event as an error with its status, after one attempt', async () => {
    const client = await connect(typed);
    for (const eventId of ['evt_secret03', 'evt_nope']) {
      const result = await client.callTool({ name: 'get-event', arguments: { eventId } });
      expect(result.isError).toBe(true);
      expect(errorOf(result)).toEqual({ status: 404, message: 'Resource not found.', details: null, attempts: 1 });
    }
    const unknownUser = await client.callTool({ name: 'list-events', arguments: { username: 'nobody' } });
    expect(errorOf(unknownUser)).toMatchObject({ status: 400, message: 'Username missing or user not found' });
    await client.close();
  });

  it.each([
    [{ username: '@alice' }, 'username'],
    [{ username: 'alice', limit: 0 }, 'limit'],
    [{ username: 'alice', limit: 1.5 }, 'limit'],
    [{ username: 'alice', type: 'hosted' }, 'type'],
    [{}, 'username'],
  ])('rejects bad arguments %j before any request, naming the argument', async (args, name) => {
    const client = await connect(typed);
    typed.responses.splice(0);
    const result = await client.callTool({ name: 'list-events', arguments: args });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toContain(name);
    expect(typed.responses).toEqual([]);
    await client.close();
  });

  it('reports a bad key as 401 without retrying and without echoing the key', async () => {
    const client = await connect(typed, KEYS.revoked);
    const result = await client.callTool({ name: 'get-event', arguments: { eventId: 'evt_jazz01' } });
    expect(errorOf(result)).toEqual({ status: 401, message: 'Not authenticated.', details: null, attempts: 1 });
    expect(JSON.stringify(result) + logs.join('')).not.toContain(KEYS.revoked);
    await client.close();
  });
});

describe('the example conversation of docs/mcp.md', () => {
  it('is what list-events answers for the arguments it shows', async () => {
    const page = readFileSync(`${ROOT}docs/mcp.md`, 'utf8');
    const shown = /calls `list-events` with `(\{[^`]*\})` and gets([\s\S]*?)\*\n/.exec(page);
    expect(shown).not.toBeNull();
    const [, args, answer] = shown as unknown as [string, string, string];
    const said = answer.replace(/\n> /g, ' ');
    const client = await connect(typed);
    const result = (await client.callTool({ name: 'list-events', arguments: JSON.parse(args) as Record<string, unknown> })).structuredContent as {
      data: Array<{ title: string; start_date: string; timezone: string; location: string | null; cost: number | null }>;
      pagination: { total: number };
    };
    await client.close();
    for (const e of result.data) expect(said).toContain(`\`${e.title}\` (${e.start_date}, ${e.timezone}, ${e.location}, ${e.cost})`);
    expect(said).toContain(`\`pagination.total\` ${result.pagination.total}`);
    // The assistant's reply names only places the answer holds.
    const reply = /\*\*Assistant:\*\*([\s\S]*)$/.exec(page)![1]!;
    for (const [, place] of reply.matchAll(/ at ([A-Z][\w .,]*?)(?= \(| on )/g)) expect(said).toContain(place as string);
  });
});

describe('the command docs/mcp.md gives an MCP client', () => {
  // JSON-RPC over stdio: one message a line. A line that is not one (npm's banner, a log) breaks the client.
  const messages = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1.0.0' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get-event', arguments: { eventId: 'evt_jazz01' } } },
  ];

  it.each([
    ['npm run -s mcp', ['run', '-s', 'mcp'], ROOT],
    ['npm run -s --prefix CHECKOUT mcp', ['run', '-s', '--prefix', ROOT, 'mcp'], tmpdir()],
  ])('%s prints JSON-RPC on stdout and nothing else', async (_, args, cwd) => {
    expect(readFileSync(`${ROOT}docs/mcp.md`, 'utf8')).toContain(_ === 'npm run -s mcp' ? '\nnpm run -s mcp ' : '"args": ["run", "-s", "--prefix", "/path/to/public-events-api", "mcp"]');
    const child = spawn('npm', args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, PUBLIC_API_KEY: KEYS.both, PUBLIC_API_BASE_URL: typed.publicBaseUrl }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    const answered = new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (/"id":2\b/.test(stdout)) resolve();
      }),
    );
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
    await answered;
    child.stdin.end(); // the server ends with its input, as a client closing the stream ends it
    expect(await closed).toBe(0);
    const lines = stdout.split('\n').filter((l) => l !== '');
    expect(lines.map((l) => (JSON.parse(l) as { jsonrpc: string; id: number }).jsonrpc)).toEqual(['2.0', '2.0']);
    expect((JSON.parse(lines[1]!) as { result: { structuredContent: { data: { id: string } } } }).result.structuredContent.data.id).toBe('evt_jazz01');
  }, 30_000);
});

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the built file, copied alone into an empty folder (stdio)', () => {
  const inspector = `${ROOT}node_modules/@modelcontextprotocol/inspector/cli/build/cli.js`;
  let bin: string;
  beforeAll(async () => {
    // Outside the checkout, with nothing beside it: Node finds no node_modules from here.
    const dir = mkdtempSync(join(tmpdir(), 'pe-mcp-alone-'));
    bin = join(dir, basename(await buildMcp()));
    copyFileSync(join(ROOT, 'dist/public-events-mcp.mjs'), bin);
    expect(readdirSync(dir)).toEqual(['public-events-mcp.mjs']);
  });
  const inspect = (...args: string[]) =>
    run(process.execPath, [inspector, '--cli', '-e', `PUBLIC_API_KEY=${KEYS.both}`, '-e', `PUBLIC_API_BASE_URL=${typed.publicBaseUrl}`, 'node', bin, ...args], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
    });

  it('imports nothing but Node built-ins: its packages are inside it', () => {
    const source = readFileSync(bin, 'utf8');
    const imported = [...source.matchAll(/^\s*import\b[^'"]*['"]([^'"]+)['"]/gm), ...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!);
    expect(imported.length).toBeGreaterThan(0);
    expect(imported.filter((specifier) => !specifier.startsWith('node:'))).toEqual([]);
  });

  it("answers tools/list with its two tools to the SDK's own stdio client", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin],
      cwd: join(bin, '..'),
      env: { PUBLIC_API_KEY: KEYS.both, PUBLIC_API_BASE_URL: typed.publicBaseUrl },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['get-event', 'list-events']);
      const event = await client.callTool({ name: 'get-event', arguments: { eventId: 'evt_jazz01' } });
      expect((event.structuredContent as { data: { id: string } }).data.id).toBe('evt_jazz01');
    } finally {
      await client.close();
    }
  });

  it('answers tools/list', async () => {
    const { code, stdout } = await inspect('--method', 'tools/list');
    expect(code).toBe(0);
    expect(JSON.parse(stdout).tools.map((t: { name: string }) => t.name).sort()).toEqual(['get-event', 'list-events']);
  });

  it('answers tools/call', async () => {
    const { code, stdout } = await inspect('--method', 'tools/call', '--tool-name', 'get-event', '--tool-arg', 'eventId=evt_jazz01');
    expect(code).toBe(0);
    expect(JSON.parse(stdout).structuredContent.data.id).toBe('evt_jazz01');
  });

  // docs/mcp.md's commands as the page shows them, from an empty folder: test/e2e/mcp-empty-folder.test.ts.

  it('fails at start, naming the variable, when the key is missing', async () => {
    const { code, stderr } = await run(process.execPath, [bin], { PATH: process.env.PATH });
    expect(code).toBe(1);
    expect(stderr).toContain('PUBLIC_API_KEY is required');
  });
});
