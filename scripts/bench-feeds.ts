/**
 * The changes feeds' figures for `npm run bench` (PRODUCT P16,
 * docs/performance.md "Changes feeds"), on dynalite, with write capacity
 * billed as DynamoDB bills it (scripts/write-billing.ts) and read capacity
 * as the store reports it:
 * - appends under contention: 1, 2, 4, 8 and 16 appenders at once to one
 *   scope, each appending its own members (an edit: the append alone; a
 *   new member, as a new RSVP is: its join, then the append): billed write
 *   units, refused conditional writes and calls per append;
 * - a page of 100: members (a start) and entries, of small events and of
 *   events at the contract's maxima: read capacity, calls, round trips;
 * - a start from no cursor behind BENCH_FEED_REMOVED (default 100,000)
 *   removed members: requests and read capacity to read it to the end,
 *   against 100 live members alone;
 * - a host's feed and a guest feed, from no cursor and with a cursor.
 *
 * Round trips are counted as the longest chain of calls each sent after the
 * previous one was answered: calls sent together (Promise.all) are one.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../lambdas/core/clock.js';
import { TEXT_MAX, type Dataset, type SourceEvent } from '../lambdas/core/dataset.js';
import { encodeCursor, everyShardAt, parseCursor, staticKeyring, type SealedCursor } from '../lambdas/core/feed-cursor.js';
import { catalogueChanges, guestChanges, hostChanges, type FeedContext, type FeedPage } from '../lambdas/core/feeds.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { FeedWriter, feedScopes } from '../lambdas/store/feeds/feed.js';
import { DynamoRepository } from '../lambdas/store/reads/repository.js';
import { TableIO } from '../lambdas/store/table/table-io.js';
import { ensureTable, startDynalite } from '../local/dynalite.js';
import { roundTrips } from '../local/instrument.js';
import { writeDataset } from '../local/loader.js';
import { meter } from './bench-changes.js';

const APPENDERS = [1, 2, 4, 8, 16];
/** Appends per run of the contention table, shared among the appenders. */
const APPENDS = Number(process.env.BENCH_FEED_APPENDS ?? 256);
const REMOVED = Number(process.env.BENCH_FEED_REMOVED ?? 100_000);
const clock = fixedClock('2026-11-21T12:00:00.000Z');
const NOW = clock();
const CURSOR_KEY = Buffer.from('bench-cursor-key');
const keyring = staticKeyring(CURSOR_KEY);
const SITE = 'https://example.org';

/** Counts calls, read capacity and round trips of the reads a page makes. */
function readMeter(client: DynamoDBDocumentClient) {
  const m = { calls: 0, rcu: 0, spans: [] as { start: number; end: number }[] };
  let events = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const span = { start: events++, end: Infinity };
      m.spans.push(span);
      const out = await next(args);
      span.end = events++;
      m.calls++;
      const used = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      m.rcu += [used ?? []].flat().reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
      return out;
    },
    { step: 'serialize', name: 'feedMeter', priority: 'high' },
  );
  return { m, reset: () => Object.assign(m, { calls: 0, rcu: 0, spans: [] }) };
}

const event = (i: number, maximal: boolean): SourceEvent => {
  const wide = (bytes: number) => '語'.repeat(Math.floor(bytes / 3));
  const url = (bytes: number) => `https://img.example/${'p'.repeat(bytes - 20)}`;
  return {
    id: `evt_${String(i).padStart(3, '0')}`,
    creator_id: 'usr_host',
    title: maximal ? wide(TEXT_MAX.title) : `Night ${i}`,
    description: maximal ? wide(TEXT_MAX.description) : 'An evening of music. '.repeat(20),
    cover: maximal ? url(TEXT_MAX.url) : null,
    location: maximal ? { name: wide(TEXT_MAX.locationName), city: wide(TEXT_MAX.locationPart), country: wide(TEXT_MAX.locationPart) } : null,
    start_date: new Date(Date.parse('2027-01-01T20:00:00Z') + i * 86_400_000).toISOString(),
    timezone: 'UTC',
    status: 'published',
    visibility: 'public',
    created_at: '2026-05-01T00:00:00.000Z',
    ...(maximal ? { links: { spotify_url: url(TEXT_MAX.url), wavlake_url: url(TEXT_MAX.url) }, contributions: { cashapp: wide(TEXT_MAX.handle), venmo: wide(TEXT_MAX.handle), paypal: wide(TEXT_MAX.handle), btc_lightning: wide(TEXT_MAX.lightning) } } : {}),
  } as SourceEvent;
};

function dataset(maximal: boolean): Dataset {
  const guests = Array.from({ length: 100 }, (_, i) => ({ id: `usr_g${i}`, username: `guest${i}` }));
  return {
    users: [{ id: 'usr_host', username: 'host' }, ...guests],
    events: Array.from({ length: 100 }, (_, i) => event(i, maximal)),
    rsvps: guests.map((g) => ({ event_id: 'evt_000', user_id: g.id, status: 'yes' as const, rsvp_date: '2026-05-02T00:00:00.000Z' })),
  };
}

/** Every page from no cursor until has_more is false: requests, read capacity, the longest round trips of one page. */
async function readToEnd<C>(m: ReturnType<typeof readMeter>, page: (cursor: SealedCursor | undefined) => Promise<FeedPage<C>>) {
  let requests = 0;
  let rcu = 0;
  let cursor: SealedCursor | undefined;
  for (let more = true; more; requests++) {
    m.reset();
    const p = await page(cursor);
    rcu += m.m.rcu;
    cursor = parseCursor(p.next_cursor)!;
    more = p.has_more;
  }
  return { requests, rcu };
}

