/**
 * Review of discovery (PRODUCT P17), the MCP tool `search-events`: it takes
 * no cursor and gives none ("an assistant narrows the dates or raises
 * `limit`", docs/mcp.md; the tool's description: "has_more means more events
 * are in the window: narrow the dates or raise limit"). Dates are whole
 * local days and `limit` stops at 100, so once one local day of a place
 * holds more than 100 public events (a country's Saturday, a festival city),
 * neither remedy exists: the tool answers `has_more: true` and the events
 * after the 100th of that day can never be reached through it, whatever the
 * assistant asks. GET /events reaches them with its next_cursor.
 *
 * Against the local server, over the MCP SDK's in-memory transport, as
 * test/e2e/mcp.test.ts drives it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { PublicApiClient, defaultClientDeps } from '../../mcp/public-api.js';
import { createMcpServer } from '../../mcp/server.js';
import { KEYS, demoDataset } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';

const DAY = '2027-03-06';
const EVENTS: SourceEvent[] = Array.from({ length: 120 }, (_, i) => ({
  id: `evt_fest_${String(i).padStart(3, '0')}`,
  creator_id: 'usr_carol',
  title: `Festival stage ${i}`,
  description: null,
  cover: null,
  location: { name: `Stage ${i}`, city: 'Lisbon', country: 'PT' },
  // Lisbon in March is UTC: 10:00 to 21:59 local, all on one local day.
  start_date: `${DAY}T${String(10 + Math.floor(i / 10)).padStart(2, '0')}:${String((i % 10) * 5).padStart(2, '0')}:00.000Z`,
  end_date: null,
  timezone: 'Europe/Lisbon',
  status: 'published',
  visibility: 'public',
  cost: null,
  created_at: '2026-01-01T00:00:00.000Z',
}));

let server: TestServer;
beforeAll(async () => {
  const demo = demoDataset();
  const dataset: Dataset = { ...demo, events: [...demo.events, ...EVENTS] };
  const file = join(mkdtempSync(join(tmpdir(), 'repro-mcp-')), 'data.json');
  writeFileSync(file, JSON.stringify(dataset));
  server = await startTestServer({ dataFile: file, clock: () => new Date('2027-03-01T12:00:00.000Z') });
}, 120_000);
afterAll(async () => server?.close());

async function connect() {
  const api = new PublicApiClient({ apiKey: KEYS.both, baseUrl: server.publicBaseUrl, timeoutMs: 5000, retryAttempts: 0, retryDelayMs: 1 }, { ...defaultClientDeps, log: () => undefined });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(api).connect(serverSide);
  const client = new Client({ name: 'repro', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

type Found = { data: { id: string }[]; pagination: { limit: number; has_more: boolean; next_cursor?: string } };

describe('search-events on a day that holds more than 100 events', () => {
  it('every event of the day can be reached through the tool (its has_more says: narrow the dates or raise limit)', async () => {
    const client = await connect();
    // The narrowest window (one local day) at the largest limit, every way the place can be spelled; the fix gives the
    // tool a cursor (issue 59, d8), so each walk goes on with the answer's next_cursor until has_more is false.
    for (const place of [{ city: 'Lisbon' }, { country: 'PT' }, { city: 'Lisbon', country: 'PT' }]) {
      const seen = new Set<string>();
      let cursor: string | undefined;
      let calls = 0;
      do {
        const result = await client.callTool({ name: 'search-events', arguments: { ...place, from: DAY, to: DAY, limit: 100, ...(cursor ? { cursor } : {}) } });
        const found = result.structuredContent as Found;
        if (calls++ === 0) expect(found.pagination.has_more).toBe(true);
        expect(found.pagination.has_more).toBe(found.pagination.next_cursor !== undefined);
        for (const e of found.data) seen.add(e.id);
        cursor = found.pagination.next_cursor;
      } while (cursor !== undefined && calls < 10);
      const unreachable = EVENTS.map((e) => e.id).filter((id) => !seen.has(id));
      expect({ place, calls, unreachable: unreachable.length, first: unreachable[0] }).toEqual({ place, calls: 2, unreachable: 0, first: undefined });
    }
    await client.close();
  });
});
