/**
 * A burst of new RSVPs on one event (issue 38, docs/performance.md
 * "Freshness under load"): BENCH_BURST_RSVPS new RSVPs (default 160) on an
 * event that already has BENCH_BURST_GUESTS guests (default 200), shared
 * among 1, 2, 4 and 8 appliers at once, each applying its share one after
 * another as an ingest record does. Every store call waits BENCH_BURST_LATENCY_MS
 * (default 6) first, as a network to DynamoDB would, so that the figure shows
 * round trips and contention rather than this machine's cores.
 *
 * Per run: RSVPs per second, DynamoDB calls and refused conditional writes per
 * RSVP, and the wall time of one RSVP in latencies (its round trips as the
 * appliers met them); the end state is checked against a fresh load of the
 * fold of the same changes (a run that differs throws). On dynalite, and on
 * DynamoDB Local when Java 17 is there (BENCH_BURST_STORES says which).
 *
 * `npx tsx scripts/bench-burst.ts` prints the table alone; `npm run bench`
 * prints it too.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../lambdas/core/changes.js';
import { fixedClock } from '../lambdas/core/clock.js';
import type { Dataset } from '../lambdas/core/dataset.js';
import { fold } from '../lambdas/core/fold.js';
import { ChangeApplier } from '../lambdas/store/changes/applier.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { isConditionFailure } from '../lambdas/store/table/conditions.js';
import { ensureTable, startDynalite } from '../local/dynalite.js';
import { writeDataset } from '../local/loader.js';
import { readPartitions, writtenKeys, type WrittenKey } from '../local/instrument.js';
import { freshLoadReadModel, readModel, scanAll } from '../test/support/read-model.js';
import { startDynamoDbLocal } from '../test/support/dynamodb-local.js';

const RSVPS = Number(process.env.BENCH_BURST_RSVPS ?? 160);
const GUESTS = Number(process.env.BENCH_BURST_GUESTS ?? 200);
const LATENCY_MS = Number(process.env.BENCH_BURST_LATENCY_MS ?? 6);
const APPLIERS = [1, 2, 4, 8];
/** Which stores: dynalite and DynamoDB Local by default (`BENCH_BURST_STORES=dynalite` for a quick run). */
const STORES = (process.env.BENCH_BURST_STORES ?? 'dynalite,dynamodb-local').split(',');
const ROOT = new URL('..', import.meta.url).pathname;
const clock = fixedClock('2026-11-21T12:00:00.000Z');

const host = { id: 'usr_host', username: 'host' };
const party = { id: 'evt_party', creator_id: host.id, title: 'Party', start_date: '2027-01-01T20:00:00.000Z', timezone: 'UTC', status: 'published' as const, visibility: 'public' as const, created_at: '2026-11-01T00:00:00.000Z' };
const statuses = ['yes', 'no', 'maybe'] as const;

function burst(): { d0: Dataset; changes: Change[] } {
  const old = Array.from({ length: GUESTS }, (_, i) => ({ id: `usr_old${i}`, username: `old${i}` }));
  const fresh = Array.from({ length: RSVPS }, (_, i) => ({ id: `usr_new${i}`, username: `new${i}` }));
  const d0: Dataset = {
    users: [host, ...old, ...fresh],
    events: [party],
    rsvps: old.map((u, i) => ({ event_id: party.id, user_id: u.id, status: statuses[i % 3]!, rsvp_date: '2026-11-02T00:00:00.000Z' })),
  };
  const changes: Change[] = fresh.map((u, i) => ({ type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: u.id, status: statuses[i % 3]!, rsvp_date: '2026-11-03T00:00:00.000Z' } }));
  return { d0, changes };
}

/**
 * Writes per RSVP in each partition a burst's writes land in, hottest first:
 * base-table partitions by the keys written, and the event-keyed partitions of
 * the guest list's indexes (event-index `EVENT#{id}`, guest-index
 * `EVENT#{id}#{status}`), where every write of an RSVP item is counted, as if
 * each changed what the indexes hold (an upper bound: one that changes
 * nothing projected is not written there) and as if every status were one.
 */
