/**
 * The change path against DynamoDB's partition limit (issue 59, item 6;
 * docs/data-model.md, "Partitions under the change path"). A partition takes
 * at most 1,000 write units a second, an index's partitions as well; the
 * ingest applies at most about INGEST_PACE changes a second at the
 * recommended concurrency (docs/performance.md, "Freshness under load"). If
 * every one of those changes were of one kind and met one partition (every
 * change a new event in one city, every change an RSVP on one event), that
 * partition would take INGEST_PACE times what one such change bills it. The
 * bench applies a stream of each kind through the change path's own applier,
 * ten at once as an ingest batch does (one host's burst also through five
 * functions at once, each with a client of its own: processes share no
 * tally traffic, lambdas/store/changes/tally-traffic.ts), meters every write as DynamoDB bills it
 * and where (scripts/write-billing.ts, partitionBill: the table's partition
 * by `pk`, each index entry in its index's partition), and reports each
 * stream's hottest partition per change and at that pace, against a margin
 * of 20 % under the limit (MARGIN_WCU).
 *
 * `npx tsx scripts/bench-partitions.ts` prints the table alone; `npm run
 * bench` prints it among its measured (not held) tables, since a run takes
 * about two minutes and the "next hottest" column can swap partitions of
 * equal load between runs. docs/data-model.md copies the figures;
 * test/integration/change-partitions.test.ts holds every stream within the
 * margin.
 */
import type { Change } from '../lambdas/core/changes.js';
import { fixedClock } from '../lambdas/core/clock.js';
import type { Dataset, SourceEvent } from '../lambdas/core/dataset.js';
import { ChangeApplier } from '../lambdas/store/changes/applier.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { ensureTable, startDynalite } from '../local/dynalite.js';
import { writeDataset } from '../local/loader.js';
import { meter } from './bench-changes.js';

/** Changes a second through the ingest at its recommended concurrency (5): docs/performance.md's model. */
export const INGEST_PACE = 430;
/** A partition's write limit, and the margin the change path keeps under it (20 %). */
export const PARTITION_WCU = 1_000;
export const MARGIN_WCU = 800;
/** Records an ingest batch applies at once. */
const AT_ONCE = 10;
const clock = fixedClock('2026-11-21T12:00:00.000Z');

export interface Stream {
  name: string;
  d0: Dataset;
  changes: Change[];
  /** Ingest functions applying it at once, each AT_ONCE at a time on a client of its own (default 1). */
  functions?: number;
}

/** The recommended ingest concurrency, at which the ingest applies INGEST_PACE changes a second. */
const RECOMMENDED_FUNCTIONS = 5;

export interface StreamLoad {
  name: string;
  changes: number;
  /** The partitions by units billed per change, hottest first. */
  partitions: { partition: string; perChange: number }[];
}

const STATUSES = ['yes', 'maybe', 'no'] as const;

const cityEvent = (id: string, creator: string, i: number, city = 'Lisbon'): SourceEvent => ({
  id,
  creator_id: creator,
  title: `${city} night ${i}`,
  description: null,
  cover: null,
  location: { name: `Venue ${i % 7}`, city, country: 'PT' },
  start_date: new Date(Date.parse('2027-03-01T20:00:00.000Z') + (i % 40) * 86_400_000).toISOString(),
  end_date: null,
  timezone: 'Europe/Lisbon',
  status: 'published',
  visibility: 'public',
  cost: null,
  created_at: '2026-11-01T00:00:00.000Z',
});

