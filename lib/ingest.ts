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
 * A fan-out stopped by the time limit does not use up receives, nor does a
 * throttle, however long: the ingest sends the record again as a new
 * message (a continuation; after a throttle, delayed by its backoff), so the
 * function may send to its own queue, and to nothing else. The dead-letter
 * queue receives only records that cannot apply (invalid, waiting for what
 * never came, failing on a fault to fix), and keeps them longer than the
 * queue keeps anything (INGEST.deadLetterRetentionDays).
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
  /**
   * How long each queue keeps a message. SQS keeps a dead-lettered message
   * only until its first send plus the dead-letter queue's retention (a
   * standard queue's message keeps its enqueue time when it moves:
   * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html,
   * "set the retention period of a dead-letter queue to be longer than the
   * retention period of the original queue"). The dead-letter queue keeps
   * the most SQS allows, 14 days, the source 7: an ingest stopped for up to
   * a week loses nothing (beyond that, a resync: docs/deploy.md), and
   * whatever is dead-lettered stays at least 7 days for its redrive (which
   * sends it anew, with a new retention). A record normally reaches the
   * dead-letter queue within hours of its send (WAITING_RECEIVES receives,
   * about two hours; a throttled record is a new message each time,
   * lambdas/ingest/handler.ts), so most have almost the 14 days.
   */
  retentionDays: 7,
  deadLetterRetentionDays: 14,
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
      retentionPeriod: Duration.days(INGEST.deadLetterRetentionDays),
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Six times the function's timeout (AWS's advice for SQS event sources); the backoff's cap is this value.
      visibilityTimeout: Duration.seconds(QUEUE_VISIBILITY_SECONDS),
      retentionPeriod: Duration.days(INGEST.retentionDays),
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
