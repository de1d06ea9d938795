/**
 * Webhooks' figures for `npm run bench` (PRODUCT P18, docs/performance.md
 * "Webhooks"), measured from the engine's own calls on dynalite, write units
 * billed as DynamoDB bills them (scripts/write-billing.ts), read units as
 * the store reports them (consistent: 1 per 4 KB an item, a Query's items
 * summed), every figure exact (the same in every run of a commit: fixed
 * ids, clock and data, batches run as one container runs them):
 *
 * - **per change**, for a scope with 1, 100 and 10,000 webhooks: what the
 *   fan-out does (lambdas/delivery/fan-out.ts, from the table's stream of
 *   the scope's head writes; the ingest itself does nothing more): its
 *   Queries of the scope's webhooks, and the wake-ups it sends (one FIFO
 *   message each, SendMessageBatch takes 10);
 * - **per delivery** of that change, the webhooks woken in batches of 10 (a
 *   FIFO batch's most) run by one container (runWebhooks, a FeedCache): the
 *   webhooks' items, the scope's entries, the page's content, the webhook's
 *   writes, the POST; round trips are the longest chain of calls each sent
 *   after another was answered (calls sent together count once);
 * - **per delivery of a catch-up**: a webhook behind a burst of
 *   BENCH_WEBHOOK_BURST changes (default 1,000) of as many events, pages of
 *   100, with the container's cache and without it (every page reading the
 *   feed partition), each read split by the partition it lands on.
 *
 * `exactWebhookTable()` is the section docs/performance.md holds between its
 * `<!-- bench:webhooks -->` markers (scripts/bench-tables.ts); the delivery
 * rows of 10,000 webhooks are measured by the full bench only (a batch is
 * a batch: the same as with 100, which `webhookFigures` checks).
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../lambdas/core/clock.js';
import type { Dataset, SourceEvent } from '../lambdas/core/dataset.js';
import { sealCursor, staticKeyring } from '../lambdas/core/feed-cursor.js';
import { resolveScope } from '../lambdas/core/webhook-rules.js';
import { runWebhooks, type DeliveryDeps } from '../lambdas/delivery/deliver.js';
import { FeedCache } from '../lambdas/delivery/feed-cache.js';
import { fanOut, type FanOutTask } from '../lambdas/delivery/fan-out.js';
import type { PostRequest } from '../lambdas/delivery/outbound.js';
import { silentLogger } from '../lambdas/http/logger.js';
import { noMetrics } from '../lambdas/http/metrics.js';
import { FeedWriter, feedScopes } from '../lambdas/store/feeds/feed.js';
import { DynamoRepository } from '../lambdas/store/reads/repository.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { TableIO } from '../lambdas/store/table/table-io.js';
import { DeliveryState } from '../lambdas/store/webhooks/delivery-state.js';
import { localSecretBox } from '../lambdas/store/webhooks/secret-box.js';
import { webhookKeys, type WebhookItem } from '../lambdas/store/webhooks/webhook-items.js';
import { roundTrips, type CallSpan } from '../local/instrument.js';
import { ensureTable } from '../local/dynalite.js';
import { writeDataset } from '../local/loader.js';
import { directClient } from '../test/support/direct-dynalite.js';
import { startInProcessDynalite, type InProcessStore } from '../test/support/in-process-dynalite.js';
import { meter } from './bench-changes.js';
import { FIFO_BATCH, MEASURED } from './webhook-model.js';

/** Scope sizes of the per-change rows; the per-delivery rows of the exact table stop before the last. */
export const WEBHOOK_SCOPE_SIZES = [1, 100, 10_000];
const BURST = Number(process.env.BENCH_WEBHOOK_BURST ?? 1000);
const clock = fixedClock('2026-11-21T12:00:00.000Z');
const keyring = staticKeyring(Buffer.from('bench-webhook-cursor-key'));
const SITE = 'https://example.org';
const FEED = feedScopes.catalogue();

type Partition = 'feed' | 'content' | 'webhooks' | 'scope index';

/** What one measured stretch of calls cost: calls by operation, read units by partition kind, billed write units, round trips. */
interface Cost {
  calls: Map<string, number>;
  rcu: Map<Partition, number>;
  wcu: number;
  trips: number;
}

/** A value as the call's input holds it, marshalled or not (the meter's step may see either). */
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof (v as { S?: unknown } | undefined)?.S === 'string' ? (v as { S: string }).S : '');

