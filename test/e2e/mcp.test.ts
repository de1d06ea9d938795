/**
 * The MCP adapter end to end: an SDK client talks to the server over the SDK's
 * in-memory transport; the server calls the real local server over HTTP. Then
 * the built bin, copied alone into an empty folder outside the checkout (no
 * node_modules anywhere above it), is driven over stdio by the SDK's client and
 * by the real MCP Inspector CLI, and the command docs/mcp.md gives a client
 * (`npm run -s mcp`) is held to a stdout that is JSON-RPC and nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PublicApiClient, defaultClientDeps } from '../../mcp/public-api.js';
import { createMcpServer } from '../../mcp/server.js';
import { MCP_CURSOR_MAX_LENGTH, MCP_PLACE_MAX_LENGTH, PLACE_REQUIRED, TOOL_NAMES, type ToolName } from '../../mcp/tools.js';
import { localStartWithOffset } from '../../lambdas/core/local-time.js';
import { PLACE_MAX_LENGTH } from '../../lambdas/core/search-params.js';
import { SEARCH_CURSOR_MAX_LENGTH } from '../../lambdas/core/search-cursor.js';
import { get } from '../support/http.js';
import { buildMcp } from '../../scripts/build-mcp.js';
import { KEYS } from '../support/fixtures.js';
import { ROOT } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/local.js';

let typed: TestServer;
let dated: TestServer;
const logs: string[] = [];

async function connect(server: TestServer, key = KEYS.both, tools?: readonly ToolName[]) {
  const api = new PublicApiClient(
    { apiKey: key, baseUrl: server.publicBaseUrl, timeoutMs: 5000, retryAttempts: 2, retryDelayMs: 1 },
    { ...defaultClientDeps, log: (m) => logs.push(m) },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(api, tools).connect(serverSide);
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
  it('lists the three tools by default, the spec\'s two as they were, with input and output schemas and descriptions', async () => {
    const client = await connect(typed);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['list-events', 'get-event', 'search-events']);
    const search = tools.find((t) => t.name === 'search-events')!;
    expect(search.inputSchema.required ?? []).toEqual([]);
    expect(search.inputSchema.properties).toMatchObject({
      city: { type: 'string' },
      country: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
    });
    expect(Object.keys(search.inputSchema.properties ?? {}).sort()).toEqual(['city', 'country', 'cursor', 'from', 'limit', 'to']);
    // The tool's bounds are the API's (the tool refuses before a request what the API would refuse, and nothing more).
    expect([MCP_PLACE_MAX_LENGTH, MCP_CURSOR_MAX_LENGTH]).toEqual([PLACE_MAX_LENGTH, SEARCH_CURSOR_MAX_LENGTH]);
    expect(search.outputSchema?.properties).toHaveProperty('pagination');
    expect(search.description).toMatch(/time zone/);
    expect(tools.find((t) => t.name === 'get-event')!.inputSchema.required).toEqual(['eventId']);
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

describe('search-events (PRODUCT P17) over the SDK transport, against the local server', () => {
  type Found = { message: string; data: { id: string; start_date: string; timezone: string; local_start: string }[]; pagination: { limit: number; has_more: boolean; next_cursor?: string } };
  const route = async (query: string) =>
    (await get<{ data: { events: { id: string }[]; pagination: { limit: number; has_more: boolean; next_cursor?: string } } }>(`${typed.publicBaseUrl}/events?${query}`, { authorization: `Bearer ${KEYS.both}` })).body.data;

  it('property: answers what GET /events lists, for any spelling of the place, any window and any limit', async () => {
    const client = await connect(typed);
    const spell = fc.constantFrom((s: string) => s, (s: string) => s.toUpperCase(), (s: string) => `  ${s.toLowerCase()} `);
    await fc.assert(
      fc.asyncProperty(
        fc.record({ city: fc.option(spell, { nil: undefined }), country: fc.option(fc.constantFrom('NL', 'nl', 'Netherlands'), { nil: undefined }) }),
        spell,
        fc.option(fc.constantFrom(['2026-11-21', '2026-12-21'], ['2026-12-01', '2026-12-31'], ['2027-01-01', '2027-03-01']), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
        async (place, cityCase, window, limit) => {
          const city = place.city ? cityCase('Amsterdam') : place.city;
          const args: Record<string, string> = { ...(city !== undefined ? { city } : {}), ...(place.country !== undefined ? { country: place.country } : {}) };
          if (Object.keys(args).length === 0) return;
          if (window) Object.assign(args, { from: window[0], to: window[1] });
          const result = await client.callTool({ name: 'search-events', arguments: { ...args, ...(limit !== undefined ? { limit } : {}) } });
          expect(result.isError).toBeFalsy();
          // The tool sends the place trimmed (the API folds spaces anyway).
          const query = new URLSearchParams(Object.entries(args).map(([k, v]) => [k, v.trim()]));
          if (limit !== undefined) query.set('limit', String(limit));
          const listed = await route(query.toString());
          const found = result.structuredContent as Found;
          expect(found.data.map((e) => e.id)).toEqual(listed.events.map((e) => e.id));
          expect(found.pagination).toEqual(listed.pagination);
          // Each event's start on its own zone's wall clock, with the zone's offset (issue 59, item 5).
          for (const e of found.data) expect(e.local_start).toBe(localStartWithOffset(Date.parse(e.start_date), e.timezone));
        },
      ),
      { numRuns: 15 },
    );
    // Amsterdam holds a weekly series: the default window (today, 30 days) is not empty, and a limit of 1 leaves more.
    const one = (await client.callTool({ name: 'search-events', arguments: { city: 'amsterdam', limit: 1 } })).structuredContent as Found;
    expect(one.data).toHaveLength(1);
    expect(one.pagination).toEqual({ limit: 1, has_more: true, next_cursor: expect.stringMatching(/^d1\./) });
    // Amsterdam in the winter is UTC+1: the local start says so.
    expect(one.data[0]!.local_start).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[12]:00$/);
    await client.close();
  });

  it.each([
    [{}, 'city', PLACE_REQUIRED],
    [{ city: '  ' }, 'city', 'city must not be empty'],
    [{ country: 'NL', from: '2026-02-30' }, 'from', 'from must be a date YYYY-MM-DD'],
    [{ country: 'NL', to: 'next week' }, 'to', 'to must be a date YYYY-MM-DD'],
    [{ country: 'NL', limit: 101 }, 'limit', ''],
    [{ city: 7 }, 'city', ''],
  ])('rejects %j before any request, naming the argument', async (args, name, message) => {
    const client = await connect(typed);
    typed.responses.splice(0);
    const result = await client.callTool({ name: 'search-events', arguments: args });
    expect(result.isError).toBe(true);
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text).toContain(name);
    expect(text).toContain(message);
    expect(typed.responses).toEqual([]);
    await client.close();
  });

  it("reports the API's own refusals (a window the route refuses) as an error with its status and fields", async () => {
    const client = await connect(typed);
    const result = await client.callTool({ name: 'search-events', arguments: { city: 'Amsterdam', from: '2026-12-10', to: '2026-12-01' } });
    expect(result.isError).toBe(true);
    const error = errorOf(result) as { status: number; details: { field: string }[]; attempts: number };
    expect({ status: error.status, attempts: error.attempts }).toEqual({ status: 400, attempts: 1 });
    expect(error.details.map((d) => d.field)).toContain('to');
    await client.close();
  });

  it('is not offered when PUBLIC_EVENTS_MCP_TOOLS leaves it out; the others answer as before', async () => {
    const client = await connect(typed, KEYS.both, ['list-events', 'get-event']);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list-events', 'get-event']);
    const refused = await client.callTool({ name: 'search-events', arguments: { city: 'Amsterdam' } }).catch((e: Error) => ({ isError: true, content: [{ text: e.message }] }));
    expect(refused.isError).toBe(true);
    const event = await client.callTool({ name: 'get-event', arguments: { eventId: 'evt_jazz01' } });
    expect(event.structuredContent).toMatchObject({ data: { id: 'evt_jazz01' } });
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

  const overStdio = async (env: Record<string, string>) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin],
      cwd: join(bin, '..'),
      env: { PUBLIC_API_KEY: KEYS.both, PUBLIC_API_BASE_URL: typed.publicBaseUrl, ...env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    return client;
  };

  it('with PUBLIC_EVENTS_MCP_TOOLS=list-events,get-event lists only the spec\'s two, and refuses a call of the third', async () => {
    const client = await overStdio({ PUBLIC_EVENTS_MCP_TOOLS: 'list-events,get-event' });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list-events', 'get-event']);
      const refused = await client.callTool({ name: 'search-events', arguments: { city: 'Amsterdam' } }).catch((e: Error) => ({ isError: true, content: [{ text: e.message }] }));
      expect(refused.isError).toBe(true);
      expect((refused.content as { text: string }[])[0]!.text).toContain('Tool search-events not found');
    } finally {
      await client.close();
    }
  });

  it('stops at start, naming the variable and its tools, when PUBLIC_EVENTS_MCP_TOOLS names a tool it does not have', async () => {
    const { code, stdout, stderr } = await run(process.execPath, [bin], { PATH: process.env.PATH, PUBLIC_API_KEY: KEYS.both, PUBLIC_EVENTS_MCP_TOOLS: 'list-events,search' });
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toContain('PUBLIC_EVENTS_MCP_TOOLS names unknown tool "search": give a comma-separated list of list-events, get-event, search-events');
  });

  it("answers tools/list with its three tools to the SDK's own stdio client", async () => {
    const client = await overStdio({});
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
      const event = await client.callTool({ name: 'get-event', arguments: { eventId: 'evt_jazz01' } });
      expect((event.structuredContent as { data: { id: string } }).data.id).toBe('evt_jazz01');
    } finally {
      await client.close();
    }
  });

  it('answers tools/list', async () => {
    const { code, stdout } = await inspect('--method', 'tools/list');
    expect(code).toBe(0);
    expect(JSON.parse(stdout).tools.map((t: { name: string }) => t.name)).toEqual([...TOOL_NAMES]);
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
