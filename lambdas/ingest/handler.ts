/**
 * The ingest Lambda: applies the change records the web product sends to the
 * ingest queue (one record per SQS message body), with the same applier as
 * `npm run data:apply`. Failures are reported per record (SQS partial batch
 * responses, via Powertools' batch utility), so one bad record never holds
 * back the rest of its batch:
 *
 * - applied or stale: done (a stale change still finishes any work its
 *   entity's earlier change left pending);
 * - waiting for a reference, not a valid record, a fan-out cut short by the
 *   time limit, or any failure: the record fails, SQS delivers it again after
 *   the visibility timeout, and after maxReceiveCount it moves to the
 *   dead-letter queue (an alarm watches it), never dropped.
 *
 * Records are applied one after another in batch order. Logs name the change's
 * type and ids, never its body (which carries e-mails and phone numbers).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { changeSubject, parseChangeLine } from '../core/changes.js';
import { ChangeApplier } from '../store/applier.js';
import { createDocumentClient } from '../store/client.js';
import { jsonLogger, type Logger } from '../http/logger.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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
  /** Milliseconds kept back from the invocation's time for finishing the batch. */
  reserveMs?: number;
}

export function buildIngest(deps: IngestDeps): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const processor = new BatchProcessor(EventType.SQS);
  return async (event, context) => {
    const applier = new ChangeApplier(deps.client, deps.tableName, {
      remainingMs: () => context.getRemainingTimeInMillis(),
      reserveMs: deps.reserveMs ?? 15_000,
    });
    const record = async (r: SQSRecord): Promise<void> => {
      const parsed = parseChangeLine(r.body);
      if (!parsed?.ok) {
        const problems = parsed ? parsed.problems : ['empty message body'];
        deps.logger.error('Invalid change record', { messageId: r.messageId, problems });
        throw new RecordNotApplied(`invalid change record: ${problems.join('; ')}`);
      }
      const { change } = parsed;
      const fields = { messageId: r.messageId, type: change.type, subject: changeSubject(change), version: change.version };
      const outcome = await applier.apply(change);
      if (outcome.result === 'waiting') {
        deps.logger.warn('Change waits for a reference', { ...fields, missing: outcome.missing, receiveCount: r.attributes.ApproximateReceiveCount });
        throw new RecordNotApplied(`waiting for ${outcome.missing}`);
      }
      deps.logger.info(`Change ${outcome.result}`, { ...fields, writes: outcome.writes, derivations: outcome.derivations });
    };
    // A batch where every record failed is still answered record by record: a Lambda error would add nothing but a false alarm.
    return processPartialResponse(event, record, processor, { context, processInParallel: false, throwOnFullBatchFailure: false });
  };
}

const envSchema = z.object({ TABLE_NAME: z.string().min(1) });

function lambdaHandler(): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
  return buildIngest({ client: createDocumentClient(), tableName: parsed.data.TABLE_NAME, logger: jsonLogger({ service: 'ingest' }) });
}

// Built at cold start in Lambda (a bad configuration fails the init); importing the module elsewhere has no side effects.
let built: ReturnType<typeof lambdaHandler> | undefined = process.env.AWS_LAMBDA_FUNCTION_NAME ? lambdaHandler() : undefined;
export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => (built ??= lambdaHandler())(event, context);
