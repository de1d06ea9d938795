/**
 * The write side's figures for `npm run bench`: items written and write
 * capacity per change type (demo data), changes per second through the
 * data:apply path, and the worst fan-outs: a rename of a user who hosts N
 * events and holds N RSVPs, and an edit of an event with M yes/maybe guests.
 * BENCH_FANOUT (default 1000) and BENCH_GUESTS (default 500) set N and M.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../lambdas/core/changes.js';
import { fixedClock } from '../lambdas/core/clock.js';
import type { Dataset } from '../lambdas/core/dataset.js';
import { ChangeApplier } from '../lambdas/store/applier.js';
import { createDocumentClient } from '../lambdas/store/client.js';
import { applyChangeFile } from '../local/change-file.js';
import { ensureTable, startDynalite } from '../local/dynalite.js';
import { writeDataset } from '../local/loader.js';

const FANOUT = Number(process.env.BENCH_FANOUT ?? 1000);
const GUESTS = Number(process.env.BENCH_GUESTS ?? 500);
const clock = fixedClock('2026-11-21T12:00:00.000Z');
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand']);

function meter(client: DynamoDBDocumentClient) {
  const m = { writes: 0, wcu: 0, calls: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName);
      m.calls++;
      if (WRITES.has(name)) (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      if (WRITES.has(name)) {
        m.writes++;
        m.wcu += (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
      }
      return out;
    },
    { step: 'serialize', name: 'benchWriteMeter', priority: 'high' },
  );
  return { m, reset: () => Object.assign(m, { writes: 0, wcu: 0, calls: 0 }) };
}

const event = (id: string, creator: string, i: number) => ({
  id,
  creator_id: creator,
  title: `Night ${i}`,
  start_date: new Date(Date.parse('2026-06-01T20:00:00Z') + i * 86_400_000).toISOString(),
  timezone: 'UTC',
  status: 'published' as const,
  visibility: 'public' as const,
  created_at: '2026-05-01T00:00:00.000Z',
});

export async function changeFigures(demo: Dataset): Promise<string[]> {
  const store = await startDynalite();
  const client = createDocumentClient({ endpoint: store.endpoint });
  const { m, reset } = meter(client);
  const rows: string[] = [];
  try {
    // Per change type, on the demo data.
    await ensureTable(client, 'types');
    await writeDataset(client, 'types', demo);
    const applier = new ChangeApplier(client, 'types', { clock });
    const alice = demo.users.find((u) => u.id === 'usr_alice')!;
    const jazz = demo.events.find((e) => e.id === 'evt_jazz01')!;
    const cases: [string, Change][] = [
      ['user e-mail change only (nothing public changes)', { type: 'user.upserted', version: 1, user: { ...alice, email: 'alice@new.example' } }],
      ['user edit (name), hosts 6 events, 1 RSVP', { type: 'user.upserted', version: 3, user: { ...alice, name: 'Alice L.' } }],
      ['user rename', { type: 'user.upserted', version: 4, user: { ...alice, username: 'alice-l' } }],
      ['event edit (title), 5 members', { type: 'event.upserted', version: 1, event: { ...jazz, title: 'Rooftop Jazz II' } }],
      ['event hidden', { type: 'event.upserted', version: 2, event: { ...jazz, visibility: 'private' } }],
      ['event shown again', { type: 'event.upserted', version: 3, event: { ...jazz, visibility: 'public' } }],
      ['RSVP flip yes → no', { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_jazz01', user_id: 'usr_bob', status: 'no', rsvp_date: '2026-10-02T08:00:00.000Z' } }],
      ['RSVP deleted', { type: 'rsvp.deleted', version: 2, event_id: 'evt_jazz01', user_id: 'usr_bob' }],
      ['stale duplicate', { type: 'rsvp.deleted', version: 2, event_id: 'evt_jazz01', user_id: 'usr_bob' }],
      ['event deleted', { type: 'event.deleted', version: 4, event_id: 'evt_jazz01' }],
      ['user deleted (cascade)', { type: 'user.deleted', version: 1, user_id: 'usr_carol' }],
    ];
    rows.push('| Change | Result | Items written | Write capacity units | DynamoDB calls |', '|---|---|---|---|---|');
    for (const [name, change] of cases) {
      reset();
      const r = await applier.apply(change);
      rows.push(`| ${name} | ${r.result} | ${m.writes} | ${m.wcu.toFixed(0)} | ${m.calls} |`);
    }

    // Throughput through the data:apply path: RSVP flips on the demo data.
    await ensureTable(client, 'throughput');
    await writeDataset(client, 'throughput', demo);
    const linked = (demo.rsvps ?? []).filter((r) => r.user_id);
    const lines = Array.from({ length: 300 }, (_, i) => {
      const r = linked[i % linked.length]!;
      return JSON.stringify({ type: 'rsvp.upserted', version: 10 + i, rsvp: { ...r, status: (['yes', 'maybe', 'no'] as const)[i % 3] } });
    });
    const t0 = performance.now();
    const report = await applyChangeFile(new ChangeApplier(client, 'throughput', { clock }), lines.join('\n'));
    const perSecond = (report.applied / ((performance.now() - t0) / 1000)).toFixed(0);

    // Worst fan-outs.
    const host = { id: 'usr_host', username: 'host' };
    const others = { id: 'usr_other', username: 'other' };
    const hosted = Array.from({ length: FANOUT }, (_, i) => event(`evt_h${i}`, 'usr_host', i));
    const attended = Array.from({ length: FANOUT }, (_, i) => event(`evt_o${i}`, 'usr_other', i));
    const guests = Array.from({ length: GUESTS }, (_, i) => ({ id: `usr_g${i}`, username: `guest${i}` }));
    const big = event('evt_big', 'usr_other', 0);
    const worst: Dataset = {
      users: [host, others, ...guests],
      events: [...hosted, ...attended, big],
      rsvps: [
        ...attended.map((e) => ({ event_id: e.id, user_id: 'usr_host', status: 'yes' as const, rsvp_date: '2026-05-02T00:00:00.000Z' })),
        ...guests.map((g, i) => ({ event_id: 'evt_big', user_id: g.id, status: i % 2 ? ('yes' as const) : ('maybe' as const), rsvp_date: '2026-05-02T00:00:00.000Z' })),
      ],
    };
    await ensureTable(client, 'worst');
    await writeDataset(client, 'worst', worst);
    const worstApplier = new ChangeApplier(client, 'worst', { clock });
    const fanouts: [string, Change][] = [
      [`rename of a user hosting ${FANOUT} events and holding ${FANOUT} RSVPs`, { type: 'user.upserted', version: 1, user: { ...host, username: 'host-renamed' } }],
      [`edit of an event with ${GUESTS} yes/maybe guests`, { type: 'event.upserted', version: 1, event: { ...big, title: 'Big night, moved' } }],
      [`the same event hidden`, { type: 'event.upserted', version: 2, event: { ...big, visibility: 'private' } }],
    ];
    rows.push('', `Changes per second through data:apply (300 RSVP flips, demo data, one applier, in-process dynalite): ${perSecond}`, '');
    rows.push('| Worst-case fan-out | Events derived | Items written | Write capacity units | DynamoDB calls | Seconds (dynalite) |', '|---|---|---|---|---|---|');
    for (const [name, change] of fanouts) {
      reset();
      const t = performance.now();
      const r = await worstApplier.apply(change);
      rows.push(`| ${name} | ${r.derivations} | ${m.writes} | ${m.wcu.toFixed(0)} | ${m.calls} | ${((performance.now() - t) / 1000).toFixed(1)} |`);
    }
  } finally {
    client.destroy();
    await store.close();
  }
  return rows;
}
