/**
 * The webhooks' models (PRODUCT P18, "Freshness and scale";
 * docs/performance.md, "Webhooks"): what a change takes to reach a healthy
 * endpoint (p99), what a 10,000-webhook scope's 10,000-change burst takes
 * and loads, and what 1,000 webhooks receiving 1,000 deliveries a day each
 * cost a month. Pure: from the figures `npm run bench` measures
 * (MEASURED, the engine's own calls: scripts/bench-webhooks.ts) and the
 * assumptions below, each named with where it comes from. The bench prints
 * these figures, and test/unit/webhook-model.test.ts holds the page's
 * tables to them.
 */
import { DELIVERY_CONCURRENCY, FEED_REFRESH_INTERVAL_MS } from '../lambdas/delivery/feed-cache.js';
import { PRICES } from './cost-model.js';

/**
 * A FIFO queue's event source hands a function at most 10 messages a batch
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html):
 * one invocation delivers at most 10 webhooks at once.
 */
export const FIFO_BATCH = 10;

/** What the bench measured that the models use (its run at this branch's tip; the bench says when they move). */
export const MEASURED = {
  /**
   * A webhook's delivery of one change in a batch of 10 (the exact table): read and write units, DynamoDB round trips
   * before its POST is written (the last look, once connected, the last of them).
   */
  singleDelivery: { readUnits: 2.2, writeUnits: 2, tripsBeforePost: 5 },
  /**
   * A delivery of a catch-up, pages of 100 small events (the catch-up table, with the container's cache): its reads
   * by partition (the webhook's item: the last look before each send), writes, and round trips from one POST's
   * answer to the next POST (the 2xx's record with the next delivery's start, the next page's content, the look).
   */
  catchUpDelivery: { contentReadUnits: 100, feedReadUnits: 0.4, itemReadUnits: 1.1, writeUnits: 1.1, tripsBetweenPosts: 3 },
  /** The same without the cache (every page reading the feed partition). */
  uncachedFeedReadUnits: 2.8,
  /** A container's refresh at a scope's front (its heads): mean and largest read units. */
  frontRefresh: { mean: 2.74, max: 4 },
  /** One change's fan-out to 10,000 webhooks: Queries, read units, SendMessageBatch calls (the exact table). */
  fanOut10k: { queries: 11, readUnits: 200, sendCalls: 1000 },
} as const;

/** The models' assumptions: each a number and why it is that number. */
export const ASSUMPTIONS = {
  /** Changes in the burst, all of distinct small events (an event item under 4 KB: 1 read unit consistent). */
  burstChanges: 10_000,
  webhooks: 10_000,
  changesPerDelivery: 100,
  /** A scope's feed partition takes about 800 appends a second (docs/performance.md, "The feed head"): the burst is written in 12.5 s at best. */
  appendsPerSecond: 800,
  /** A healthy endpoint answers a delivery of 100 changes (about 120 KB) in 250 ms on average and within 1 s at p99: ours, stated, not measured. */
  postMeanMs: 250,
  postP99Ms: 1000,
  /** One DynamoDB round trip from Lambda in the region: single-digit ms; 5 as the cost model takes it (scripts/cost-model.ts). */
  dynamoRoundTripMs: 5,
  /** Of a FIFO batch's 10 slots, the share busy while its invocation runs: its runs end at different times and the batch ends with its last. */
  batchPacking: 0.7,
  /**
   * A record is in the stream within 0.5 s (AWS says "near-real time", no figure), and Lambda polls each shard 4 times a
   * second: at most 0.25 s more (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html, "Polling and batching streams").
   */
  streamP99Ms: 500 + 250,
  /** The fan-out sends its wake-ups 50 SendMessageBatch calls at a time, 20 ms a call, and reads 1,000 webhooks a Query. */
  fanOutSendConcurrency: 50,
  sqsCallMs: 20,
  /** A FIFO wake-up reaches its invocation within 0.5 s, a cold start's init included (the event source long-polls the queue). */
  queueToRunP99Ms: 500,
  /**
   * An on-demand table's read and write throughput quota, each, unless raised (and warm throughput set, so that the
   * table serves it at once): https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode-max-throughput.html.
   */
  tableQuotaUnitsPerS: 40_000,
  /** A partition's read units a second (and 1,000 write units): https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html. */
  partitionReadUnitsPerS: 3_000,
  /** Deliveries a month: 30.42 days. */
  daysPerMonth: 365 / 12,
  /** The delivery function's memory (it waits on POSTs: CPU is not what it needs). */
  deliveryMemoryMb: 256,
  /** A delivery of one change: its body and headers, about 2 KB, out to the internet. */
  singleDeliveryBytes: 2_048,
  /** Log lines a delivery invocation writes (Lambda's START, END and REPORT, the metrics' EMF line): about 1 KB. */
  logBytesPerInvocation: 1_024,
} as const;

