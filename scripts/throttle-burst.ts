/**
 * SQS played as it behaves, around the ingest handler, on an injected clock:
 * a poll takes up to 10 visible messages as one batch; a message the handler
 * failed comes back when the visibility it set runs out, or after the
 * queue's timeout when it set none; one it succeeded on is deleted; a body
 * the handler sent to the queue meanwhile (`queueSends`: a throttled
 * record's next try, delayed; a fan-out's continuation) is a new message,
 * with its own receive count, visible after its delay. A message received
 * more than maxReceiveCount times would be in the dead-letter queue: the run
 * throws. Nothing sleeps: the clock jumps to the next visible message.
 *
 * Used by test/integration/ingest-throttle-window.test.ts (the rules under a
 * throttle that lasts), the key tests of a deletion under throttles, and by
 * `npm run bench` (throttledBurstFigures: lag, billed writes and deliveries
 * during and after a throttle window).
 */
import type { Context, SQSEvent, SQSMessageAttributes } from 'aws-lambda';
import type { SQSBatchResponse } from 'aws-lambda';
import { QUEUE_VISIBILITY_SECONDS } from '../lambdas/core/retry-backoff.js';
import { THROTTLES_ATTRIBUTE, type SendAgain } from '../lambdas/ingest/handler.js';

/** One record through the queue, across the messages it took (its first, then each the handler sent again). */
export interface QueuedMessage {
  id: string;
  body: string;
  /** Receives of its current message: what the queue's maxReceiveCount counts. */
  receives: number;
  /** Deliveries of the record, over all its messages. */
  deliveries: number;
  /** Messages it took: 1, plus one per time the handler sent it again. */
  messages: number;
  /** Its current message's throttles attribute. */
  throttles: number;
  visibleAt: number;
  /** After each delivery that did not apply it: the seconds until its next (a visibility set, a re-send's delay; undefined: none set). */
  hidden: (number | undefined)[];
  appliedAt?: number;
  /** Deliveries once the window had ended. */
  receivesAfter: number;
}

export interface QueueRun {
  messages: QueuedMessage[];
  /** Deliveries that did not apply their record (failed, or sent again), while the window lasted and after. */
  failedDuring: number;
  failedAfter: number;
  /** When the last record applied (ms of the clock). */
  drainedAt: number;
}

/** What the handler sent to the queue during a poll: the ingest's `continueLater`, recorded for playQueue. */
export interface QueueSends {
  continueLater: (body: string, again?: SendAgain) => Promise<void>;
  /** The sends since the last call, in order. */
  take: () => { body: string; again?: SendAgain }[];
}

export function queueSends(): QueueSends {
  let sent: { body: string; again?: SendAgain }[] = [];
  return {
    continueLater: async (body, again) => void sent.push({ body, ...(again ? { again } : {}) }),
    take: () => {
      const out = sent;
      sent = [];
      return out;
    },
  };
}