export async function feedFigures(): Promise<string[]> {
  const store = await startDynalite();
  const rows: string[] = [];
  try {
    // 1. Appends under contention.
    rows.push('Appends to one scope by N appenders at once (each its own client and members; billed write units as DynamoDB bills them):', '');
    rows.push('| Appenders | Appends | Kind | Billed write units per append | Refused conditional writes per append | DynamoDB calls per append |', '|---|---|---|---|---|---|');
    for (const kind of ['an edit (the append)', 'a new member (join, then append)']) {
      for (const n of APPENDERS) {
        const table = `appends-${n}-${kind.length}`;
        const admin = createDocumentClient({ endpoint: store.endpoint });
        await ensureTable(admin, table);
        admin.destroy();
        const meters = Array.from({ length: n }, () => {
          const client = createDocumentClient({ endpoint: store.endpoint });
          return { client, ...meter(client, store.endpoint) };
        });
        const each = Math.floor(APPENDS / n);
        await Promise.all(
          meters.map(async ({ client }, a) => {
            const writer = new FeedWriter(new TableIO(client, table), clock);
            for (let i = 0; i < each; i++) {
              const member = `usr_a${a}_${i}`;
              if (kind.startsWith('a new')) await writer.join(feedScopes.guests('evt_burst'), member, 1);
              await writer.append(feedScopes.guests('evt_burst'), [member]);
            }
          }),
        );
        const total = (k: 'wcu' | 'refused' | 'calls') => meters.reduce((s, x) => s + x.m[k], 0);
        const appends = each * n;
        rows.push(`| ${n} | ${appends} | ${kind} | ${(total('wcu') / appends).toFixed(2)} | ${(total('refused') / appends).toFixed(2)} | ${(total('calls') / appends).toFixed(2)} |`);
        for (const x of meters) {
          x.close();
          x.client.destroy();
        }
      }
    }

    // 2. A page of 100, small and maximal events; a host's and a guest feed.
    const client = createDocumentClient({ endpoint: store.endpoint });
    const reads = readMeter(client);
    rows.push('', 'A page of 100 (catalogue; consistent reads), and the other feeds:', '');
    rows.push('| Feed | Events | Page | Changes returned | DynamoDB calls | Round trips | Read capacity units |', '|---|---|---|---|---|---|---|');
    for (const maximal of [false, true]) {
      const table = `page-${maximal ? 'max' : 'small'}`;
      await ensureTable(client, table);
      await writeDataset(client, table, dataset(maximal), { clock });
      const repo = new DynamoRepository(client, table);
      const ctx: FeedContext = { feeds: repo, keyring, now: NOW };
      const size = maximal ? 'at the maxima' : 'small';
      const metered = async <C>(feed: string, name: string, read: () => Promise<FeedPage<C>>) => {
        reads.reset();
        const page = await read();
        rows.push(`| ${feed} | ${size} | ${name} | ${page.changes.length} | ${reads.m.calls} | ${roundTrips(reads.m.spans)} | ${reads.m.rcu.toFixed(1)} |`);
        return page;
      };
      const start = await metered('catalogue', 'from no cursor (the position)', () => catalogueChanges(ctx, { limit: 100 }, SITE));
      const cursor = parseCursor(start.next_cursor)!;
      await metered('catalogue', '100 members (a start)', () => catalogueChanges(ctx, { cursor, limit: 100 }, SITE));
      // The entries a follower reads: the 100 loaded ones, from position 0.
      await metered('catalogue', '100 entries (a follower)', () => catalogueChanges(ctx, { cursor: parseCursor(signedAt(0))!, limit: 100 }, SITE));
      if (maximal) continue;
      let host: SealedCursor | undefined;
      for (const name of ['from no cursor (the name, then the position)', '100 members, with the cursor']) {
        host = parseCursor((await metered("a host's events", name, () => hostChanges(ctx, { cursor: host, limit: 100, username: 'host', variant: 'typed' }, SITE))).next_cursor)!;
      }
      let guests: SealedCursor | undefined;
      for (const name of ['from no cursor (the position)', '100 members, with the cursor']) {
        guests = parseCursor((await metered("an event's guests", name, () => guestChanges(ctx, repo, { cursor: guests, limit: 100, eventId: 'evt_000' }))).next_cursor)!;
      }
    }

    // 3. A start from no cursor behind removed members: their entries stay in chunks, their member list does not hold them.
    rows.push('', `A start from no cursor, read to the end (100 live events), behind N removed ones (appended, then left):`, '');
    rows.push('| Removed members | Requests | Read capacity units |', '|---|---|---|');
    for (const removed of [0, REMOVED]) {
      const table = `start-${removed}`;
      await ensureTable(client, table);
      await writeDataset(client, table, dataset(false), { clock });
      const writer = new FeedWriter(new TableIO(client, table), clock);
      for (let i = 0; i < removed; i += 100) await writer.append(feedScopes.catalogue(), Array.from({ length: Math.min(100, removed - i) }, (_, j) => `evt_gone${i + j}`));
      const repo = new DynamoRepository(client, table);
      const r = await readToEnd(reads, (cursor) => catalogueChanges({ feeds: repo, keyring, now: NOW }, { cursor, limit: 100 }, SITE));
      rows.push(`| ${removed.toLocaleString('en-US')} | ${r.requests} | ${r.rcu.toFixed(1)} |`);
    }
    client.destroy();
  } finally {
    await store.close();
  }
  return rows;
}

/** An entries cursor at `position` of the catalogue, as the bench's keyring signs it. */
function signedAt(position: number): string {
  return encodeCursor({ scope: feedScopes.catalogue(), mode: 'entries', position: everyShardAt(position), after: '', asOf: Math.floor(NOW.getTime() / 1000) }, CURSOR_KEY);
}