/** On-demand list prices the cost model does not carry already (us-east-1, as cost-model.ts's, from the same kind of sources). */
export const WEBHOOK_PRICES = {
  dynamoWriteRequestUnit: { usd: 0.625 / 1e6, source: 'Amazon DynamoDB pricing (on-demand, after the November 2024 cut)', seenIn: 'third-party summaries of the November 2024 cut' },
  sqsFifoRequest: { usd: 0.5 / 1e6, source: 'Amazon SQS pricing (FIFO requests, each 64 KB of a request one)', seenIn: 'third-party summaries' },
} as const;

export interface Freshness {
  parts: { part: string; ms: number }[];
  totalMs: number;
}

/**
 * A change to a healthy endpoint's 2xx, p99, as a sum of each part's p99 (no better than the p99 of the sum: an upper
 * bound), for a scope of `webhooks` (the last one woken).
 */
export function freshness(webhooks: number, a = ASSUMPTIONS): Freshness {
  const fanOutMs = Math.ceil(webhooks / 1000) * a.dynamoRoundTripMs * 2 + Math.ceil(webhooks / 10 / a.fanOutSendConcurrency) * a.sqsCallMs;
  const parts = [
    { part: 'the head write in the stream, and Lambda reading it', ms: a.streamP99Ms },
    { part: `the fan-out: ${webhooks.toLocaleString('en-US')} wake-ups sent`, ms: fanOutMs },
    { part: 'the wake-up to its invocation (SQS FIFO, the event source)', ms: a.queueToRunP99Ms },
    { part: `a refresh of the scope's entries, waited for when its container refreshed it less than ${FEED_REFRESH_INTERVAL_MS / 1000} s before`, ms: FEED_REFRESH_INTERVAL_MS },
    { part: `the delivery's ${MEASURED.singleDelivery.tripsBeforePost} DynamoDB round trips before its POST`, ms: MEASURED.singleDelivery.tripsBeforePost * a.dynamoRoundTripMs },
    { part: 'the POST to a healthy endpoint', ms: a.postP99Ms },
  ];
  return { parts, totalMs: parts.reduce((n, p) => n + p.ms, 0) };
}

export interface Burst {
  deliveries: number;
  /** Deliveries running at once: the concurrency's batches of 10, packed. */
  slots: number;
  cycleMs: number;
  /** The three bounds on the catch-up, in seconds: the burst's own writing, one webhook's chain of deliveries, the capacity. */
  writtenS: number;
  chainS: number;
  capacityS: number;
  /** From the first change to every healthy endpoint caught up. */
  caughtUpS: number;
  /** The scope's feed partition: read units a second on average with the cache, at most by the refresh bound, and without the cache. */
  feedReadUnitsPerS: { cached: number; refreshBound: number; refreshBoundMax: number; uncached: number };
  /** Reads of each changed event's item a second (its partition key's). */
  itemReadUnitsPerS: number;
  /** The table's read and write units a second (content and webhook items: the on-demand table quota must cover them). */
  tableReadUnitsPerS: number;
  tableWriteUnitsPerS: number;
  /** The catch-up's length if the table stays at its default quota: its content reads alone, in seconds. */
  atDefaultQuotaS: number;
  costUsd: number;
}