/** The kind of partition a read lands on, by its key (a BatchGetItem's first: each of ours reads one kind). */
const partitionOf = (input: Record<string, unknown>): Partition => {
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  const batch = Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: Record<string, unknown>[] }>)[0]?.Keys?.[0];
  const pk = text(values?.[':pk']) || text((input.Key as Record<string, unknown> | undefined)?.pk) || text(batch?.pk);
  if (pk.startsWith('FEED#')) return 'feed';
  if (pk.startsWith('WHSCOPE#')) return 'scope index';
  if (pk.startsWith('WEBHOOK#')) return 'webhooks';
  return 'content';
};

/**
 * A client whose every call is counted, its read units by partition kind, its writes billed (unless `bill` is
 * false: the billing reads each written item before and after its write, which would lengthen the chains of calls
 * that a count of round trips measures), its spans kept for round trips.
 */
function metered(store: InProcessStore, bill = true) {
  const client = createDocumentClient({ endpoint: store.endpoint, requestHandler: store.requestHandler });
  const billing = bill ? meter(client, store.httpEndpoint) : undefined;
  const calls = new Map<string, number>();
  const rcu = new Map<Partition, number>();
  let spans: CallSpan[] = [];
  let events = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName).replace(/Command$/, '');
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const span = { start: events++, end: Infinity };
      spans.push(span);
      const out = await next(args);
      span.end = events++;
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const used = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      const units = [used ?? []].flat().reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
      if (/^(Get|BatchGet|Query)/.test(name)) rcu.set(partitionOf(input), (rcu.get(partitionOf(input)) ?? 0) + units);
      return out;
    },
    { step: 'serialize', name: 'webhookMeter', priority: 'high' },
  );
  return {
    client,
    reset() {
      calls.clear();
      rcu.clear();
      spans = [];
      billing?.reset();
    },
    cost: (): Cost => ({ calls: new Map(calls), rcu: new Map(rcu), wcu: billing?.m.wcu ?? 0, trips: roundTrips(spans) }),
    close() {
      billing?.close();
      client.destroy();
    },
  };
}

const event = (i: number): SourceEvent => ({
  id: `evt_${String(i).padStart(5, '0')}`,
  creator_id: 'usr_host',
  title: `Night ${i}`,
  description: 'An evening of music. '.repeat(20),
  cover: null,
  location: { name: 'The Hall', city: 'Lisbon', country: 'Portugal' },
  start_date: new Date(Date.parse('2027-01-01T20:00:00Z') + i * 86_400_000).toISOString(),
  timezone: 'UTC',
  status: 'published',
  visibility: 'public',
  created_at: '2026-05-01T00:00:00.000Z',
});

const dataset = (events: number): Dataset => ({ users: [{ id: 'usr_host', username: 'host' }], events: Array.from({ length: events }, (_, i) => event(i)), rsvps: [] });

let tripTables = 0;
const webhookId = (i: number) => `wh_bench${String(i).padStart(6, '0')}`;

/**
 * The scope's webhooks as the key manager writes them (webhook-manager.ts,
 * create: the item, its scope entry), starting at the scope's next change,
 * written in BatchWriteItems (the bench's setup, not measured).
 */
