/**
 * The ingest Lambda: applies the change records the web product sends to the
 * ingest queue (one record per SQS message body), with the same applier as
 * `npm run data:apply`. Failures are reported per record (SQS partial batch
 * responses, via Powertools' batch utility), so one bad record never holds
 * back the rest of its batch:
 *
 * - applied or stale: done (a stale change still finishes any work its
 *   entity's earlier change left pending);
 * - a fan-out cut short by the time limit: the same record is sent to the
 *   queue again at once (a continuation) and this delivery is done. The
 *   stored entity says what is left (settle.ts), so the continuation resumes
 *   where the fan-out stopped; a long cascade goes on invocation after
 *   invocation without waiting a visibility timeout per chunk and without
 *   using up receives, so it never reaches the dead-letter queue half done.
 *   Only if the continuation cannot be sent does the record fail (SQS then
 *   delivers it again after the visibility timeout);
 * - waiting for a reference: the record fails and its visibility is set from
 *   its receive count (lambdas/core/retry-backoff.ts: 5 s, doubling to the
 *   queue's 720 s), so it is applied soon after what it waits for arrives;
 * - a throttle (a hot partition past its limit after the SDK's retries, keys
 *   a BatchGetItem still left unprocessed after its backed-off attempts, a
 *   feed head still full after flushing, Lambda refusing the key closer's
 *   invoke, the key-management function throttled inside its close): the
 *   record is sent to the queue again as a new message, delayed with backoff
 *   (2 s, doubling to 300 s, jittered; SQS delays a message up to 900 s),
 *   its count of throttles carried in a message attribute (THROTTLES), and
 *   this delivery is done. So a throttle never uses up the record's receives:
 *   however long it lasts, the record is never dead-lettered by it, and it
 *   applies at its first delivery after the throttle ends, within 300 s; a
 *   throttle that lasts meets fewer and fewer deliveries. Only if that send
 *   fails does the record fail, its own visibility set to the same backoff.
 *   Counted as `throttled`, with its lag, so the ChangeLag alarm sees a
 *   throttle that lasts even while nothing applies;
 * - not a valid record, or any other failure: the record fails, SQS delivers it
 *   again after the visibility timeout. After maxReceiveCount (as long in
 *   total as ten full timeouts) a record that waits or fails on every
 *   delivery moves to the dead-letter queue (an alarm watches it), never
 *   dropped: only records that cannot apply (invalid, waiting for what never
 *   came, failing for a fault to fix) end there. A change whose source write landed keeps its `pending`
 *   there, so the next change of the entity or the redrive finishes it.
 *
 * A user's deletion closes their keys (lambdas/store/keys/user-keys.ts): in AWS
 * the function invokes the key-management function's `close` task and waits
 * for it (key-closer.ts), since its role may read no key record; a failure
 * fails the change, which comes back. Without that seam (the tests that
 * build it on a local store) the closing runs in process, audited here.
 *
 * A batch's records are applied at once, each with its own applier (an
 * applier counts one change's writes): PRODUCT P14 lets changes arrive in any
 * order, and the write side converges under any interleaving of appliers,
 * records of one entity included (docs/data-model.md, "Write side"). Logs name the change's
 * type and ids, never its body (which carries e-mails and phone numbers).
 * Every record is counted by result (lambdas/http/metrics.ts) with its
 * fan-out (items written, events re-derived) and, when the record says when
 * the change happened (`occurred_at`), the lag from then to now.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import * as z from 'zod';
import { changeSubject, parseChangeLine, type Change } from '../core/changes.js';
import { systemClock, type Clock } from '../core/clock.js';
import { parseDateTime } from '../core/dates.js';
import { ChangeApplier, FanOutIncomplete, type ApplyResult } from '../store/changes/applier.js';
import { createWriteClient } from '../store/table/client.js';
import { errorFields, type Logger } from '../http/logger.js';
import { DIMENSIONS, METRICS, type ChangeResult, type MetricValue, type MetricsSink } from '../http/metrics.js';
import { lambdaLogger, lambdaMetrics } from '../http/powertools.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { throttleVisibility, waitingVisibility } from '../core/retry-backoff.js';
import { isThrottle } from '../store/table/throttling.js';
import type { BatchGetOptions } from '../store/table/batch-get.js';
import { revokeAudit } from '../key-admin/revoke-audit.js';
import { webhookAudit } from '../key-admin/webhook-audit.js';
import type { PlanKeys } from '../store/keys/key-store.js';
import { invokeKeyCloser } from './key-closer.js';

/** The message attribute that carries how often a record was throttled (its backoff's step), from one message to the next. */
export const THROTTLES_ATTRIBUTE = 'throttles';

