/**
 * The MCP tools refuse in this project's words (issue 61 item 5): whatever a
 * caller sends, a refusal is the `{ error: { status, message, details,
 * attempts } }` envelope the API's own refusals come in, naming each failing
 * argument, never the SDK's "MCP error -32602: Input validation error" or
 * zod's default texts; arguments a tool does not read are ignored, as every
 * route ignores query parameters it does not read.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import fc from 'fast-check';
import type { Outcome, PublicApiClient } from '../../mcp/public-api.js';
import { createMcpServer } from '../../mcp/server.js';

const asked: { path: string; query?: Record<string, unknown> }[] = [];
const api: PublicApiClient = {
  get: async (path: string, query?: Record<string, unknown>): Promise<Outcome> => {
    asked.push({ path, query });
    const data = path === '/events' ? [] : path.startsWith('/events/') ? { id: 'evt_a' } : { events: [], pagination: { limit: 20, offset: 0, total: 0 } };
    const body = path === '/events' ? { message: 'ok', data, pagination: { limit: 20, has_more: false } } : { message: 'ok', data };
    return { ok: true, status: 200, body, attempts: 1 } as Outcome;
  },
} as PublicApiClient;

let client: Client;
beforeAll(async () => {
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(api).connect(serverSide);
  client = new Client({ name: 'refusals-test', version: '1' });
  await client.connect(clientSide);
});
afterAll(async () => client.close());

type Envelope = { error: { status: number; message: string; details: { field: string; message: string }[] | null; attempts: number } };
const call = async (name: string, args: unknown) => {
  const result = await client.callTool({ name, arguments: args as Record<string, unknown> });
  return { result, text: (result.content as { text: string }[])[0]!.text };
};
/** Phrases of the SDK's and zod's defaults: none may reach a caller. */
const LIBRARY_WORDS = /MCP error|-32602|Input validation error|Invalid arguments for tool|Invalid input|expected (string|number)|Too (small|big)|received|not found$/;

describe('MCP refusals', () => {
  it.each([
    ['list-events', {}, 'username', 'username is required'],
    ['list-events', { username: '@alice' }, 'username', 'username must be 1-64 letters, digits, ".", "_" or "-", without "@"'],
    ['list-events', { username: 'alice', limit: 0 }, 'limit', 'limit must be an integer between 1 and 100'],
    ['list-events', { username: 'alice', limit: 2.5 }, 'limit', 'limit must be an integer between 1 and 100'],
    ['list-events', { username: 'alice', limit: '5' }, 'limit', 'limit must be an integer between 1 and 100'],
    ['list-events', { username: 'alice', type: 'hosted' }, 'type', 'type must be upcoming, past or profile (or left out for the hosted events)'],
    ['get-event', { eventId: 5 }, 'eventId', 'eventId must be a string'],
    ['get-event', {}, 'eventId', 'eventId is required'],
    ['search-events', {}, 'city', 'Give a city, a country or both'],
    ['search-events', { city: 'Lisbon', from: '2027-02-30' }, 'from', 'from must be a date YYYY-MM-DD'],
    ['search-events', { city: 42 }, 'city', 'city must be a string'],
  ])('%s %j: 400 naming %s, in our words, before any request', async (name, args, field, message) => {
    asked.length = 0;
    const { result, text } = await call(name, args);
    expect(result.isError).toBe(true);
    const { error } = JSON.parse(text) as Envelope;
    expect(error).toMatchObject({ status: 400, message, attempts: 0 });
    expect(error.details).toContainEqual({ field, message });
    expect(asked).toEqual([]);
  });

  it('an unknown tool is named, with the tools the server offers', async () => {
    const { result, text } = await call('search_events', {});
    expect(result.isError).toBe(true);
    expect(JSON.parse(text)).toEqual({ error: { status: 404, message: 'This server has no tool named "search_events"; it offers list-events, get-event, search-events', details: null, attempts: 0 } });
  });

  it('any arguments at all: an answer or our envelope, never a library default, and unknown arguments never sent on', async () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }));
    const args = fc.dictionary(fc.constantFrom('username', 'type', 'limit', 'eventId', 'city', 'country', 'from', 'to', 'cursor', 'extra', 'Username'), value);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('list-events', 'get-event', 'search-events'), args, async (name, given) => {
        asked.length = 0;
        const { result, text } = await call(name, given);
        expect(text).not.toMatch(LIBRARY_WORDS);
        const refused = result.isError ? (JSON.parse(text) as Envelope).error.attempts === 0 : false;
        if (refused) {
          const { error } = JSON.parse(text) as Envelope;
          expect(error.status).toBe(400);
          expect(error.details!.length).toBeGreaterThan(0);
          expect(error.message).toBe(error.details![0]!.message);
          expect(asked).toEqual([]);
        } else {
          expect(asked.length).toBe(1);
          for (const { query } of asked) for (const key of Object.keys(query ?? {})) expect(['type', 'limit', 'city', 'country', 'from', 'to', 'cursor']).toContain(key);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('arguments a tool does not read are ignored: the same request as without them', async () => {
    asked.length = 0;
    await call('list-events', { username: 'alice', limit: 2 });
    await call('list-events', { username: 'alice', limit: 2, page: 3, Username: 'bob', format: 'xml' });
    expect(asked[1]).toEqual(asked[0]);
    expect((await call('get-event', { eventId: 'evt_a', include: 'guests' })).result.isError).toBeFalsy();
  });
});

describe('a tool that fails before the API answers', () => {
  it('answers the envelope with no made-up status and no internal text, and logs the cause', async () => {
    const logged: string[] = [];
    const failing = { get: async () => Promise.reject(new Error('socket hang up at 10.0.3.7:443 (internal detail)')) } as unknown as PublicApiClient;
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(failing, undefined, (line) => logged.push(line)).connect(serverSide);
    const c = new Client({ name: 'failing-test', version: '1' });
    await c.connect(clientSide);
    try {
      const result = await c.callTool({ name: 'get-event', arguments: { eventId: 'evt_a' } });
      expect(result.isError).toBe(true);
      const { error } = JSON.parse((result.content as { text: string }[])[0]!.text) as { error: Record<string, unknown> };
      expect(error).toEqual({ status: null, message: "get-event failed before the Public API answered (this server's log says why); try again", details: null, attempts: 0 });
      expect(logged).toEqual(['get-event failed before the Public API answered: socket hang up at 10.0.3.7:443 (internal detail)']);
    } finally {
      await c.close();
    }
  });
});