async function seedWebhooks(client: DynamoDBDocumentClient, table: string, n: number, withItems: boolean): Promise<string[]> {
  const secrets = localSecretBox(Buffer.alloc(32, 7));
  const position = await new DynamoRepository(client, table).feedHead(FEED);
  const cursor = await sealCursor({ scope: FEED, mode: 'entries', position, after: '', asOf: Math.floor(clock().getTime() / 1000) }, keyring);
  const scope = resolveScope({ type: 'catalogue' });
  const ids = Array.from({ length: n }, (_, i) => webhookId(i));
  const writes: Record<string, unknown>[] = [];
  for (const id of ids) {
    writes.push({ ...webhookKeys.scopeEntry(FEED, id), type: 'WHSCOPE', webhook_id: id, state: 'active' });
    if (!withItems) continue;
    const item: WebhookItem = {
      type: 'WEBHOOK',
      webhook_id: id,
      user_id: `usr_consumer${id.slice(-4)}`,
      key_id: `key_${id.slice(3)}`,
      scope: scope.scope,
      feed: scope.feed,
      url: `https://hooks.consumer-${id.slice(-6)}.example.com/public-events`,
      secret: await secrets.seal(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, id),
      state: 'active',
      cursor,
      created_at: clock().toISOString(),
    };
    writes.push({ ...webhookKeys.webhook(id), ...item });
  }
  for (let i = 0; i < writes.length; i += 25) await client.send(new BatchWriteCommand({ RequestItems: { [table]: writes.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
  return ids;
}

/** The engine's dependencies on `client`, POSTs answered 200 at once (and counted). */
function deliveryDeps(client: DynamoDBDocumentClient, table: string, cached: boolean): { deps: DeliveryDeps; posts: PostRequest[] } {
  const repo = new DynamoRepository(client, table);
  const posts: PostRequest[] = [];
  const deps: DeliveryDeps = {
    state: new DeliveryState(client, table),
    feeds: cached ? new FeedCache(repo, { refreshIntervalMs: 0 }) : repo,
    events: repo,
    keyring,
    secrets: localSecretBox(Buffer.alloc(32, 7)),
    post: async (req) => {
      posts.push(req);
      // As the guard does once connected: the last look (guard/post.ts, beforeSend), a read of the webhook's item.
      if ((await req.beforeSend?.()) === false) return { kind: 'withdrawn' };
      return { kind: 'answered', status: 200 };
    },
    siteUrl: SITE,
    clock,
    wallClock: clock,
    random: () => 0.5,
    logger: silentLogger,
    metrics: noMetrics,
  };
  return { deps, posts };
}

const BUDGET = { maxDeliveries: 20, mayStart: () => true };

/** Runs the woken webhooks as a container runs its FIFO batches: 10 at a time, one batch after another. */
async function deliverInBatches(deps: DeliveryDeps, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += FIFO_BATCH) {
    const runs = runWebhooks(deps, ids.slice(i, i + FIFO_BATCH), BUDGET);
    for (const outcome of await Promise.all(runs.values())) if (outcome.kind !== 'done') throw new Error(`bench: a run ended ${outcome.kind}`);
  }
}

export interface ChangeRow {
  webhooks: number;
  fanOut: Cost;
  wakeUps: number;
  sqsCalls: number;
  pages: number;
}

export interface DeliveryRow {
  webhooks: number;
  deliveries: number;
  cost: Cost;
  /** One delivery's chain of calls (deliveryTrips). */
  trips: number;
}

export interface CatchUpRow {
  cached: boolean;
  deliveries: number;
  changes: number;
  cost: Cost;
}

/** One change of a scope with `n` webhooks: the fan-out's calls and wake-ups, and (`deliver`) every webhook's delivery of it. */
async function changeAndDeliveries(store: InProcessStore, admin: DynamoDBDocumentClient, n: number, deliver: boolean): Promise<{ change: ChangeRow; delivery?: DeliveryRow }> {
  const table = `bench-webhooks-${n}-${deliver ? 'd' : 'f'}`;
  await ensureTable(admin, table);
  await writeDataset(admin, table, dataset(10), { clock });
  const ids = await seedWebhooks(admin, table, n, deliver);
  // The change: one event edited (its catalogue entry), as the ingest appends it.
  await new FeedWriter(new TableIO(admin, table), clock).append(FEED, [event(3).id]);
  const m = metered(store);
  try {
    const state = new DeliveryState(m.client, table);
    let wakeUps = 0;
    let sqsCalls = 0;
    let pages = 0;
    const woken: string[] = [];
    let task: FanOutTask | undefined = { feed: FEED, token: '1' };
    while (task) {
      const current: FanOutTask = task;
      task = undefined;
      pages++;
      await fanOut({ state, nudge: async (nudges) => void (wakeUps += nudges.length, (sqsCalls += Math.ceil(nudges.length / 10)), woken.push(...nudges.map((x) => x.webhookId))), continueLater: async (t) => void (task = t) }, current);
    }
    const change: ChangeRow = { webhooks: n, fanOut: m.cost(), wakeUps, sqsCalls, pages };
    if (!deliver) return { change };
    m.reset();
    const { deps, posts } = deliveryDeps(m.client, table, true);
    await deliverInBatches(deps, woken);
    if (posts.length !== n) throw new Error(`bench: ${posts.length} deliveries for ${n} webhooks`);
    const cost = m.cost();
    return { change, delivery: { webhooks: n, deliveries: posts.length, cost, trips: await deliveryTrips(store, admin) } };
  } finally {
    m.close();
  }
}

/**
 * One delivery's chain of calls, each sent after the one before was answered, from its webhook's item to its 2xx's
 * record: measured alone (in a batch, the shared reads are on every delivery's chain once, so the chain is the
 * same; timed together, writes of other webhooks answered between would lengthen a chain that is not the delivery's).
 */
async function deliveryTrips(store: InProcessStore, admin: DynamoDBDocumentClient): Promise<number> {
  const table = `bench-webhooks-trips-${tripTables++}`;
  await ensureTable(admin, table);
  await writeDataset(admin, table, dataset(10), { clock });
  const ids = await seedWebhooks(admin, table, 1, true);
  await new FeedWriter(new TableIO(admin, table), clock).append(FEED, [event(3).id]);
  const m = metered(store, false);
  try {
    await deliverInBatches(deliveryDeps(m.client, table, true).deps, ids);
    return m.cost().trips;
  } finally {
    m.close();
  }
}

/** A webhook behind a burst of BURST changes catching up, with its container's cache or without. */
async function catchUp(store: InProcessStore, admin: DynamoDBDocumentClient, cached: boolean): Promise<CatchUpRow> {
  const table = `bench-webhooks-burst-${cached ? 'c' : 'n'}`;
  await ensureTable(admin, table);
  await writeDataset(admin, table, dataset(BURST), { clock });
  const [id] = await seedWebhooks(admin, table, 1, true);
  const writer = new FeedWriter(new TableIO(admin, table), clock);
  // The burst: each event changed once, one append each, as the ingest makes them.
  for (let i = 0; i < BURST; i++) await writer.append(FEED, [event(i).id]);
  const m = metered(store);
  try {
    const { deps, posts } = deliveryDeps(m.client, table, cached);
    for (let more = true; more; ) {
      const outcome = await runWebhooks(deps, [id!], BUDGET).get(id!)!;
      more = outcome.kind === 'more';
    }
    const changes = posts.reduce((n, p) => n + (JSON.parse(p.body) as { changes: unknown[] }).changes.length, 0);
    if (changes !== BURST) throw new Error(`bench: the catch-up delivered ${changes} changes of ${BURST}`);
    return { cached, deliveries: posts.length, changes, cost: m.cost() };
  } finally {
    m.close();
  }
}

/**
 * What a container's refresh costs at a scope's front (nothing new past its cache but what the heads hold): its
 * Query of the 8 heads, measured after every 40 of 2,000 appends of 36-character ids (the heads' tails at every
 * stage between two flushes): mean and largest read units.
 */
async function frontRefresh(store: InProcessStore, admin: DynamoDBDocumentClient): Promise<{ mean: number; max: number }> {
  const table = 'bench-webhooks-front';
  await ensureTable(admin, table);
  const writer = new FeedWriter(new TableIO(admin, table), clock);
  const m = metered(store, false);
  const reads = new DynamoRepository(m.client, table);
  const units: number[] = [];
  try {
    for (let i = 0; i < 2000; i++) {
      await writer.append(FEED, [`evt_${String(i).padStart(32, '0')}`]);
      if ((i + 1) % 40) continue;
      const head = await new DynamoRepository(admin, table).feedHead(FEED);
      m.reset();
      await reads.feedEntries(FEED, head, 1000);
      units.push(m.cost().rcu.get('feed') ?? 0);
    }
  } finally {
    m.close();
  }
  return { mean: units.reduce((a, b) => a + b, 0) / units.length, max: Math.max(...units) };
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));
const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const ops = (m: Map<string, number>, per: number) =>
  [...m]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name} ×${fmt(n / per)}`)
    .join(' + ') || 'none';

const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

function changeLine(r: ChangeRow): string {
  return `| a change: its fan-out | ${r.webhooks.toLocaleString('en-US')} | ${fmt(total(r.fanOut.calls))} (${ops(r.fanOut.calls, 1)}) | ${r.pages} | ${fmt(total(r.fanOut.rcu))} | 0 | ${count(r.wakeUps, 'wake-up')} (SQS FIFO), ${count(r.sqsCalls, 'SendMessageBatch', 'SendMessageBatch')} |`;
}

function deliveryLine(r: DeliveryRow): string {
  const per = r.deliveries;
  return `| each webhook's delivery of it | ${r.webhooks.toLocaleString('en-US')} | ${fmt(total(r.cost.calls) / per)} (${ops(r.cost.calls, per)}) | ${r.trips} | ${fmt(total(r.cost.rcu) / per)} | ${fmt(r.cost.wcu / per)} | 1 POST |`;
}