/** How a record is sent again after a throttle: after `delaySeconds`, with its throttles so far. */
export interface SendAgain {
  delaySeconds: number;
  throttles: number;
}

/** How often the record was throttled before this delivery: its THROTTLES attribute (0 when it has none). */
export function throttlesOf(r: Pick<SQSRecord, 'messageAttributes'>): number {
  const n = Number(r.messageAttributes?.[THROTTLES_ATTRIBUTE]?.stringValue ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

export class RecordNotApplied extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordNotApplied';
  }
}

export interface IngestDeps {
  client: DynamoDBDocumentClient;
  tableName: string;
  logger: Logger;
  metrics: MetricsSink;
  /** Reads "now" for the lag metric. */
  clock?: Clock;
  /** Milliseconds kept back from the invocation's time for finishing the batch. */
  reserveMs?: number;
  /**
   * Sends a record body to the ingest queue again, as a new message: the
   * continuation of a fan-out stopped for time, or a throttled record's next
   * try (`delaySeconds`, and its count of throttles so far as the THROTTLES
   * message attribute).
   */
  continueLater: (body: string, again?: SendAgain) => Promise<void>;
  /** Sets when SQS delivers a received record again (ChangeMessageVisibility); without it, after the queue's visibility timeout. */
  retryIn?: (receiptHandle: string, seconds: number) => Promise<void>;
  /** Draws the jitter of a throttled record's backoff; Math.random unless a test fixes it. */
  random?: () => number;
  /** Closes a deleted user's keys, a bounded call at a time (true: done): in AWS, the key-management function's `close` task (key-closer.ts). */
  closeUserKeys?: (userId: string, version: number) => Promise<boolean>;
  /** Without `closeUserKeys`: the plan keys the in-process closing deletes (tests). */
  planKeys?: PlanKeys;
  /** The reads by key's attempts and backoff (lambdas/store/table/batch-get.ts); tests inject the sleep. */
  batchGet?: BatchGetOptions;
}

