/**
 * The changes feeds' read cost for `npm run bench`: the same page of 100
 * read from a catalogue feed with 100 entries and with BENCH_FEED_SIZES
 * (default 100,100000) entries behind it: read capacity, DynamoDB calls and
 * round trips, and the ratio of the largest to the smallest (PRODUCT P16: a
 * page costs what it holds).
 */
import { fixedClock } from '../lambdas/core/clock.js';
import { catalogueChanges } from '../lambdas/core/feeds.js';
import type { Dataset } from '../lambdas/core/dataset.js';
import { batchWriteAll } from '../lambdas/store/batch-write.js';
import { createDocumentClient } from '../lambdas/store/client.js';
import { entrySortKey, feedPartition, feedScopes, memberKey } from '../lambdas/store/feed.js';
import { DynamoRepository } from '../lambdas/store/repository.js';
import { ensureTable, startDynalite } from '../local/dynalite.js';
import { writeDataset } from '../local/loader.js';

const SIZES = (process.env.BENCH_FEED_SIZES ?? '100,100000').split(',').map(Number);
const NOW = fixedClock('2026-11-21T12:00:00.000Z')();

export async function feedFigures(): Promise<string[]> {
  const store = await startDynalite();
  const client = createDocumentClient({ endpoint: store.endpoint });
  let calls = 0;
  let rcu = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      calls++;
      const used = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      rcu += [used ?? []].flat().reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
      return out;
    },
    { step: 'serialize', name: 'feedMeter', priority: 'high' },
  );
  const rows = ['| Entries in the feed | Page of 100 | Changes returned | DynamoDB calls | Read capacity units |', '|---|---|---|---|---|'];
  const measured: number[] = [];
  try {
    for (const size of SIZES) {
      const table = `feed-${size}`;
      await ensureTable(client, table);
      // 100 public events (the load writes their entries 1-100), then entries of events since removed, up to `size`.
      const dataset: Dataset = {
        users: [{ id: 'usr_host', username: 'host' }],
        events: Array.from({ length: 100 }, (_, i) => ({
          id: `evt_${i}`,
          creator_id: 'usr_host',
          title: `Night ${i}`,
          description: 'An evening of music. '.repeat(20),
          start_date: new Date(Date.parse('2027-01-01T20:00:00Z') + i * 86_400_000).toISOString(),
          timezone: 'UTC',
          status: 'published' as const,
          visibility: 'public' as const,
          created_at: '2026-05-01T00:00:00.000Z',
        })),
      };
      await writeDataset(client, table, dataset);
      const scope = feedScopes.catalogue();
      const filler = Array.from({ length: Math.max(0, size - 100) }, (_, i) => [
        { pk: feedPartition(scope), sk: entrySortKey(101 + i), type: 'FEED_ENTRY', member: `evt_gone${i}`, written_at: NOW.toISOString() },
        { ...memberKey(scope, `evt_gone${i}`), type: 'FEED_MEMBER', pos: 101 + i },
      ]).flat();
      await batchWriteAll(client, table, filler);
      const repo = new DynamoRepository(client, table);
      for (const [name, cursor] of [
        ['first page, no cursor', undefined],
        ['the last 100 entries', { scope, position: Math.max(0, size - 100), start: 0, issued: Math.floor(NOW.getTime() / 1000) }],
      ] as const) {
        calls = 0;
        rcu = 0;
        const page = await catalogueChanges(repo, { cursor, limit: 100 }, NOW, 'https://example.org');
        // Two round trips either way: the page's Query (and the head's, without a cursor) at once, then one BatchGetItem round (2 calls of 100 keys).
        rows.push(`| ${size.toLocaleString('en-US')} | ${name} | ${page.changes.length} | ${calls} | ${rcu.toFixed(1)} |`);
        if (!cursor) measured.push(rcu);
      }
    }
  } finally {
    client.destroy();
    await store.close();
  }
  rows.push('', `Read capacity of the first page, ${SIZES.at(-1)!.toLocaleString('en-US')} : ${SIZES[0]!.toLocaleString('en-US')} entries: ${(measured.at(-1)! / measured[0]!).toFixed(2)}`);
  return rows;
}