const HEADER = ['| Measured | Webhooks on the scope | DynamoDB calls | Round trips | Read units | Write units | Besides DynamoDB |', '|---|---|---|---|---|---|---|'];

/** The held section: per change for every size, per delivery for all but the largest (the full bench measures it too). */
export async function exactWebhookTable(): Promise<string> {
  const store = await startInProcessDynalite();
  const admin = directClient(store.call);
  try {
    const rows: string[] = [];
    for (const n of WEBHOOK_SCOPE_SIZES) {
      const { change, delivery } = await changeAndDeliveries(store, admin, n, n < WEBHOOK_SCOPE_SIZES.at(-1)!);
      rows.push(changeLine(change));
      if (delivery) rows.push(deliveryLine(delivery));
    }
    return [...HEADER, ...rows].join('\n');
  } finally {
    admin.destroy();
    await store.close();
  }
}

/**
 * The full bench's webhook lines: the delivery of 10,000 (checked equal to 100's per delivery), and the catch-up.
 * BENCH_WEBHOOK_DELIVERIES sets the largest scope delivered (the catch-up alone: 0).
 */
export async function webhookFigures(): Promise<string[]> {
  const store = await startInProcessDynalite();
  const admin = directClient(store.call);
  try {
    const big = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? WEBHOOK_SCOPE_SIZES.at(-1)!);
    const rows: string[] = [];
    if (big > 0) {
      const { delivery: large } = await changeAndDeliveries(store, admin, big, true);
      const { delivery: small } = await changeAndDeliveries(store, admin, 100, true);
      if (deliveryLine(large!).replace(`| ${big.toLocaleString('en-US')} |`, '| n |') !== deliveryLine(small!).replace('| 100 |', '| n |')) throw new Error(`bench: a delivery of ${big} webhooks' change costs other than one of 100's:\n${deliveryLine(large!)}\n${deliveryLine(small!)}`);
      rows.push(`Delivery of one change to ${big} webhooks (batches of ${FIFO_BATCH}, one container), the same per delivery as 100's:`, '', ...HEADER, deliveryLine(large!), '');
    }
    rows.push(
      `A webhook catching up on a burst of ${BURST} changes (pages of 100), per delivery, reads by the partition they land on:`,
      '',
      '| Feed reads | Deliveries | Changes per delivery | DynamoDB calls per delivery | Feed partition read units | Content read units | Webhook item read units | Write units |',
      '|---|---|---|---|---|---|---|---|',
    );
    const measured: Record<string, number> = {};
    for (const cached of [true, false]) {
      const r = await catchUp(store, admin, cached);
      const per = r.deliveries;
      if (cached) Object.assign(measured, { contentReadUnits: (r.cost.rcu.get('content') ?? 0) / per, feedReadUnits: (r.cost.rcu.get('feed') ?? 0) / per, itemReadUnits: (r.cost.rcu.get('webhooks') ?? 0) / per, writeUnits: r.cost.wcu / per });
      else measured.uncached = (r.cost.rcu.get('feed') ?? 0) / per;
      rows.push(`| ${cached ? 'the container\'s cache' : 'every page from the store'} | ${per} | ${fmt(r.changes / per)} | ${fmt(total(r.cost.calls) / per)} (${ops(r.cost.calls, per)}) | ${fmt((r.cost.rcu.get('feed') ?? 0) / per)} | ${fmt((r.cost.rcu.get('content') ?? 0) / per)} | ${fmt((r.cost.rcu.get('webhooks') ?? 0) / per)} | ${fmt(r.cost.wcu / per)} |`);
    }
    const front = await frontRefresh(store, admin);
    rows.push('', `A container's refresh at a scope's front (its 8 heads, after every 40 of 2,000 appends of 36-character ids): ${fmt(front.mean)} read units on average, ${fmt(front.max)} at most.`);
    // The models' inputs (scripts/webhook-model.ts, MEASURED) against this run's.
    const c = MEASURED.catchUpDelivery;
    const same = BURST === 1000 && fmt(measured.contentReadUnits!) === fmt(c.contentReadUnits) && fmt(measured.feedReadUnits!) === fmt(c.feedReadUnits) && fmt(measured.itemReadUnits!) === fmt(c.itemReadUnits) && fmt(measured.writeUnits!) === fmt(c.writeUnits) && fmt(measured.uncached!) === fmt(MEASURED.uncachedFeedReadUnits) && fmt(front.mean) === fmt(MEASURED.frontRefresh.mean) && fmt(front.max) === fmt(MEASURED.frontRefresh.max);
    rows.push('', same ? 'The models\' measured inputs (scripts/webhook-model.ts, MEASURED) are this run\'s.' : `The models' measured inputs differ from this run's (update MEASURED in scripts/webhook-model.ts, then npm run bench -- --exact --write): ${JSON.stringify({ ...measured, front })}`);
    return rows;
  } finally {
    admin.destroy();
    await store.close();
  }
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  process.stdout.write(`${await exactWebhookTable()}\n\n${(await webhookFigures()).join('\n')}\n`);
}