export function burst(a = ASSUMPTIONS, concurrency = DELIVERY_CONCURRENCY): Burst {
  const perWebhook = Math.ceil(a.burstChanges / a.changesPerDelivery);
  const deliveries = a.webhooks * perWebhook;
  const slots = concurrency * FIFO_BATCH * a.batchPacking;
  const cycleMs = a.postMeanMs + MEASURED.catchUpDelivery.tripsBetweenPosts * a.dynamoRoundTripMs;
  const writtenS = a.burstChanges / a.appendsPerSecond;
  const chainS = (perWebhook * cycleMs) / 1000;
  const capacityS = (deliveries * cycleMs) / 1000 / slots;
  const startS = (a.streamP99Ms + freshness(a.webhooks, a).parts[1]!.ms + a.queueToRunP99Ms) / 1000;
  const caughtUpS = startS + Math.max(writtenS + cycleMs / 1000, chainS, capacityS);
  const catchUpS = caughtUpS - startS;
  const c = MEASURED.catchUpDelivery;
  return {
    deliveries,
    slots,
    cycleMs,
    writtenS,
    chainS,
    capacityS,
    caughtUpS,
    feedReadUnitsPerS: {
      // Each container reads the burst's entries once (what its runs need), a fresh refresh at most every interval.
      cached: (concurrency * perWebhook * c.feedReadUnits) / catchUpS,
      refreshBound: (concurrency / (FEED_REFRESH_INTERVAL_MS / 1000)) * MEASURED.frontRefresh.mean,
      refreshBoundMax: (concurrency / (FEED_REFRESH_INTERVAL_MS / 1000)) * MEASURED.frontRefresh.max,
      uncached: (deliveries * MEASURED.uncachedFeedReadUnits) / catchUpS,
    },
    itemReadUnitsPerS: a.webhooks / catchUpS,
    tableReadUnitsPerS: (deliveries * (c.contentReadUnits + c.itemReadUnits)) / catchUpS,
    tableWriteUnitsPerS: (deliveries * c.writeUnits) / catchUpS,
    atDefaultQuotaS: (deliveries * c.contentReadUnits) / a.tableQuotaUnitsPerS,
    costUsd: deliveries * (c.contentReadUnits + c.feedReadUnits + c.itemReadUnits) * PRICES.dynamoReadRequestUnit.usd + deliveries * c.writeUnits * WEBHOOK_PRICES.dynamoWriteRequestUnit.usd,
  };
}

export interface MonthlyCost {
  deliveries: number;
  lines: { what: string; usd: number }[];
  totalUsd: number;
}

/**
 * 1,000 webhooks receiving 1,000 deliveries a day each, one change a delivery, each its own wake-up (none shares a
 * batch: the dearest case), on-demand list prices, no free tier.
 */
export function monthlyCost(webhooks = 1000, perDay = 1000, a = ASSUMPTIONS): MonthlyCost {
  const deliveries = webhooks * perDay * a.daysPerMonth;
  const d = MEASURED.singleDelivery;
  const gbSeconds = ((a.postMeanMs + d.tripsBeforePost * a.dynamoRoundTripMs + a.dynamoRoundTripMs) / 1000) * (a.deliveryMemoryMb / 1024);
  const lines = [
    // Its own invocation each: its item, entries and content read alone, and its item again before the send (4 units), its two writes.
    { what: 'DynamoDB reads (the webhook twice: its run\'s read and the last look before the send; the scope\'s entries; the content: 1 unit each)', usd: deliveries * 4 * PRICES.dynamoReadRequestUnit.usd },
    { what: 'DynamoDB writes (in flight, acknowledged)', usd: deliveries * d.writeUnits * WEBHOOK_PRICES.dynamoWriteRequestUnit.usd },
    { what: 'the fan-out\'s Query of the scope\'s webhooks', usd: deliveries * PRICES.dynamoReadRequestUnit.usd },
    { what: 'SQS FIFO: the wake-up sent, received, deleted', usd: deliveries * 3 * WEBHOOK_PRICES.sqsFifoRequest.usd },
    { what: 'Lambda invocations (the delivery\'s, the fan-out\'s)', usd: deliveries * 2 * PRICES.lambdaRequest.usd },
    { what: `Lambda duration (the delivery waits on its POST, ${a.deliveryMemoryMb} MB, Arm)`, usd: deliveries * gbSeconds * PRICES.lambdaArmGbSecond.usd },
    { what: 'data out to the endpoints', usd: ((deliveries * a.singleDeliveryBytes) / 1024 ** 3) * PRICES.internetTransferOutGb.usd },
    { what: 'CloudWatch Logs (two invocations\' lines)', usd: ((deliveries * 2 * a.logBytesPerInvocation) / 1024 ** 3) * PRICES.logsIngestionGb.usd },
  ];
  return { deliveries, lines, totalUsd: lines.reduce((n, l) => n + l.usd, 0) };
}

