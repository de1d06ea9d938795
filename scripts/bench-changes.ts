/**
 * The write side's figures for `npm run bench`: items written and write
 * capacity per change type (demo data), changes per second through the
 * data:apply path, and the worst fan-outs: a rename of a user who hosts N
 * events and holds N RSVPs, and an edit of an event with M yes/maybe guests.
 * BENCH_FANOUT (default 1000) and BENCH_GUESTS (default 500) set N and M.
 */
import { DynamoDBClient, GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { isConditionFailure } from '../lambdas/store/table/conditions.js';
import { INDEXES, PK, SK } from '../lambdas/store/table/table.js';
import { FEED_PARTITION_PREFIX } from '../lambdas/store/feeds/feed.js';
import { partitionBill, writeBill } from './write-billing.js';
import type { Change } from '../lambdas/core/changes.js';
import { fixedClock } from '../lambdas/core/clock.js';
import type { Dataset } from '../lambdas/core/dataset.js';
import { ChangeApplier } from '../lambdas/store/changes/applier.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { applyChangeFile } from '../local/change-file.js';
import { ensureTable, startDynalite } from '../local/dynalite.js';
import { writeDataset } from '../local/loader.js';

const FANOUT = Number(process.env.BENCH_FANOUT ?? 1000);
const GUESTS = Number(process.env.BENCH_GUESTS ?? 500);
/** Event sizes for the cost-by-size rows (BENCH_GUEST_SIZES, default 10,1000,10000). */
const GUEST_SIZES = (process.env.BENCH_GUEST_SIZES ?? '10,1000,10000').split(',').map(Number);
const clock = fixedClock('2026-11-21T12:00:00.000Z');
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand']);
const READS = new Set(['GetItemCommand', 'QueryCommand', 'BatchGetItemCommand', 'ScanCommand']);
const INDEX_KEYS = Object.values(INDEXES);

/**
 * Counts calls, read capacity (as the store reports it) and write capacity
 * as DynamoDB bills it (scripts/write-billing.ts: the table write plus every
 * GSI write, which dynalite does not report): each written item is read
 * before and after its write through a second, unmetered client.
 */
export function meter(client: DynamoDBDocumentClient, endpoint: string) {
  const m = { writes: 0, wcu: 0, gsiWcu: 0, rcu: 0, calls: 0, feedWrites: 0, feedEntries: 0, feedWcu: 0, refused: 0 };
  /** Write units billed per partition (the table's by `pk`, an index's as `{index} {its key}`): scripts/bench-partitions.ts. */
  const partitions = new Map<string, number>();
  const raw = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  // The document client's commands may reach this step before or after marshalling: accept both shapes.
  const image = async (table: string, key: Record<string, unknown>) => {
    const marshalled = typeof Object.values(key)[0] === 'string' ? marshall(key) : (key as Record<string, AttributeValue>);
    const item = (await raw.send(new GetItemCommand({ TableName: table, Key: marshalled, ConsistentRead: true }))).Item;
    return item ? unmarshall(item) : undefined;
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName);
      const input = args.input as { TableName: string; Item?: Record<string, unknown>; Key?: Record<string, unknown>; ReturnConsumedCapacity?: string; UpdateExpression?: string; ExpressionAttributeValues?: Record<string, unknown> };
      m.calls++;
      if (READS.has(name)) {
        input.ReturnConsumedCapacity = 'TOTAL';
        const out = await next(args);
        const used = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
        m.rcu += [used ?? []].flat().reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
        return out;
      }
      if (!WRITES.has(name) || (!input.Item && !input.Key)) return next(args);
      const key = input.Key ?? { [PK]: input.Item![PK]!, [SK]: input.Item![SK]! };
      const before = await image(input.TableName, key);
      let failed = false;
      try {
        return await next(args);
      } catch (error) {
        failed = isConditionFailure(error);
        throw error;
      } finally {
        const after = failed ? before : await image(input.TableName, key);
        const bill = writeBill(before, after, INDEX_KEYS, failed);
        m.writes++;
        if (failed) m.refused++;
        // The changes feeds' own writes (appends, chunks and their trims, members), PRODUCT P16.
        const pk = key[PK] as unknown;
        const partition = typeof pk === 'string' ? pk : String((pk as { S?: string }).S);
        for (const { partition: p, units } of partitionBill(partition, before, after, INDEX_KEYS, failed)) { partitions.set(p, (partitions.get(p) ?? 0) + units); }
        if (partition.startsWith(FEED_PARTITION_PREFIX)) {
          m.feedWrites++;
          m.feedWcu += bill.total;
        }
        if (!failed && name === 'UpdateItemCommand' && /list_append/.test(input.UpdateExpression ?? '')) m.feedEntries += appended(input.ExpressionAttributeValues?.[':members']);
        m.wcu += bill.total;
        m.gsiWcu += bill.indexes;
      }
    },
    { step: 'serialize', name: 'benchMeter', priority: 'high' },
  );
  const reset = () => {
    Object.assign(m, { writes: 0, wcu: 0, gsiWcu: 0, rcu: 0, calls: 0, feedWrites: 0, feedEntries: 0, feedWcu: 0, refused: 0 });
    partitions.clear();
  };
  return { m, partitions, reset, close: () => raw.destroy() };
}

