/**
 * The change-stream ingest (PRODUCT P14): an SQS queue the web product sends
 * one change record per message to, a dead-letter queue for records that never
 * apply (invalid, or waiting for a reference that never comes), and the ingest
 * Lambda, the only function allowed to write event data.
 *
 * Visibility timeout: six times the function's timeout (AWS's advice for SQS
 * event sources), so a record is not delivered twice while a batch still runs.
 * A record waiting for a reference is delivered again in seconds, then
 * minutes (the ingest sets its visibility: lambdas/core/retry-backoff.ts),
 * and parked in the DLQ after WAITING_RECEIVES (17) receives, as long in
 * total as ten full visibility timeouts (two hours); the function may change
 * the visibility of its own queue's messages only (the event source's grant).
 * A fan-out stopped by the time limit does not use up receives: the ingest
 * sends the record again as a new message (its continuation), so the
 * function may send to its own queue, and to nothing else.
 *
 * A user's deletion closes their keys (lambdas/store/keys/user-keys.ts) through
 * the key-management function's `close` task, invoked synchronously
 * (lambdas/ingest/key-closer.ts): the function may invoke that one function,
 * and may read or write no key item and no API Gateway key itself.
 */
import { CfnOutput, Duration } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { RouteFunction } from './route-function.js';
import { QUEUE_VISIBILITY_SECONDS, WAITING_RECEIVES } from '../lambdas/core/retry-backoff.js';

export const INGEST = {
  handlerFile: 'lambdas/ingest/handler',
  timeoutSeconds: 120,
  batchSize: 10,
  maxReceiveCount: WAITING_RECEIVES,
} as const;

export interface IngestProps {
  readonly table: ITableV2;
  readonly logRetention: RetentionDays;
  readonly retainLogs: boolean;
  /** Powertools settings (lib/observability.ts). */
  readonly environment: Record<string, string>;
  /**
   * At most this many ingest functions at once (SQS event sources: 2 to 1000).
   * Every function of the account shares its concurrency, which is low on a
   * new account: a burst of changes must not take it from the API.
   */
  readonly maxConcurrency: number;
  /** The key-management function, whose `close` task a user's deletion invokes (lambdas/key-admin/tasks.ts). */
  readonly keyAdmin: IFunction;
}

export class Ingest extends Construct {
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly fn: RouteFunction['fn'];
  readonly role: RouteFunction['role'];

  constructor(scope: Construct, id: string, props: IngestProps) {
    super(scope, id);
    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Six times the function's timeout (AWS's advice for SQS event sources); the backoff's cap is this value.
      visibilityTimeout: Duration.seconds(QUEUE_VISIBILITY_SECONDS),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: INGEST.maxReceiveCount },
    });
    const ingest = new RouteFunction(this, 'Function', {
      handlerFile: INGEST.handlerFile,
      description: 'Applies change records from the ingest queue to the table',
      environment: props.environment,
      logRetention: props.logRetention,
      retainLogs: props.retainLogs,
      timeoutSeconds: INGEST.timeoutSeconds,
    });
    ingest.bindTableWrites(props.table);
    // A user's deletion closes their keys through the key manager's function: invoking it is all the ingest may do with keys.
    ingest.fn.addEnvironment('KEY_ADMIN_FUNCTION_ARN', props.keyAdmin.functionArn);
    // The unqualified ARN only (no `:*` for versions and aliases: the function has none, and cdk-nag would see a wildcard).
    ingest.role.addToPolicy(new PolicyStatement({ sid: 'CloseDeletedUsersKeys', actions: ['lambda:InvokeFunction'], resources: [props.keyAdmin.functionArn] }));
    // A fan-out cut short by the time limit queues its own continuation (lambdas/ingest/handler.ts).
    ingest.fn.addEnvironment('INGEST_QUEUE_URL', this.queue.queueUrl);
    this.queue.grantSendMessages(ingest.fn);
    const source = new SqsEventSource(this.queue, { batchSize: INGEST.batchSize, reportBatchItemFailures: true, maxConcurrency: props.maxConcurrency });
    ingest.fn.addEventSource(source);
    this.fn = ingest.fn;
    this.role = ingest.role;

    new CfnOutput(scope, 'IngestQueueUrl', { description: 'Send change records here (one per message body)', value: this.queue.queueUrl });
    new CfnOutput(scope, 'IngestQueueArn', { value: this.queue.queueArn });
    new CfnOutput(scope, 'IngestDeadLetterQueueUrl', { description: 'Change records that never applied; redrive after fixing the cause', value: this.deadLetters.queueUrl });
    // The runbook's redrive (start-message-move-task --source-arn) and resync (update-event-source-mapping --uuid) need these.
    new CfnOutput(scope, 'IngestDeadLetterQueueArn', { description: 'The DLQ to redrive from (aws sqs start-message-move-task --source-arn)', value: this.deadLetters.queueArn });
    new CfnOutput(scope, 'IngestEventSourceMappingUuid', {
      description: 'Disable and enable the ingest around a resync (aws lambda update-event-source-mapping --uuid)',
      value: source.eventSourceMappingId,
    });
  }
}