const usd = (x: number) => `$${x < 10 ? x.toFixed(2) : x.toFixed(0)}`;
const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The page's three tables, as the model gives them now. */
export function modelTables(): { freshness: string; burst: string; cost: string } {
  const f = freshness(ASSUMPTIONS.webhooks);
  const b = burst();
  const m = monthlyCost();
  return {
    freshness: ['| Part (p99) | ms |', '|---|---|', ...f.parts.map((p) => `| ${p.part} | ${n(p.ms)} |`), `| **a change to a healthy endpoint's 2xx** | **${n(f.totalMs)}** |`].join('\n'),
    burst: [
      '| Burst figure | Value |',
      '|---|---|',
      `| deliveries (${n(ASSUMPTIONS.webhooks)} webhooks × ${n(ASSUMPTIONS.burstChanges / ASSUMPTIONS.changesPerDelivery)} pages of ${ASSUMPTIONS.changesPerDelivery}) | ${n(b.deliveries)} |`,
      `| the delivery function's concurrency (its event source's maximum), webhooks a batch | ${n(DELIVERY_CONCURRENCY)}, ${FIFO_BATCH} |`,
      `| deliveries running at once (packed at ${ASSUMPTIONS.batchPacking * 100} %), one cycle (POST and ${MEASURED.catchUpDelivery.tripsBetweenPosts} round trips) | ${n(b.slots)}, ${n(b.cycleMs)} ms |`,
      `| bounds: the burst written, one webhook's 100 deliveries in a row, the capacity | ${n(b.writtenS, 1)} s, ${n(b.chainS, 1)} s, ${n(b.capacityS, 1)} s |`,
      `| **every healthy endpoint caught up, from the first change** | **${n(b.caughtUpS, 1)} s** |`,
      `| the scope's feed partition, read units a second: with the cache (average), its refresh bound (mean, largest), without the cache | ${n(b.feedReadUnitsPerS.cached)}, ${n(b.feedReadUnitsPerS.refreshBound)} (${n(b.feedReadUnitsPerS.refreshBoundMax)}), ${n(b.feedReadUnitsPerS.uncached)} |`,
      `| each changed event's item, read units a second | ${n(b.itemReadUnitsPerS)} |`,
      `| the table, read and write units a second (its on-demand quota raised to them, warm throughput set) | ${n(b.tableReadUnitsPerS)}, ${n(b.tableWriteUnitsPerS)} |`,
      `| the catch-up if the table keeps its default quota (${n(ASSUMPTIONS.tableQuotaUnitsPerS)} read units a second): the content reads alone | ${n(b.atDefaultQuotaS / 60, 0)} min |`,
      `| the burst's DynamoDB reads and writes, on-demand | ${usd(b.costUsd)} |`,
    ].join('\n'),
    cost: ['| Monthly, 1,000 webhooks × 1,000 deliveries a day | USD |', '|---|---|', ...m.lines.map((l) => `| ${l.what} | ${usd(l.usd)} |`), `| **total (${n(m.deliveries)} deliveries)** | **${usd(m.totalUsd)}** |`].join('\n'),
  };
}