/** The streams, each of `n` changes of one kind meeting one place, one host or one event. */
export function streams(n = 64): Stream[] {
  const hosts = Array.from({ length: n }, (_, i) => ({ id: `usr_h${i}`, username: `host${i}` }));
  const big = { id: 'usr_big', username: 'bighost' };
  const guests = Array.from({ length: n }, (_, i) => ({ id: `usr_g${i}`, username: `guest${i}` }));
  const old = Array.from({ length: 200 }, (_, i) => ({ id: `usr_o${i}`, username: `old${i}` }));
  const lisbon = hosts.map((h, i) => cityEvent(`evt_lis${i}`, h.id, i));
  const porto = hosts.map((h, i) => cityEvent(`evt_opo${i}`, h.id, i, 'Porto'));
  const party = { ...cityEvent('evt_party', big.id, 0), title: 'The party' };
  const users = [...hosts, big, ...guests, ...old];
  const crowd = old.map((u, i) => ({ event_id: party.id, user_id: u.id, status: STATUSES[i % 3]!, rsvp_date: '2026-11-02T00:00:00.000Z' }));
  const answered = guests.map((u, i) => ({ event_id: party.id, user_id: u.id, status: STATUSES[i % 3]!, rsvp_date: '2026-11-03T00:00:00.000Z' }));
  const base: Dataset = { users, events: [party], rsvps: crowd };
  const withCity: Dataset = { users, events: [party, ...lisbon, ...porto], rsvps: crowd };
  const withAnswers: Dataset = { ...base, rsvps: [...crowd, ...answered] };
  return [
    { name: 'new events in one city, each by its own host (each joins the catalogue, its host and the three place feeds)', d0: base, changes: lisbon.map((event) => ({ type: 'event.upserted', version: 1, event })) },
    { name: 'new events of one host in one city', d0: base, changes: lisbon.map((e) => ({ type: 'event.upserted', version: 1, event: { ...e, creator_id: big.id } })) },
    // Processes share nothing: each function's appliers recount the host's tally summaries apart from the others'.
    { name: `new events of one host in one city, through ${RECOMMENDED_FUNCTIONS} ingest functions`, d0: base, changes: lisbon.map((e) => ({ type: 'event.upserted', version: 1, event: { ...e, creator_id: big.id } })), functions: RECOMMENDED_FUNCTIONS },
    { name: 'edits of events in one city (title)', d0: withCity, changes: lisbon.map((e) => ({ type: 'event.upserted', version: 1, event: { ...e, title: `${e.title}, again` } })) },
    { name: 'moves of events into one city (from another)', d0: withCity, changes: porto.map((e) => ({ type: 'event.upserted', version: 1, event: { ...e, location: { name: 'Moved', city: 'Lisbon', country: 'PT' } } })) },
    { name: 'new RSVPs on one event', d0: base, changes: answered.map((rsvp) => ({ type: 'rsvp.upserted', version: 1, rsvp })) },
    { name: 'RSVP status changes on one event', d0: withAnswers, changes: answered.map((r, i) => ({ type: 'rsvp.upserted', version: 2, rsvp: { ...r, status: STATUSES[(i + 1) % 3]! } })) },
    { name: 'RSVP deletions on one event', d0: withAnswers, changes: answered.map((r) => ({ type: 'rsvp.deleted', version: 2, event_id: r.event_id, user_id: r.user_id })) },
  ];
}

/** Applies each stream to a fresh table, AT_ONCE at a time per function, and meters where its writes land. */
export async function streamLoads(endpoint: string, list: readonly Stream[] = streams()): Promise<StreamLoad[]> {
  const admin = createDocumentClient({ endpoint });
  const out: StreamLoad[] = [];
  try {
    for (const [i, stream] of list.entries()) {
      const table = `partitions-${i}`;
      await ensureTable(admin, table);
      await writeDataset(admin, table, stream.d0, { clock });
      // A client a function, each metered: what one process shares (its clients' state) the others do not.
      const functions = Array.from({ length: stream.functions ?? 1 }, () => {
        const client = createDocumentClient({ endpoint });
        return { client, metered: meter(client, endpoint) };
      });
      try {
        const queue = [...stream.changes];
        await Promise.all(
          functions.flatMap(({ client }) =>
            Array.from({ length: AT_ONCE }, async () => {
              const applier = new ChangeApplier(client, table, { clock });
              for (let change = queue.shift(); change; change = queue.shift()) await applier.apply(change);
            }),
          ),
        );
      } finally {
        for (const { client, metered } of functions) {
          metered.close();
          client.destroy();
        }
      }
      const units = new Map<string, number>();
      for (const { metered } of functions) for (const [partition, n] of metered.partitions) units.set(partition, (units.get(partition) ?? 0) + n);
      const n = stream.changes.length;
      out.push({ name: stream.name, changes: n, partitions: [...units].map(([partition, u]) => ({ partition, perChange: u / n })).sort((a, b) => b.perChange - a.perChange) });
    }
  } finally {
    admin.destroy();
  }
  return out;
}

/** The bench's table; BENCH_PARTITION_CHANGES changes a stream (the bench test uses few). */
export async function partitionFigures(n = Number(process.env.BENCH_PARTITION_CHANGES ?? 64)): Promise<string[]> {
  const store = await startDynalite();
  try {
    const loads = await streamLoads(store.endpoint, streams(n));
    const rows = [
      `| Stream of changes (${loads[0]?.changes ?? 0} each, ${AT_ONCE} at once) | Hottest partition | Write units per change there | At ${INGEST_PACE} changes/s | Next hottest |`,
      '|---|---|---|---|---|',
    ];
    for (const load of loads) {
      const [first, second] = load.partitions;
      rows.push(`| ${load.name} | \`${first!.partition}\` | ${first!.perChange.toFixed(2)} | ${(first!.perChange * INGEST_PACE).toFixed(0)} WCU/s | \`${second!.partition}\`, ${second!.perChange.toFixed(2)} |`);
    }
    return rows;
  } finally {
    await store.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await partitionFigures()) console.log(line);
}