/** The members one feed append carries (its value marshalled or not, as the meter's step sees it). */
function appended(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  const list = (value as { L?: unknown[] } | undefined)?.L;
  return list?.length ?? 0;
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
  const { m, reset, close } = meter(client, store.endpoint);
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
      ['user edit (name), 10 linked events (hosts 7, answered 3)', { type: 'user.upserted', version: 3, user: { ...alice, name: 'Alice L.' } }],
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
    rows.push('| Change | Result | Items written | Write capacity units (of which GSI) | Read capacity units | DynamoDB calls | Feed entries (feed writes; billed feed units per entry) |', '|---|---|---|---|---|---|---|');
    for (const [name, change] of cases) {
      reset();
      const r = await applier.apply(change);
      rows.push(`| ${name} | ${r.result} | ${m.writes} | ${m.wcu.toFixed(0)} (${m.gsiWcu.toFixed(0)}) | ${m.rcu.toFixed(1)} | ${m.calls} | ${feedColumn(m)} |`);
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
    const report = await applyChangeFile(() => new ChangeApplier(client, 'throughput', { clock }), lines.join('\n'));
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
        ...hosted.map((e) => ({ event_id: e.id, user_id: 'usr_other', status: 'maybe' as const, rsvp_date: '2026-05-02T00:00:00.000Z' })),
        ...guests.map((g, i) => ({ event_id: 'evt_big', user_id: g.id, status: i % 2 ? ('yes' as const) : ('maybe' as const), rsvp_date: '2026-05-02T00:00:00.000Z' })),
      ],
    };
    await ensureTable(client, 'worst');
    await writeDataset(client, 'worst', worst);
    const worstApplier = new ChangeApplier(client, 'worst', { clock });
    const fanouts: [string, Change][] = [
      [`rename of a user hosting ${FANOUT} events (1 guest each) and holding ${FANOUT} RSVPs`, { type: 'user.upserted', version: 1, user: { ...host, username: 'host-renamed' } }],
      [`edit of an event with ${GUESTS} yes/maybe guests`, { type: 'event.upserted', version: 1, event: { ...big, title: 'Big night, moved' } }],
      [`the same event hidden`, { type: 'event.upserted', version: 2, event: { ...big, visibility: 'private' } }],
      [`deletion of that user (cascade: ${FANOUT} hosted events with their ${FANOUT} guests' RSVPs, and ${FANOUT} RSVPs of the user)`, { type: 'user.deleted', version: 2, user_id: 'usr_host' }],
    ];
    rows.push('', `Changes per second through data:apply (300 RSVP flips, demo data, one applier, in-process dynalite): ${perSecond}`, '');
    rows.push('| Worst-case fan-out | Derivations (event and guest units) | Items written | Write capacity units (of which GSI) | Read capacity units | DynamoDB calls | Seconds (dynalite) | Feed entries (feed writes; billed feed units per entry) |', '|---|---|---|---|---|---|---|---|');
    for (const [name, change] of fanouts) {
      reset();
      const t = performance.now();
      const r = await worstApplier.apply(change);
      rows.push(`| ${name} | ${r.derivations} | ${m.writes} | ${m.wcu.toFixed(0)} (${m.gsiWcu.toFixed(0)}) | ${m.rcu.toFixed(1)} | ${m.calls} | ${((performance.now() - t) / 1000).toFixed(1)} | ${feedColumn(m)} |`);
    }

    // What a change touches, by event size: the same RSVP and the same edit on events with N guests.
    rows.push('', 'Cost by event size: the same RSVP changes and the same edits that move no list, on an event with N yes/maybe guests.', '');
    rows.push('| Change | Guests | Items written | Write capacity units (of which GSI) | Read capacity units | DynamoDB calls | Feed entries (feed writes; billed feed units per entry) |', '|---|---|---|---|---|---|---|');
    const bySize: Record<string, { read: number; write: number }[]> = {};
    for (const size of GUEST_SIZES) {
      const table = `guests-${size}`;
      const crowd = Array.from({ length: size }, (_, i) => ({ id: `usr_c${i}`, username: `crowd${i}` }));
      const newcomer = { id: 'usr_new', username: 'newcomer' };
      const party = event('evt_party', 'usr_other', 0);
      await ensureTable(client, table);
      await writeDataset(client, table, {
        users: [others, newcomer, ...crowd],
        events: [party],
        rsvps: crowd.map((g, i) => ({ event_id: 'evt_party', user_id: g.id, status: i % 2 ? ('yes' as const) : ('maybe' as const), rsvp_date: '2026-05-02T00:00:00.000Z' })),
      });
      const sized = new ChangeApplier(client, table, { clock });
      const touches: [string, Change][] = [
        ['new RSVP (yes)', { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_party', user_id: 'usr_new', status: 'yes', rsvp_date: '2026-05-03T00:00:00.000Z' } }],
        ['RSVP status change (maybe to no)', { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_party', user_id: 'usr_c0', status: 'no', rsvp_date: '2026-05-02T00:00:00.000Z' } }],
        ['RSVP deletion', { type: 'rsvp.deleted', version: 1, event_id: 'evt_party', user_id: 'usr_c1' }],
        ['event title edit', { type: 'event.upserted', version: 1, event: { ...party, title: 'Party, renamed' } }],
        ['event description and cost edit', { type: 'event.upserted', version: 2, event: { ...party, title: 'Party, renamed', description: 'Bring a friend.', cost: 5 } }],
      ];
      for (const [name, change] of touches) {
        reset();
        await sized.apply(change);
        rows.push(`| ${name} | ${size} | ${m.writes} | ${m.wcu.toFixed(0)} (${m.gsiWcu.toFixed(0)}) | ${m.rcu.toFixed(1)} | ${m.calls} | ${feedColumn(m)} |`);
        (bySize[name] ??= []).push({ read: m.rcu, write: m.wcu });
      }
    }
    rows.push('', `| Change | Read capacity ratio, ${GUEST_SIZES.at(-1)} : ${GUEST_SIZES[0]} guests | Write capacity ratio |`, '|---|---|---|');
    for (const [name, capacity] of Object.entries(bySize)) {
      const ratio = (k: 'read' | 'write') => (capacity.at(-1)![k] / capacity[0]![k]).toFixed(2);
      rows.push(`| ${name} | ${ratio('read')} | ${ratio('write')} |`);
    }
  } finally {
    close();
    client.destroy();
    await store.close();
  }
  return rows;
}

/** A change's feed figures: entries appended, the feeds' writes, and their billed units per entry. */
function feedColumn(m: { feedEntries: number; feedWrites: number; feedWcu: number }): string {
  return `${m.feedEntries} (${m.feedWrites}; ${m.feedEntries ? (m.feedWcu / m.feedEntries).toFixed(2) : '-'})`;
}
