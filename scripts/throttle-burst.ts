/**
 * SQS played as it behaves, around the ingest handler, on an injected clock:
 * a poll takes up to 10 visible records as one batch; a record the handler
 * failed comes back when the visibility it set runs out, or after the
 * queue's timeout when it set none; an applied one is deleted. Nothing
 * sleeps: the clock jumps to the next visible record.
 *
 * Used by test/integration/ingest-throttle-window.test.ts (the rules under a
 * throttle that lasts) and by `npm run bench` (throttledBurstFigures: lag,
 * billed writes and deliveries during and after a throttle window).
 */
import type { Context, SQSEvent } from 'aws-lambda';
import type { SQSBatchResponse } from 'aws-lambda';
import { QUEUE_VISIBILITY_SECONDS } from '../lambdas/core/retry-backoff.js';

export interface QueuedMessage {
  id: string;
  body: string;
  receives: number;
  visibleAt: number;
  /** The seconds the handler hid it for at each failed receive (undefined: it set none). */
  hidden: (number | undefined)[];
  appliedAt?: number;
  /** Receives once the window had ended. */
  receivesAfter: number;
}

export interface QueueRun {
  messages: QueuedMessage[];
  /** Failed deliveries, while the window lasted and after. */
  failedDuring: number;
  failedAfter: number;
  /** When the last record applied (ms of the clock). */
  drainedAt: number;
}

const context = { awsRequestId: 'req', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

/**
 * Delivers `bodies` (the i-th visible at start + i × spacingMs) to `ingest`
 * until every one applied. `tick(now)` runs before each poll (the window
 * closes there); `visibility` holds what the handler's retryIn set, by
 * receipt handle; `afterPoll` runs after each (a follower reading on).
 */
export async function playQueue(opts: {
  bodies: readonly string[];
  start: number;
  spacingMs: number;
  windowEnds: number;
  ingest: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
  visibility: ReadonlyMap<string, number>;
  setNow: (now: number) => void;
  tick: (now: number) => void;
  afterPoll?: () => Promise<void>;
  maxReceives: number;
}): Promise<QueueRun> {
  const messages: QueuedMessage[] = opts.bodies.map((body, i) => ({ id: `m${i}`, body, receives: 0, visibleAt: opts.start + i * opts.spacingMs, hidden: [], receivesAfter: 0 }));
  const run: QueueRun = { messages, failedDuring: 0, failedAfter: 0, drainedAt: opts.start };
  let now = opts.start;
  while (messages.some((m) => m.appliedAt === undefined)) {
    const due = messages.filter((m) => m.appliedAt === undefined).sort((a, b) => a.visibleAt - b.visibleAt);
    now = Math.max(now, due[0]!.visibleAt);
    opts.setNow(now);
    opts.tick(now);
    const batch = due.filter((m) => m.visibleAt <= now).slice(0, 10);
    for (const m of batch) {
      m.receives++;
      if (now >= opts.windowEnds) m.receivesAfter++;
      if (m.receives > opts.maxReceives) throw new Error(`${m.id} was received ${m.receives} times: past the queue's maxReceiveCount, it would be in the dead-letter queue`);
    }
    const event: SQSEvent = {
      Records: batch.map((m) => ({
        messageId: m.id,
        receiptHandle: `${m.id}/${m.receives}`,
        body: m.body,
        attributes: { ApproximateReceiveCount: String(m.receives), SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:ingest',
        awsRegion: 'eu-west-1',
      })),
    };
    const failed = new Set((await opts.ingest(event, context)).batchItemFailures.map((f) => f.itemIdentifier));
    for (const m of batch) {
      if (!failed.has(m.id)) {
        m.appliedAt = now;
        run.drainedAt = Math.max(run.drainedAt, now);
        continue;
      }
      const seconds = opts.visibility.get(`${m.id}/${m.receives}`);
      m.hidden.push(seconds);
      m.visibleAt = now + (seconds ?? QUEUE_VISIBILITY_SECONDS) * 1000;
      if (now >= opts.windowEnds) run.failedAfter++;
      else run.failedDuring++;
    }
    await opts.afterPoll?.();
  }
  return run;
}
