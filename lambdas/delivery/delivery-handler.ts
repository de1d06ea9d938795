/**
 * The delivery function (PRODUCT P18; lib/webhooks.ts): wake-ups from the
 * FIFO queue in, a webhook's deliveries out (deliver.ts, runWebhook, does the
 * work under the webhook's own conditional writes; this adapter maps its
 * outcome onto the queue).
 *
 * A batch's messages are grouped by message group (the webhook); SQS gives
 * a group's messages to one batch at a time, so no two runs of a webhook
 * overlap. Each group runs once (its messages are the same request: deliver
 * what the webhook has not had yet), the groups of a batch at once, and:
 * - done: every message of the group is deleted;
 * - more (the run's bound reached with more to send): a new wake-up is sent
 *   to the group, and the group's messages are deleted, so a long catch-up
 *   goes on wake-up after wake-up without using up a message's receives;
 *   the new wake-up's deduplication id is derived from the message it
 *   follows, so a retried invocation does not wake twice;
 * - retry in n seconds (the delivery in flight failed): the group's first
 *   message is made invisible for n seconds (ChangeMessageVisibility, up to
 *   SQS's 12 hours; the engine's backoff stops at one) and reported failed,
 *   the others deleted. That message holds its group until then: FIFO
 *   queues have no per-message delay, and an invisible message is still in
 *   flight, so the webhook's next change waits behind its retry while every
 *   other group goes on. When it comes back, the run sends the same
 *   delivery again, its content read anew. Why this over a delay queue or
 *   EventBridge Scheduler: docs/design.md, "Webhooks on AWS";
 * - parked (its scope not shown: deliver.ts, HIDDEN_RECHECK_SECONDS): as a
 *   retry, except that each return is a receive and a scope may stay hidden
 *   for months, so once a message has been received PARKED_RENEW_RECEIVES
 *   times it is replaced by a new wake-up of the group (its deduplication id
 *   derived from the message) and deleted: a parked webhook never reaches
 *   the dead-letter queue's maxReceiveCount;
 * - an error (a throttle, a dependency down): the group's first message is
 *   reported failed and comes back (a throttle after a backoff it sets; else
 *   after the queue's visibility timeout); the webhook's item says where it
 *   was (its delivery in flight is recorded before its first send).
 *
 * A message received for the first time counts the seconds it waited in the
 * queue (WebhookWakeLag): how long a webhook waited for a delivery function.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { KMSClient } from '@aws-sdk/client-kms';
import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { systemClock, type Clock } from '../core/clock.js';
import { DELIVERY_TIMEOUT_MS } from '../core/webhook-rules.js';
import { throttleVisibility } from '../core/retry-backoff.js';
import { createDocumentClient } from '../store/table/client.js';
import { isThrottle } from '../store/table/throttling.js';
import { DynamoRepository } from '../store/reads/repository.js';
import { DeliveryState } from '../store/webhooks/delivery-state.js';
import { kmsSecretBox } from '../store/webhooks/secret-box.js';
import { secretsManagerKeyring } from '../http/cursor-keys.js';
import { errorFields, type Logger } from '../http/logger.js';
import { METRICS, type MetricsSink } from '../http/metrics.js';
import { lambdaLogger, lambdaMetrics } from '../http/powertools.js';
import { runWebhook, type DeliveryDeps, type RunOutcome } from './deliver.js';
import type { Nudge } from './fan-out.js';
import { guardedPost } from './guard/guard.js';
import { WEBHOOK_ENV, guardPolicy, webhookSettings } from './settings.js';
import { sqsWakeUps, wakeUpBody } from './wake-ups.js';

export interface DeliveryFunctionDeps {
  delivery: DeliveryDeps;
  /** Sends a wake-up to a webhook's group (its catch-up goes on). */
  wakeUps: (nudges: readonly Nudge[]) => Promise<void>;
  /** When SQS gives a received message out again (ChangeMessageVisibility). */
  retryIn: (receiptHandle: string, seconds: number) => Promise<void>;
  logger: Logger;
  metrics: MetricsSink;
  /** The wake-up lag's clock (a message's SentTimestamp is real time). */
  clock?: Clock;
  /** Deliveries one wake-up makes at most (deliver.ts's bound). */
  maxDeliveries?: number;
  /** The time kept back after the last send may start: its deadline and the queue's calls. */
  reserveMs?: number;
  random?: () => number;
}

/** Deliveries per wake-up: enough for a burst's catch-up in a few wake-ups, few enough that one run stays short. */
export const WAKE_UP_DELIVERIES = 20;
export const DELIVERY_RESERVE_MS = 5_000;
/** SQS's longest visibility timeout. */
const MAX_VISIBILITY_SECONDS = 43_200;
/**
 * Receives after which a parked wake-up is replaced by a fresh one: far under the dead-letter queue's maxReceiveCount
 * (254, lib/webhooks.ts), about 8 hours of looks every 5 minutes.
 */
export const PARKED_RENEW_RECEIVES = 100;

type Group = { webhookId: string; records: SQSRecord[] };

/** The batch's records by message group, in the batch's order. */
function groupsOf(records: readonly SQSRecord[]): Group[] {
  const groups = new Map<string, SQSRecord[]>();
  for (const r of records) {
    const id = r.attributes.MessageGroupId ?? '';
    groups.set(id, [...(groups.get(id) ?? []), r]);
  }
  return [...groups].map(([webhookId, rs]) => ({ webhookId, records: rs }));
}