export function buildIngest(deps: IngestDeps): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const processor = new BatchProcessor(EventType.SQS);
  // The closing: remote in AWS (audited by the key-management function), else in process and audited here.
  const keys = deps.closeUserKeys ? { closeUserKeys: deps.closeUserKeys } : { planKeys: deps.planKeys, revokeAudit: revokeAudit(deps.logger, deps.metrics), webhookAudit: webhookAudit(deps.logger, deps.metrics) };
  return async (event, context) => {
    const applierOptions = { remainingMs: () => context.getRemainingTimeInMillis(), reserveMs: deps.reserveMs ?? 15_000, batchGet: deps.batchGet, ...keys };
    const count = (result: ChangeResult, change?: Change, outcome?: ApplyResult) => {
      const values: MetricValue[] = [{ name: METRICS.changes, unit: 'Count', value: 1 }];
      if (outcome) {
        values.push({ name: METRICS.changeWrites, unit: 'Count', value: outcome.writes }, { name: METRICS.changeDerivations, unit: 'Count', value: outcome.derivations });
      }
      const occurred = change?.occurred_at !== undefined ? parseDateTime(change.occurred_at) : null;
      if (occurred) values.push({ name: METRICS.changeLag, unit: 'Seconds', value: Math.max(0, ((deps.clock ?? systemClock)().getTime() - occurred.getTime()) / 1000) });
      deps.metrics.publish({ [DIMENSIONS.result]: result }, values);
    };
    const setVisibility = async (r: SQSRecord, seconds: number, fields: Record<string, unknown>): Promise<void> => {
      try {
        await deps.retryIn?.(r.receiptHandle, seconds);
      } catch (error) {
        // The record still fails: SQS delivers it again after the queue's visibility timeout instead.
        deps.logger.warn('Could not set a failed record\'s visibility', { ...fields, ...errorFields(error) });
      }
    };
    const record = async (r: SQSRecord): Promise<void> => {
      const parsed = parseChangeLine(r.body);
      if (!parsed?.ok) {
        const problems = parsed ? parsed.problems : ['empty message body'];
        count('invalid');
        deps.logger.error('Invalid change record', { messageId: r.messageId, problems });
        throw new RecordNotApplied(`invalid change record: ${problems.join('; ')}`);
      }
      const { change } = parsed;
      const fields = { messageId: r.messageId, type: change.type, subject: changeSubject(change), version: change.version };
      let outcome: ApplyResult;
      try {
        outcome = await new ChangeApplier(deps.client, deps.tableName, applierOptions).apply(change);
      } catch (error) {
        if (error instanceof FanOutIncomplete) {
          count('incomplete', change);
          await deps.continueLater(r.body);
          deps.logger.info('Change fan-out stopped for time; a continuation was queued', fields);
          return;
        } else if (isThrottle(error)) {
          // Backpressure: this record alone comes back later, and later each time the throttle outlasts it, as a new
          // message, so that no throttle, however long, uses up its receives (file comment).
          count('throttled', change);
          const throttles = throttlesOf(r) + 1;
          const seconds = throttleVisibility(throttles, deps.random);
          const log = { ...fields, ...errorFields(error), throttles, retryInSeconds: seconds };
          try {
            await deps.continueLater(r.body, { delaySeconds: seconds, throttles });
            deps.logger.warn('Change throttled; it is sent again, delayed', log);
            return;
          } catch (sendError) {
            await setVisibility(r, seconds, fields);
            deps.logger.warn('Change throttled and could not be sent again; it is delivered again later', { ...log, receiveCount: Number(r.attributes.ApproximateReceiveCount), sendError: (sendError as Error).name });
          }
        } else {
          count('failed', change);
          deps.logger.error('Change failed', { ...fields, ...errorFields(error) });
        }
        throw error;
      }
      count(outcome.result, change, outcome);
      if (outcome.result === 'waiting') {
        const receives = Number(r.attributes.ApproximateReceiveCount);
        const seconds = waitingVisibility(receives);
        await setVisibility(r, seconds, fields);
        deps.logger.warn('Change waits for a reference', { ...fields, missing: outcome.missing, receiveCount: r.attributes.ApproximateReceiveCount, retryInSeconds: seconds });
        throw new RecordNotApplied(`waiting for ${outcome.missing}`);
      }
      deps.logger.info(`Change ${outcome.result}`, { ...fields, writes: outcome.writes, derivations: outcome.derivations });
    };
    // A batch where every record failed is still answered record by record: a Lambda error would add nothing but a false alarm.
    return processPartialResponse(event, record, processor, { context, processInParallel: true, throwOnFullBatchFailure: false });
  };
}

const envSchema = z.object({ TABLE_NAME: z.string().min(1), INGEST_QUEUE_URL: z.url(), KEY_ADMIN_FUNCTION_ARN: z.string().startsWith('arn:'), AWS_REGION: z.string().min(1) });

function lambdaHandler(): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
  const logger = lambdaLogger();
  const sqs = new SQSClient({});
  const queueUrl = parsed.data.INGEST_QUEUE_URL;
  const continueLater = async (body: string, again?: SendAgain) =>
    void (await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        ...(again ? { DelaySeconds: again.delaySeconds, MessageAttributes: { [THROTTLES_ATTRIBUTE]: { DataType: 'Number', StringValue: String(again.throttles) } } } : {}),
      }),
    ));
  const retryIn = async (receiptHandle: string, seconds: number) => void (await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds })));
  const closeUserKeys = invokeKeyCloser(parsed.data.KEY_ADMIN_FUNCTION_ARN, { region: parsed.data.AWS_REGION });
  const ingest = buildIngest({ client: createWriteClient(), tableName: parsed.data.TABLE_NAME, logger, metrics: lambdaMetrics(), continueLater, retryIn, closeUserKeys });
  // Request id, cold start and function name on every line; debug sampling re-drawn per invocation; never the event (it carries e-mails).
  return middy(ingest).use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }));
}

// Built at cold start in Lambda (a bad configuration fails the init); importing the module elsewhere has no side effects.
let built: ReturnType<typeof lambdaHandler> | undefined = process.env.AWS_LAMBDA_FUNCTION_NAME ? lambdaHandler() : undefined;
export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => (built ??= lambdaHandler())(event, context);