const context = { awsRequestId: 'req', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

/**
 * Delivers `bodies` (the i-th visible at start + i × spacingMs) to `ingest`
 * until every one applied. `tick(now)` runs before each poll (the window
 * closes there); `visibility` holds what the handler's retryIn set, by
 * receipt handle; `sends` what it sent again (its continueLater); `afterPoll`
 * runs after each (a follower reading on).
 */
export async function playQueue(opts: {
  bodies: readonly string[];
  start: number;
  spacingMs: number;
  windowEnds: number;
  ingest: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
  visibility: ReadonlyMap<string, number>;
  sends: QueueSends;
  setNow: (now: number) => void;
  tick: (now: number) => void;
  afterPoll?: () => Promise<void>;
  maxReceives: number;
}): Promise<QueueRun> {
  const messages: QueuedMessage[] = opts.bodies.map((body, i) => ({ id: `m${i}`, body, receives: 0, deliveries: 0, messages: 1, throttles: 0, visibleAt: opts.start + i * opts.spacingMs, hidden: [], receivesAfter: 0 }));
  const run: QueueRun = { messages, failedDuring: 0, failedAfter: 0, drainedAt: opts.start };
  const messageId = (m: QueuedMessage) => (m.messages === 1 ? m.id : `${m.id}.${m.messages - 1}`);
  let now = opts.start;
  while (messages.some((m) => m.appliedAt === undefined)) {
    const due = messages.filter((m) => m.appliedAt === undefined).sort((a, b) => a.visibleAt - b.visibleAt);
    now = Math.max(now, due[0]!.visibleAt);
    opts.setNow(now);
    opts.tick(now);
    const batch = due.filter((m) => m.visibleAt <= now).slice(0, 10);
    for (const m of batch) {
      m.receives++;
      m.deliveries++;
      if (now >= opts.windowEnds) m.receivesAfter++;
      if (m.receives > opts.maxReceives) throw new Error(`${messageId(m)} was received ${m.receives} times: past the queue's maxReceiveCount, it would be in the dead-letter queue`);
    }
    const event: SQSEvent = {
      Records: batch.map((m) => ({
        messageId: messageId(m),
        receiptHandle: `${messageId(m)}/${m.receives}`,
        body: m.body,
        attributes: { ApproximateReceiveCount: String(m.receives), SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
        messageAttributes: (m.throttles ? { [THROTTLES_ATTRIBUTE]: { stringValue: String(m.throttles), dataType: 'Number', stringListValues: [], binaryListValues: [] } } : {}) as SQSMessageAttributes,
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:ingest',
        awsRegion: 'eu-west-1',
      })),
    };
    const failed = new Set((await opts.ingest(event, context)).batchItemFailures.map((f) => f.itemIdentifier));
    // A send names no message: it is the record of the batch with its body (the first such not yet matched).
    const sent = new Map<QueuedMessage, SendAgain | undefined>();
    for (const s of opts.sends.take()) {
      const m = batch.find((b) => b.body === s.body && !sent.has(b));
      if (!m) throw new Error('the handler sent a body that is none of its batch\'s records');
      sent.set(m, s.again);
    }
    for (const m of batch) {
      const wasFailed = failed.has(messageId(m));
      if (!wasFailed && !sent.has(m)) {
        m.appliedAt = now;
        run.drainedAt = Math.max(run.drainedAt, now);
        continue;
      }
      if (now >= opts.windowEnds) run.failedAfter++;
      else run.failedDuring++;
      if (wasFailed) {
        // The same message comes back after its visibility (and a send of a failed delivery's record is a duplicate: kept out).
        const seconds = opts.visibility.get(`${messageId(m)}/${m.receives}`);
        m.hidden.push(seconds);
        m.visibleAt = now + (seconds ?? QUEUE_VISIBILITY_SECONDS) * 1000;
        continue;
      }
      // Delivered, and sent again: its next message, with a fresh receive count, after the send's delay.
      const again = sent.get(m);
      m.messages++;
      m.receives = 0;
      m.throttles = again?.throttles ?? 0;
      m.hidden.push(again?.delaySeconds ?? 0);
      m.visibleAt = now + (again?.delaySeconds ?? 0) * 1000;
    }
    await opts.afterPoll?.();
  }
  return run;
}

/**
 * `npm run bench`'s throttled burst: RSVPS new RSVPs on one event, the
 * event's guest feed partition throttled for the first WINDOW_MINUTES of the
 * injected clock, the ingest handler with its backoff: per phase (during the
 * window, after it) the deliveries, the throttled ones, the billed write
 * units, and the changes' lag.
 */
export async function throttledBurstFigures(endpoint: string): Promise<string[]> {
  const { createWriteClient } = await import('../lambdas/store/table/client.js');
  const { buildIngest } = await import('../lambdas/ingest/handler.js');
  const { ensureTable } = await import('../local/dynalite.js');
  const { writeDataset } = await import('../local/loader.js');
  const { meter } = await import('./bench-changes.js');
  const { ThrottleWindow, toPartition } = await import('../test/support/throttle-window.js');
  const { WAITING_RECEIVES } = await import('../lambdas/core/retry-backoff.js');
  const RSVPS = Number(process.env.BENCH_THROTTLE_RSVPS ?? 60);
  const WINDOW_MINUTES = 5;
  const start = Date.parse('2026-11-21T12:00:00.000Z');
  const { host, party } = await import('../test/support/party.js');
  const guests = Array.from({ length: RSVPS }, (_, i) => ({ id: `usr_g${i}`, username: `g${i}` }));
  const table = 'throttled-burst';
  const client = createWriteClient({ endpoint });
  await ensureTable(client, table);
  await writeDataset(client, table, { users: [host, ...guests], events: [party], rsvps: [] });
  const window = new ThrottleWindow(toPartition(`FEED#GUESTS#${party.id}`));
  window.attach(client);
  const metered = meter(client, endpoint);
  let now = start;
  const windowEnds = start + WINDOW_MINUTES * 60_000;
  const visibility = new Map<string, number>();
  const lags: { at: number; lag: number; throttled: boolean }[] = [];
  const metrics = {
    publish: (dimensions: Readonly<Record<string, string>>, values: readonly { name: string; value: number }[]) => {
      for (const v of values) if (v.name === 'ChangeLag') lags.push({ at: now, lag: v.value, throttled: dimensions.result === 'throttled' });
    },
  };
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const sends = queueSends();
  const ingest = buildIngest({ client, tableName: table, logger: quiet, metrics, clock: () => new Date(now), continueLater: sends.continueLater, retryIn: async (h, s) => void visibility.set(h, s), random: () => 0.5 });
  // Billed writes by phase: the meter's count when the window ends.
  let wcuDuring = 0;
  window.open();
  const bodies = guests.map((g, i) => JSON.stringify({ type: 'rsvp.upserted', version: 1, occurred_at: new Date(start + i * 500).toISOString(), rsvp: { event_id: party.id, user_id: g.id, status: 'yes', rsvp_date: '2026-11-21T12:00:00.000Z' } }));
  const run = await playQueue({
    bodies,
    start,
    spacingMs: 500,
    windowEnds,
    ingest,
    visibility,
    sends,
    setNow: (t) => void (now = t),
    tick: (t) => {
      if (t >= windowEnds && window.opened) {
        window.close();
        wcuDuring = metered.m.wcu;
      }
    },
    maxReceives: WAITING_RECEIVES - 1,
  });
  metered.close();
  client.destroy();
  const deliveries = (during: boolean) => run.messages.reduce((n, m) => n + (during ? m.deliveries - m.receivesAfter : m.receivesAfter), 0);
  const maxLag = (during: boolean) => Math.max(0, ...lags.filter((l) => (l.at < windowEnds) === during).map((l) => l.lag));
  const throttledRecords = run.messages.filter((m) => m.hidden.length > 0).length;
  return [
    `${RSVPS} new RSVPs on one event, one every 0.5 s; the event's guest feed partition (\`FEED#GUESTS#${party.id}\`) throttled for the first ${WINDOW_MINUTES} minutes of the clock (every call to it failing as a throttle the SDK's retries did not outlast); the ingest handler with its backoff (jitter at its middle), SQS played on an injected clock (scripts/throttle-burst.ts):`,
    '',
    '| Phase | Deliveries | Throttled deliveries | Billed write units | Largest lag (s) |',
    '|---|---|---|---|---|',
    `| during the window (${WINDOW_MINUTES} min) | ${deliveries(true)} | ${run.failedDuring} | ${wcuDuring.toFixed(0)} | ${maxLag(true).toFixed(0)} |`,
    `| after it, until the last record applied (${((run.drainedAt - windowEnds) / 1000).toFixed(0)} s) | ${deliveries(false)} | ${run.failedAfter} | ${(metered.m.wcu - wcuDuring).toFixed(0)} | ${maxLag(false).toFixed(0)} |`,
    '',
    `${throttledRecords} of ${RSVPS} records met the window; at most ${Math.max(...run.messages.map((m) => m.deliveries))} deliveries a record, each a new message after a throttle, so no message was received more than once (the queue's maxReceiveCount is ${WAITING_RECEIVES}): ${run.messages.every((m) => m.deliveries === m.messages) ? 'yes' : 'no'}; each applied at its first delivery after the window: ${run.messages.every((m) => m.receivesAfter <= 1) ? 'yes' : 'no'}.`,
  ];
}