export function buildDeliveryFunction(deps: DeliveryFunctionDeps): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const clock = deps.clock ?? systemClock;
  const maxDeliveries = deps.maxDeliveries ?? WAKE_UP_DELIVERIES;
  const reserveMs = deps.reserveMs ?? DELIVERY_RESERVE_MS;

  async function group({ webhookId, records }: Group, context: Context): Promise<string[]> {
    const first = records[0]!;
    for (const r of records) {
      if (r.attributes.ApproximateReceiveCount === '1') {
        const waited = Math.max(0, (clock().getTime() - Number(r.attributes.SentTimestamp)) / 1000);
        deps.metrics.publish({}, [{ name: METRICS.webhookWakeLag, unit: 'Seconds', value: waited }]);
      }
    }
    const readable = records.every((r) => wakeUpBody.safeParse(safeJson(r.body)).data?.webhookId === webhookId);
    if (!readable) {
      // Only our functions send here, always the group's webhook in the body: anything else is a bug, logged, not run.
      deps.logger.error('Webhook wake-up unreadable; dropped', { messageIds: records.map((r) => r.messageId) });
      return [];
    }
    let outcome: RunOutcome;
    try {
      outcome = await runWebhook(deps.delivery, webhookId, { maxDeliveries, mayStart: () => context.getRemainingTimeInMillis() > DELIVERY_TIMEOUT_MS + reserveMs });
    } catch (error) {
      const receives = Number(first.attributes.ApproximateReceiveCount);
      if (isThrottle(error)) await setVisibility(first, throttleVisibility(receives, deps.random), webhookId);
      deps.logger.warn('Webhook wake-up failed; it comes back', { webhookId, receiveCount: receives, throttled: isThrottle(error), ...errorFields(error) });
      return [first.messageId];
    }
    if (outcome.kind === 'done') return [];
    if (outcome.kind === 'more') {
      try {
        await deps.wakeUps([{ webhookId, dedupId: `${webhookId}.more.${records.at(-1)!.messageId}` }]);
        return [];
      } catch (error) {
        // The catch-up goes on all the same: the message comes back at once.
        await setVisibility(first, 0, webhookId);
        deps.logger.warn('Webhook catch-up not queued; its wake-up comes back', { webhookId, ...errorFields(error) });
        return [first.messageId];
      }
    }
    if (outcome.parked && Number(first.attributes.ApproximateReceiveCount) >= PARKED_RENEW_RECEIVES) {
      try {
        await deps.wakeUps([{ webhookId, dedupId: `${webhookId}.parked.${first.messageId}` }]);
        return [];
      } catch (error) {
        // Kept as it is: it has receives to spare, and the next look tries again.
        deps.logger.warn('Parked wake-up not renewed; it comes back as it is', { webhookId, ...errorFields(error) });
      }
    }
    await setVisibility(first, Math.min(Math.max(0, outcome.seconds), MAX_VISIBILITY_SECONDS), webhookId);
    return [first.messageId];
  }

  async function setVisibility(record: SQSRecord, seconds: number, webhookId: string): Promise<void> {
    try {
      await deps.retryIn(record.receiptHandle, seconds);
    } catch (error) {
      // The message still comes back, after the queue's visibility timeout instead.
      deps.logger.warn("Could not set a wake-up's visibility", { webhookId, retryInSeconds: seconds, ...errorFields(error) });
    }
  }

  return async (event, context) => {
    const failed = await Promise.all(groupsOf(event.Records).map((g) => group(g, context)));
    return { batchItemFailures: failed.flat().map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

type Entry = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

function lambdaHandler(): Entry {
  const settings = webhookSettings('delivery', process.env);
  const logger = lambdaLogger();
  const metrics = lambdaMetrics();
  const client = createDocumentClient();
  const repository = new DynamoRepository(client, settings[WEBHOOK_ENV.table]);
  const sqs = new SQSClient({});
  const queueUrl = settings[WEBHOOK_ENV.wakeUpQueue];
  const policy = guardPolicy(settings);
  const fn = buildDeliveryFunction({
    delivery: {
      state: new DeliveryState(client, settings[WEBHOOK_ENV.table]),
      feeds: repository,
      events: repository,
      keyring: secretsManagerKeyring(settings[WEBHOOK_ENV.cursorSecret], undefined, systemClock, (error) => logger.warn('Cursor key secret not read', errorFields(error))),
      secrets: kmsSecretBox(settings[WEBHOOK_ENV.secretsKey], new KMSClient({})),
      post: (req) => guardedPost(req, policy, { timeoutMs: DELIVERY_TIMEOUT_MS }),
      siteUrl: settings[WEBHOOK_ENV.siteUrl],
      clock: systemClock,
      logger,
      metrics,
    },
    wakeUps: sqsWakeUps(sqs, queueUrl),
    retryIn: async (receiptHandle, seconds) => void (await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }))),
    logger,
    metrics,
  });
  // Request id, cold start and function name on every line; never the event, never a secret (deliver.ts logs ids only).
  return middy(fn).use(injectLambdaContext(logger, { resetKeys: true, logEvent: false })) as unknown as Entry;
}

// Built at cold start in Lambda (a bad configuration fails the init); importing the module elsewhere has no side effects.
let built: Entry | undefined = process.env.AWS_LAMBDA_FUNCTION_NAME ? lambdaHandler() : undefined;
export const handler: Entry = (event, context) => (built ??= lambdaHandler())(event, context);
