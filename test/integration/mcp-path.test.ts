/**
 * The MCP adapter against a fake Public API that records every path it is
 * asked for: a placeholder's value stays exactly one path segment (dot
 * segments are refused before sending), and results carry what the API
 * returned, nothing invented (no pagination where the API gave none).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import fc from 'fast-check';
import { PublicApiClient, defaultClientDeps } from '../../mcp/public-api.js';
import { createMcpServer } from '../../mcp/server.js';
import { pathSegment } from '../../mcp/tools.js';

const BASE_PATH = '/api/public/v1';
let fake: Server;
let baseUrl: string;
let received: string[] = [];
let answer: unknown;

const event = (id: string) => ({ id, title: `Title ${id}`, start_date: '2027-01-01T00:00:00.000Z', end_date: null, timezone: 'UTC', location: '', creator: { username: 'alice' }, cost: null });

beforeAll(async () => {
  fake = createServer((req, res) => {
    received.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}${BASE_PATH}`;
});
afterAll(async () => {
  fake.closeAllConnections();
  await new Promise((resolve) => fake.close(resolve));
});
beforeEach(() => {
  received = [];
  answer = { success: true, message: 'Events of user x retrieved', data: [event('evt_a'), event('evt_b'), event('evt_c')] };
});

async function connect() {
  const api = new PublicApiClient({ apiKey: 'pk_test_0123456789abcdefghijklmnopqrstuv', baseUrl, timeoutMs: 2000, retryAttempts: 0, retryDelayMs: 1 }, { ...defaultClientDeps, log: () => undefined });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(api).connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}
const text = (result: Record<string, unknown>) => (result.content as { text: string }[])[0]!.text;

describe('a path placeholder stays one segment', () => {
  it.each(['..', '.'])('list-events refuses username %j before sending, naming the argument', async (username) => {
    const client = await connect();
    const result = await client.callTool({ name: 'list-events', arguments: { username } });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('username');
    expect(received).toEqual([]);
    await client.close();
  });

  it('any other valid username is sent as exactly the one segment it is', async () => {
    const client = await connect();
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.stringMatching(/^[A-Za-z0-9_.-]{1,64}$/), fc.constantFrom('...', '.a', 'a.', '..a', 'a..b', '-', '_')), async (username) => {
        received = [];
        const result = await client.callTool({ name: 'list-events', arguments: { username } });
        if (username === '.' || username === '..') {
          expect(result.isError).toBe(true);
          expect(received).toEqual([]);
          return;
        }
        expect(received).toHaveLength(1);
        const path = received[0]!.split('?')[0]!;
        expect(path.split('/')).toEqual(['', 'api', 'public', 'v1', 'users', encodeURIComponent(username), 'events']);
      }),
      { numRuns: 200, seed: 7 },
    );
    await client.close();
  });

  it('pathSegment refuses what URL resolution would not keep as one segment, encoded or not', () => {
    for (const bad of ['', '.', '..', '%2e', '%2E%2e', '.%2E']) expect(() => pathSegment('x', bad)).toThrow('x must not be empty, "." or ".."');
    expect(pathSegment('x', 'a/b?c#d')).toBe('a%2Fb%3Fc%23d');
    expect(pathSegment('x', '...')).toBe('...');
  });
});

describe('results carry what the API returned', () => {
  it('dated variant (data is the list, no paging): no pagination is invented', async () => {
    const client = await connect();
    const all = await client.callTool({ name: 'list-events', arguments: { username: 'alice' } });
    expect(all.isError).toBeFalsy();
    expect(all.structuredContent).toEqual({ message: 'Events of user x retrieved', data: (answer as { data: unknown[] }).data });
    const limited = await client.callTool({ name: 'list-events', arguments: { username: 'alice', limit: 2 } });
    expect(limited.structuredContent).toEqual({ message: 'Events of user x retrieved', data: (answer as { data: unknown[] }).data.slice(0, 2) });
    expect(JSON.parse(text(limited))).toEqual(limited.structuredContent);
    await client.close();
  });

  it('typed variant: the API’s own pagination, as it gave it', async () => {
    const pagination = { limit: 2, offset: 4, total: 9 };
    answer = { success: true, message: 'm', data: { events: [event('evt_a')], pagination } };
    const client = await connect();
    const result = await client.callTool({ name: 'list-events', arguments: { username: 'alice', type: 'past' } });
    expect(result.structuredContent).toEqual({ message: 'm', data: [event('evt_a')], pagination });
    answer = { success: true, message: 'm', data: { events: [] } };
    expect((await client.callTool({ name: 'list-events', arguments: { username: 'alice' } })).structuredContent).toEqual({ message: 'm', data: [] });
    await client.close();
  });

  it('an answer of neither shape is an error, not made-up data', async () => {
    answer = { success: true, message: 'm', data: { something: 'else' } };
    const client = await connect();
    const result = await client.callTool({ name: 'list-events', arguments: { username: 'alice' } });
    expect(result.isError).toBe(true);
    expect(JSON.parse(text(result)).error).toMatchObject({ status: 200, message: 'The API answered with an unexpected shape' });
    await client.close();
  });
});
