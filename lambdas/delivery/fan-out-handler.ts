/**
 * The fan-out function (PRODUCT P18; lib/webhooks.ts): the table's stream of
 * feed-head writes in, one wake-up per active webhook of each scope moved
 * out (fan-out.ts does the work; this adapter gives it its event sources).
 *
 * - A DynamoDB Streams batch: the records the event source's filter lets
 *   through (keys only, heads of the changes feeds), collapsed to the
 *   scopes they moved (scopesMoved), each woken from its first page. Any
 *   failure fails the batch: Lambda retries it (split in halves, then sent
 *   to the stream's failure queue after its retries: lib/webhooks.ts), and
 *   the wake-ups a retry sends again carry the same deduplication ids. A
 *   batch given up on loses no change: a webhook reads from its own cursor,
 *   so the next change of the scope, or a resume, delivers what it held.
 * - A batch of the fan-out's own queue: the rest of a scope, from where the
 *   last page stopped (a FanOutTask per message), each reported on its own.
 *
 * Bounded per invocation (ARCHITECTURE rule 14): at most `maxPages` pages of
 * webhooks are read (enough for the first page of every scope a full stream
 * batch can name) and `maxWakeUps` wake-ups sent, and no page once the time
 * left is under `reserveMs`; the scopes left are queued on the fan-out's
 * queue, round-robin with the continuations of scopes already started, so a
 * scope with 10,000 webhooks does not hold back the next scope's first page.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDocumentClient } from '../store/table/client.js';
import { DeliveryState } from '../store/webhooks/delivery-state.js';
import { errorFields, type Logger } from '../http/logger.js';
import { METRICS, type MetricsSink } from '../http/metrics.js';
import { lambdaLogger, lambdaMetrics } from '../http/powertools.js';
import { WEBHOOK_ENV, webhookSettings } from './settings.js';
import { FAN_OUT_PAGE, fanOut, scopesMoved, type FanOutTask, type Nudge } from './fan-out.js';
import { fanOutTaskBody, sqsFanOutTasks, sqsWakeUps } from './wake-ups.js';

export interface FanOutFunctionDeps {
  state: DeliveryState;
  wakeUps: (nudges: readonly Nudge[]) => Promise<void>;
  /** Queues fan-outs on the function's own queue (the rest of a scope, or scopes this invocation had no time for). */
  continueLater: (tasks: readonly FanOutTask[]) => Promise<void>;
  logger: Logger;
  metrics: MetricsSink;
  pageSize?: number;
  maxPages?: number;
  maxWakeUps?: number;
  reserveMs?: number;
}

/** Pages of webhooks one invocation reads at most: a stream batch's scopes each once (lib/webhooks.ts, 100 records), with room. */
export const FAN_OUT_MAX_PAGES = 200;
/** Wake-ups one invocation sends at most: 10 pages of FAN_OUT_PAGE (1,000 SendMessageBatch calls). */
export const FAN_OUT_MAX_WAKE_UPS = 10 * FAN_OUT_PAGE;
/** The time kept back for queueing what is left. */
export const FAN_OUT_RESERVE_MS = 10_000;

type Event = DynamoDBStreamEvent | SQSEvent;
const isSqs = (event: Event): event is SQSEvent => event.Records[0]?.eventSource === 'aws:sqs';

export function buildFanOutFunction(deps: FanOutFunctionDeps): (event: Event, context: Context) => Promise<SQSBatchResponse | void> {
  const maxPages = deps.maxPages ?? FAN_OUT_MAX_PAGES;
  const maxWakeUps = deps.maxWakeUps ?? FAN_OUT_MAX_WAKE_UPS;
  const reserveMs = deps.reserveMs ?? FAN_OUT_RESERVE_MS;

  /** Runs tasks within the invocation's pages and time; queues the rest. Answers the webhooks woken. */
  async function run(tasks: FanOutTask[], budget: { pages: number; woken: number }, remainingMs: () => number): Promise<number> {
    const queue = [...tasks];
    let woken = 0;
    while (queue.length && budget.pages < maxPages && budget.woken < maxWakeUps && remainingMs() > reserveMs) {
      const task = queue.shift()!;
      budget.pages += 1;
      const n = await fanOut({ state: deps.state, nudge: deps.wakeUps, continueLater: async (rest) => void queue.push(rest), pageSize: deps.pageSize ?? FAN_OUT_PAGE }, task);
      budget.woken += n;
      woken += n;
    }
    if (queue.length) await deps.continueLater(queue);
    return woken;
  }

  const count = (woken: number) => {
    if (woken) deps.metrics.publish({}, [{ name: METRICS.webhookNudges, unit: 'Count', value: woken }]);
  };

  return async (event, context) => {
    const remainingMs = () => context.getRemainingTimeInMillis();
    const budget = { pages: 0, woken: 0 };
    if (!isSqs(event)) {
      const tasks = scopesMoved(event.Records.map((r) => ({ keys: r.dynamodb?.Keys, sequence: r.dynamodb?.SequenceNumber ?? '' })));
      const woken = await run(tasks, budget, remainingMs);
      count(woken);
      deps.logger.info('Webhooks woken', { records: event.Records.length, scopes: tasks.length, woken });
      return;
    }
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    let woken = 0;
    for (const record of event.Records) {
      const parsed = fanOutTaskBody.safeParse(safeJson(record.body));
      if (!parsed.success) {
        // Only this function writes to its queue: a body it cannot read is a bug, logged; sending it again would change nothing.
        deps.logger.error('Fan-out continuation unreadable; dropped', { messageId: record.messageId });
        continue;
      }
      try {
        woken += await run([parsed.data], budget, remainingMs);
      } catch (error) {
        deps.logger.warn('Fan-out continuation failed; it is delivered again', { messageId: record.messageId, feed: parsed.data.feed, ...errorFields(error) });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    count(woken);
    return { batchItemFailures };
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

type Entry = (event: Event, context: Context) => Promise<SQSBatchResponse | void>;

function lambdaHandler(): Entry {
  const settings = webhookSettings('fanOut', process.env);
  const logger = lambdaLogger();
  const sqs = new SQSClient({});
  const fn = buildFanOutFunction({
    state: new DeliveryState(createDocumentClient(), settings[WEBHOOK_ENV.table]),
    wakeUps: sqsWakeUps(sqs, settings[WEBHOOK_ENV.wakeUpQueue]),
    continueLater: sqsFanOutTasks(sqs, settings[WEBHOOK_ENV.fanOutQueue]),
    logger,
    metrics: lambdaMetrics(),
  });
  // Request id, cold start and function name on every line; never the event (keys of the table's items).
  return middy(fn).use(injectLambdaContext(logger, { resetKeys: true, logEvent: false })) as unknown as Entry;
}

// Built at cold start in Lambda (a bad configuration fails the init); importing the module elsewhere has no side effects.
let built: Entry | undefined = process.env.AWS_LAMBDA_FUNCTION_NAME ? lambdaHandler() : undefined;
export const handler: Entry = (event, context) => (built ??= lambdaHandler())(event, context);