export function partitionLoad(written: readonly WrittenKey[], rsvps: number): { partition: string; perRsvp: number }[] {
  const load = new Map<string, number>();
  const add = (partition: string) => load.set(partition, (load.get(partition) ?? 0) + 1);
  for (const { pk, sk } of written) {
    add(pk);
    if (!sk.startsWith('RSVP#')) continue;
    const event = pk.replace(/#G\d+$/, '');
    add(`event-index ${event}`);
    add(`guest-index ${event}#{status}`);
  }
  return [...load].map(([partition, n]) => ({ partition, perRsvp: n / rsvps })).sort((a, b) => b.perRsvp - a.perRsvp);
}

/** A client whose every call waits the latency first, counting calls and refused conditional writes, and recording what it writes. */
export function slowClient(endpoint: string, latencyMs = LATENCY_MS): { client: DynamoDBDocumentClient; counts: { calls: number; refused: number; written: WrittenKey[]; read: string[] } } {
  const client = createDocumentClient({ endpoint });
  const counts = { calls: 0, refused: 0, written: [] as WrittenKey[], read: [] as string[] };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      counts.calls++;
      counts.written.push(...writtenKeys(String(context.commandName), args.input));
      counts.read.push(...readPartitions(String(context.commandName), args.input));
      if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
      try {
        return await next(args);
      } catch (error) {
        if (isConditionFailure(error)) counts.refused++;
        throw error;
      }
    },
    { step: 'initialize', name: 'burstLatency' },
  );
  return { client, counts };
}

interface BurstRow {
  appliers: number;
  perSecond: number;
  calls: number;
  refused: number;
  latencies: number;
  hottest: { partition: string; perRsvp: number };
}

async function run(endpoint: string, admin: DynamoDBDocumentClient, table: string, appliers: number, expected: unknown[]): Promise<BurstRow> {
  const { d0, changes } = burst();
  await ensureTable(admin, table);
  await writeDataset(admin, table, d0, { clock });
  const { client, counts } = slowClient(endpoint);
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: appliers }, async (_, a) => {
        const applier = new ChangeApplier(client, table, { clock });
        for (let i = a; i < changes.length; i += appliers) await applier.apply(changes[i]!);
      }),
    );
  } finally {
    client.destroy();
  }
  const ms = performance.now() - started;
  const got = readModel(await scanAll(admin, table));
  if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`burst with ${appliers} appliers: the table is not the fold of its changes`);
  const [hottest] = partitionLoad(counts.written, changes.length);
  return { appliers, perSecond: (changes.length / ms) * 1000, calls: counts.calls / changes.length, refused: counts.refused / changes.length, latencies: (ms * appliers) / changes.length / LATENCY_MS, hottest: hottest! };
}

async function storeRows(name: string, endpoint: string): Promise<string[]> {
  const admin = createDocumentClient({ endpoint });
  try {
    const { d0, changes } = burst();
    const expected = await freshLoadReadModel(admin, 'burst-expected', fold(d0, changes).dataset);
    const rows: string[] = [];
    for (const appliers of APPLIERS) {
      const r = await run(endpoint, admin, `burst-${appliers}`, appliers, expected);
      rows.push(`| ${name} | ${r.appliers} | ${r.perSecond.toFixed(1)} | ${r.calls.toFixed(1)} | ${r.refused.toFixed(2)} | ${r.latencies.toFixed(1)} | ${r.hottest.perRsvp.toFixed(2)} (\`${r.hottest.partition}\`) |`);
    }
    return rows;
  } finally {
    admin.destroy();
  }
}

/** The bench's burst table. */
export async function burstFigures(): Promise<string[]> {
  const lines = [
    `${RSVPS} new RSVPs on one event with ${GUESTS} guests, ${LATENCY_MS} ms added to every call; the end state equal to the fold's in every run.`,
    '',
    '| Store | Appliers | RSVPs/s | Calls per RSVP | Refused writes per RSVP | Wall time per RSVP per applier, in latencies | Hottest partition: items written per RSVP |',
    '|---|---|---|---|---|---|---|',
  ];
  const dynalite = await startDynalite();
  try {
    lines.push(...(await storeRows('dynalite', dynalite.endpoint)));
  } finally {
    await dynalite.close();
  }
  if (!STORES.includes('dynamodb-local')) return lines;
  let local;
  try {
    local = await startDynamoDbLocal(ROOT);
  } catch (error) {
    lines.push(`| DynamoDB Local | not run: ${(error as Error).message.split('\n')[0]} | | | | | |`);
    return lines;
  }
  try {
    lines.push(...(await storeRows('DynamoDB Local', local.endpoint)));
  } finally {
    await local.close();
  }
  return lines;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  process.stdout.write(`${(await burstFigures()).join('\n')}\n`);
}
