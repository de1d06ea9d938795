/**
 * The changes feeds' read cost for `npm run bench`: the same page of 100
 * read from a catalogue feed with 100 entries and with BENCH_FEED_SIZES
 * (default 100,100000) entries behind it: read capacity, DynamoDB calls and
 * round trips, and the ratio of the largest to the smallest (PRODUCT P16: a
 * page costs what it holds, in at most two round trips). Then a host's feed
 * and a guest feed of 100 members, from no cursor and with one.
 *
 * Round trips are counted as the longest chain of calls each sent after the
 * previous one was answered: calls sent together (Promise.all) are one.
 */
import { fixedClock } from '../lambdas/core/clock.js';
import { catalogueChanges, guestChanges, hostChanges, type FeedPage } from '../lambdas/core/feeds.js';
import { parseCursor, staticKeyring, type SealedCursor, encodeCursor } from '../lambdas/core/feed-cursor.js';
import type { Dataset } from '../lambdas/core/dataset.js';
import { batchWriteAll } from '../lambdas/store/batch-write.js';
import { createDocumentClient } from '../lambdas/store/client.js';
import { FeedWriter, feedScopes } from '../lambdas/store/feed.js';
import { TableIO } from '../lambdas/store/table-io.js';
import { DynamoRepository } from '../lambdas/store/repository.js';
import { ensureTable, startDynalite } from '../local/dynalite.js';
import { roundTrips } from '../local/instrument.js';
import { writeDataset } from '../local/loader.js';

const SIZES = (process.env.BENCH_FEED_SIZES ?? '100,100000').split(',').map(Number);
const NOW = fixedClock('2026-11-21T12:00:00.000Z')();
const KEY = Buffer.from('bench-cursor-key');
const keyring = staticKeyring(KEY);

export async function feedFigures(): Promise<string[]> {
  const store = await startDynalite();
  const client = createDocumentClient({ endpoint: store.endpoint });
  let calls = 0;
  let rcu = 0;
  let events = 0;
  let spans: { start: number; end: number }[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const span = { start: events++, end: Infinity };
      spans.push(span);
      const out = await next(args);
      span.end = events++;
      calls++;
      const used = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      rcu += [used ?? []].flat().reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
      return out;
    },
    { step: 'serialize', name: 'feedMeter', priority: 'high' },
  );
  const rows = ['| Feed | Entries in the feed | Page of 100 | Changes returned | DynamoDB calls | Round trips | Read capacity units |', '|---|---|---|---|---|---|---|'];
  const measured: number[] = [];
  const metered = async <C>(feed: string, size: number, name: string, read: () => Promise<FeedPage<C>>): Promise<FeedPage<C>> => {
    calls = 0;
    rcu = 0;
    spans = [];
    const page = await read();
    rows.push(`| ${feed} | ${size.toLocaleString('en-US')} | ${name} | ${page.changes.length} | ${calls} | ${roundTrips(spans)} | ${rcu.toFixed(1)} |`);
    return page;
  };
  const issued = Math.floor(NOW.getTime() / 1000);
  try {
    for (const size of SIZES) {
      const table = `feed-${size}`;
      await ensureTable(client, table);
      // 100 public events (the load writes their entries 1-100), then entries of events since removed, up to `size`.
      const guests = Array.from({ length: 100 }, (_, i) => ({ id: `usr_g${i}`, username: `guest${i}` }));
      const dataset: Dataset = {
        users: [{ id: 'usr_host', username: 'host' }, ...guests],
        rsvps: guests.map((g) => ({ event_id: 'evt_0', user_id: g.id, status: 'yes' as const, rsvp_date: '2026-05-02T00:00:00.000Z' })),
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
      // Entries of events since removed (each joined and left: its marker expired), up to `size`.
      const writer = new FeedWriter(new TableIO(client, table), () => NOW);
      const gone = Array.from({ length: Math.max(0, size - 100) }, (_, i) => `evt_gone${i}`);
      for (let i = 0; i < gone.length; i += 100) await writer.append(scope, gone.slice(i, i + 100));
      void batchWriteAll;
      const repo = new DynamoRepository(client, table);
      const ctx = { feeds: repo, keyring, now: NOW };
      for (const [name, cursor] of [
        ['first page, no cursor', undefined],
        ['the last 100 entries', parseCursor(encodeCursor({ scope, mode: 'entries', position: Math.max(0, size - 100), after: '', asOf: issued }, KEY))!],
      ] as const) {
        const page = await metered('catalogue', size, name, () => catalogueChanges(ctx, { cursor, limit: 100 }, 'https://example.org'));
        if (!cursor) measured.push(rcu);
        void page;
      }
      if (size !== SIZES[0]) continue;
      // A host's feed resolves the name first: from no cursor its first answer holds only the start's cursor.
      let hostCursor: SealedCursor | undefined;
      for (const name of ['first answer, no cursor', 'next page, with its cursor']) {
        const page = await metered("a host's events", 100, name, () => hostChanges(ctx, { cursor: hostCursor, limit: 100, username: 'host', variant: 'typed' }, 'https://example.org'));
        hostCursor = parseCursor(page.next_cursor)!;
      }
      let guestCursor: SealedCursor | undefined;
      for (const name of ['first page, no cursor', 'next page, with its cursor']) {
        const page = await metered("an event's guests", 100, name, () => guestChanges(ctx, repo, { cursor: guestCursor, limit: 100, eventId: 'evt_0' }));
        guestCursor = parseCursor(page.next_cursor)!;
      }
    }
  } finally {
    client.destroy();
    await store.close();
  }
  rows.push('', `Read capacity of the catalogue's first page, ${SIZES.at(-1)!.toLocaleString('en-US')} : ${SIZES[0]!.toLocaleString('en-US')} entries: ${(measured.at(-1)! / measured[0]!).toFixed(2)}`);
  return rows;
}

