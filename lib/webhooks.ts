/**
 * Webhooks on AWS's own engines (PRODUCT P18; docs/design.md, "Webhooks on
 * AWS", says why these and not EventBridge API destinations):
 *
 *   table ──stream (KEYS_ONLY, filtered to feed-head writes)──► fan-out function
 *     fan-out ──one message per active webhook, group = webhook──► wake-up queue (SQS FIFO)
 *     fan-out ──the rest of a scope, a page at a time──► fan-out queue ──► fan-out
 *   wake-up queue ──batches of one group──► delivery function ──POST──► the receiver
 *     delivery ──'more': a new wake-up in its group──► wake-up queue
 *     delivery ──'retry': its message kept invisible until the retry is due
 *
 * - The ingest does nothing for webhooks: the table's stream of its feed
 *   appends (the heads' writes) starts the fan-out, so a change's work stays
 *   O(scopes it enters) whatever the number of webhooks, and loads, resyncs
 *   and recovered settles wake webhooks as changes do. The event source's
 *   filter (Lambda event filtering on the keys) lets through the heads'
 *   writes only: every other record is dropped by Lambda before an
 *   invocation, and is not billed as one.
 * - One delivery in flight per webhook, a slow endpoint holding only its
 *   own: SQS FIFO hands a message group's messages out one at a time, and
 *   the delivery function's batches hold one message (one group), so no
 *   batch waits for another webhook's endpoint. Lambda scales a FIFO source
 *   to the number of active groups, up to the event source's maximum
 *   concurrency (deliveryConcurrency, context `webhookDeliveryConcurrency`).
 * - A retry's delay: FIFO queues take no per-message delay, so the message
 *   that carried the failed delivery stays in flight, its visibility set to
 *   the retry's wait (at most an hour, deliver.ts), holding its group and
 *   nothing else. Its receives count towards the dead-letter queue's
 *   maxReceiveCount, which is set above the most attempts the retry
 *   schedule makes before its 3-day disable (wakeUpMaxReceives); a long
 *   catch-up instead sends a new wake-up per round ('more') and uses none.
 * - The secrets' KMS key: its key policy alone says who may use it (no
 *   statement for the account's IAM policies): the key manager's role may
 *   Encrypt and the delivery function's role Decrypt, each only with an
 *   encryption context of the form secret-box.ts seals with (webhook_id,
 *   the webhook's id, and nothing else); the account may administer the key but neither encrypt nor
 *   decrypt with it, nor grant that to anyone (no kms:CreateGrant).
 *
 * Each role holds what its code calls (lambdas/delivery/, read by
 * test/infra/route-roles-key-items.test.ts and the rehearsal): the fan-out
 * Queries the scopes' webhook lists (WHSCOPE#) and sends to its two
 * queues; the delivery function reads and updates webhooks' delivery state
 * (WEBHOOK#, WHSCOPE#: UpdateItem, never Put or Delete) and reads the feeds
 * and their members as the feed routes do. Neither writes event data.
 */
import { CfnOutput, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { AccountRootPrincipal, ArnPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, FilterRule, RecursiveLoop, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FAILING_DISABLE_SECONDS, retryDelaySeconds } from '../lambdas/core/webhook-rules.js';
import { WEBHOOK_ENV } from '../lambdas/delivery/settings.js';
import { FEED_HEAD_PREFIX, FEED_PARTITION_PREFIX } from '../lambdas/store/feeds/feed-layout.js';
import { INDEXES } from '../lambdas/store/table/table.js';
import { SCOPE_INDEX_PREFIX, WEBHOOK_PARTITION_PREFIX } from '../lambdas/store/webhooks/webhook-items.js';
import { READ_ROUTE_PARTITIONS, RouteFunction } from './route-function.js';

/**
 * The most attempts one message can carry before the webhook is disabled:
 * every retry drawn at its shortest (half of its full wait), from the first
 * attempt to the first one 3 days later.
 */
export function attemptsBeforeDisable(): number {
  let attempts = 1;
  for (let waited = 0; waited < FAILING_DISABLE_SECONDS; attempts++) waited += retryDelaySeconds(attempts, () => 0);
  return attempts;
}

/** Receives of a wake-up that are not attempts (a throttle's backoff, a crash, an early receive) a message may have besides. */
const SPARE_RECEIVES = 100;

export const WEBHOOKS = {
  fanOutHandler: 'lambdas/delivery/fan-out-handler',
  deliveryHandler: 'lambdas/delivery/delivery-handler',
  /** A fan-out invocation sends at most 10,000 wake-ups (10 pages of 1,000 webhooks) and reads at most 200 pages (fan-out-handler.ts). */
  fanOutTimeoutSeconds: 60,
  /** A delivery run: up to 20 deliveries, none started with less than its 10 s deadline and 5 s left (delivery-handler.ts). */
  deliveryTimeoutSeconds: 60,
  /** Stream records a fan-out invocation takes at most; heads of one scope collapse to one fan-out. */
  streamBatchSize: 100,
  /** A failing stream batch is retried (halved each time), then its description goes to the stream failures queue. */
  streamRetryAttempts: 8,
  /** One message, one webhook: no batch waits for another webhook's endpoint. */
  deliveryBatchSize: 1,
  fanOutQueueBatchSize: 10,
  fanOutQueueMaxConcurrency: 2,
  /** A wake-up's receives before the dead-letter queue: more than any retry schedule makes before its disable. */
  wakeUpMaxReceives: attemptsBeforeDisable() + SPARE_RECEIVES,
  fanOutMaxReceives: 5,
  /** SQS's longest retention: a message retried for 3 days is still there, and a dead letter can wait for a redrive. */
  retention: Duration.days(14),
} as const;

/** The webhooks' own partitions (lambdas/store/webhooks/webhook-items.ts): the webhook and its delivery state, a scope's list. */
export const WEBHOOK_PARTITIONS = [`${WEBHOOK_PARTITION_PREFIX}*`, `${SCOPE_INDEX_PREFIX}*`] as const;

/** The stream records the fan-out gets: writes of a changes feed's heads (FEED#{scope} / H#{shard}). */
export const HEAD_WRITES_FILTER = { dynamodb: { Keys: { pk: { S: FilterRule.beginsWith(FEED_PARTITION_PREFIX) }, sk: { S: FilterRule.beginsWith(FEED_HEAD_PREFIX) } } } };

/**
 * The encryption context every use of the secrets' key must carry: a
 * webhook's id, and nothing else (secret-box.ts seals with
 * `{ webhook_id }`). A context's keys are checked (kms:EncryptionContextKeys:
 * webhook_id among them, and no other), not its value: which webhook a
 * ciphertext belongs to is bound by KMS itself (a ciphertext decrypts only
 * with the context it was sealed with), so a secret copied to another
 * webhook's item does not open, and a call without the context is refused.
 */
export const SEALED_FOR_A_WEBHOOK = { 'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['webhook_id'] }, 'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['webhook_id'] } };

/** What the account may do with the key: administer it, never use it or let anyone use it (no Encrypt, Decrypt, ReEncrypt, GenerateDataKey, CreateGrant). */
export const KEY_ADMIN_ACTIONS = [
  'kms:DescribeKey',
  'kms:GetKeyPolicy',
  'kms:PutKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:EnableKeyRotation',
  'kms:DisableKeyRotation',
  'kms:RotateKeyOnDemand',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:ListGrants',
  'kms:RevokeGrant',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateKeyDescription',
  'kms:EnableKey',
  'kms:DisableKey',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];

export interface WebhooksProps {
  readonly table: ITableV2;
  readonly cursorKey: ISecret;
  /** The key-management function: it creates, rotates and resumes webhooks (seals secrets, wakes webhooks). */
  readonly keyAdmin: RouteFunction;
  readonly environment: Record<string, string>;
  readonly siteUrl: string;
  /** Delivery functions at once at most (the FIFO event source's maximum concurrency, 2 to 1,000). */
  readonly deliveryConcurrency: number;
  readonly logRetention: RetentionDays;
  readonly retain: boolean;
}

export class Webhooks extends Construct {
  readonly wakeUps: Queue;
  readonly wakeUpDeadLetters: Queue;
  readonly fanOutQueue: Queue;
  readonly fanOutDeadLetters: Queue;
  /** Descriptions of stream batches the fan-out gave up on (Lambda's on-failure destination). */
  readonly streamFailures: Queue;
  readonly secretsKey: Key;
  readonly fanOut: RouteFunction;
  readonly delivery: RouteFunction;

  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    const { table } = props;
    const queue = (name: string, more: ConstructorParameters<typeof Queue>[2] = {}) =>
      new Queue(this, name, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: WEBHOOKS.retention, ...more });
    const fifo = { fifo: true, contentBasedDeduplication: false, deduplicationScope: DeduplicationScope.MESSAGE_GROUP, fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID } as const;
    this.wakeUpDeadLetters = queue('WakeUpDeadLetters', fifo);
    this.wakeUps = queue('WakeUps', {
      ...fifo,
      // Six times the function's timeout (AWS's advice for SQS event sources): a run cut off comes back once it is surely over.
      visibilityTimeout: Duration.seconds(6 * WEBHOOKS.deliveryTimeoutSeconds),
      deadLetterQueue: { queue: this.wakeUpDeadLetters, maxReceiveCount: WEBHOOKS.wakeUpMaxReceives },
    });
    this.fanOutDeadLetters = queue('FanOutDeadLetters');
    this.fanOutQueue = queue('FanOutQueue', { visibilityTimeout: Duration.seconds(6 * WEBHOOKS.fanOutTimeoutSeconds), deadLetterQueue: { queue: this.fanOutDeadLetters, maxReceiveCount: WEBHOOKS.fanOutMaxReceives } });
    this.streamFailures = queue('StreamFailures');

    const common = { environment: props.environment, logRetention: props.logRetention, retainLogs: props.retain, recursiveLoop: RecursiveLoop.ALLOW };
    this.fanOut = new RouteFunction(this, 'FanOut', { ...common, handlerFile: WEBHOOKS.fanOutHandler, description: 'Webhooks: wakes the webhooks of every scope a change moved (the table stream of feed-head writes)', timeoutSeconds: WEBHOOKS.fanOutTimeoutSeconds });
    this.delivery = new RouteFunction(this, 'Delivery', { ...common, handlerFile: WEBHOOKS.deliveryHandler, description: "Webhooks: a webhook's deliveries, one at a time, signed, through the outbound guard", timeoutSeconds: WEBHOOKS.deliveryTimeoutSeconds });

    // The fan-out: a scope's webhook list, its two queues, the stream (the event source grants its reads of the stream).
    const fanOut = this.fanOut;
    fanOut.fn.addEnvironment(WEBHOOK_ENV.table, table.tableName);
    fanOut.fn.addEnvironment(WEBHOOK_ENV.wakeUpQueue, this.wakeUps.queueUrl);
    fanOut.fn.addEnvironment(WEBHOOK_ENV.fanOutQueue, this.fanOutQueue.queueUrl);
    fanOut.role.addToPolicy(new PolicyStatement({ sid: 'ScopesWebhooks', actions: ['dynamodb:Query'], resources: [table.tableArn], conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${SCOPE_INDEX_PREFIX}*`] } } }));
    sendTo(fanOut, this.wakeUps, this.fanOutQueue);
    fanOut.fn.addEventSource(
      new DynamoEventSource(table, {
        // From the stream's oldest record: a head written between the stream's start and this mapping's is not missed.
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: WEBHOOKS.streamBatchSize,
        bisectBatchOnError: true,
        retryAttempts: WEBHOOKS.streamRetryAttempts,
        onFailure: new SqsDlq(this.streamFailures),
        filters: [FilterCriteria.filter(HEAD_WRITES_FILTER)],
      }),
    );
    fanOut.fn.addEventSource(new SqsEventSource(this.fanOutQueue, { batchSize: WEBHOOKS.fanOutQueueBatchSize, reportBatchItemFailures: true, maxConcurrency: WEBHOOKS.fanOutQueueMaxConcurrency }));

    // The delivery function: webhooks' delivery state, the feeds as the feed routes read them, the cursor key, its queue.
    const delivery = this.delivery;
    delivery.fn.addEnvironment(WEBHOOK_ENV.table, table.tableName);
    delivery.fn.addEnvironment(WEBHOOK_ENV.siteUrl, props.siteUrl);
    delivery.fn.addEnvironment(WEBHOOK_ENV.wakeUpQueue, this.wakeUps.queueUrl);
    delivery.bindCursorKey(props.cursorKey);
    delivery.role.addToPolicy(new PolicyStatement({ sid: 'WebhookDeliveryState', actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], resources: [table.tableArn], conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${WEBHOOK_PARTITION_PREFIX}*`] } } }));
    delivery.role.addToPolicy(new PolicyStatement({ sid: 'WebhookScopeState', actions: ['dynamodb:UpdateItem'], resources: [table.tableArn], conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${SCOPE_INDEX_PREFIX}*`] } } }));
    grantFeedReads(delivery, table, ['dynamodb:Query', 'dynamodb:BatchGetItem']);
    sendTo(delivery, this.wakeUps);
    delivery.fn.addEventSource(new SqsEventSource(this.wakeUps, { batchSize: WEBHOOKS.deliveryBatchSize, reportBatchItemFailures: true, maxConcurrency: props.deliveryConcurrency }));

    // The key manager: its webhooks' items, the feeds (a backfill's first page, a scope's head), the cursor key, wake-ups.
    const keyAdmin = props.keyAdmin;
    keyAdmin.fn.addEnvironment(WEBHOOK_ENV.siteUrl, props.siteUrl);
    keyAdmin.fn.addEnvironment(WEBHOOK_ENV.wakeUpQueue, this.wakeUps.queueUrl);
    keyAdmin.bindCursorKey(props.cursorKey);
    keyAdmin.role.addToPolicy(new PolicyStatement({ sid: 'Webhooks', actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'], resources: [table.tableArn], conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...WEBHOOK_PARTITIONS] } } }));
    // A start reads positions only (a feed from no cursor answers its position first): no member's item.
    grantFeedReads(keyAdmin, table, ['dynamodb:Query']);
    sendTo(keyAdmin, this.wakeUps);

    this.secretsKey = new Key(this, 'SecretsKey', {
      description: "Seals webhooks' signing secrets (PRODUCT P18): the key manager encrypts, the delivery function decrypts, nobody else",
      enableKeyRotation: true,
      removalPolicy: props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({ sid: 'AdministerNotUse', principals: [new AccountRootPrincipal()], actions: KEY_ADMIN_ACTIONS, resources: ['*'] }),
          new PolicyStatement({ sid: 'KeyManagerSeals', principals: [new ArnPrincipal(keyAdmin.role.roleArn)], actions: ['kms:Encrypt'], resources: ['*'], conditions: SEALED_FOR_A_WEBHOOK }),
          new PolicyStatement({ sid: 'DeliveryOpens', principals: [new ArnPrincipal(delivery.role.roleArn)], actions: ['kms:Decrypt'], resources: ['*'], conditions: SEALED_FOR_A_WEBHOOK }),
        ],
      }),
    });
    for (const fn of [delivery, keyAdmin]) fn.fn.addEnvironment(WEBHOOK_ENV.secretsKey, this.secretsKey.keyArn);

    new CfnOutput(scope, 'WebhookWakeUpQueueUrl', { description: "Webhooks' wake-ups (FIFO, one group per webhook): an operator wakes a webhook by hand here (docs/operations.md)", value: this.wakeUps.queueUrl });
    new CfnOutput(scope, 'WebhookWakeUpDeadLetterQueueUrl', { description: 'Webhook wake-ups that failed every receive; redrive after fixing the cause (docs/operations.md)', value: this.wakeUpDeadLetters.queueUrl });
    new CfnOutput(scope, 'WebhookWakeUpDeadLetterQueueArn', { description: 'The wake-up DLQ to redrive from (aws sqs start-message-move-task --source-arn)', value: this.wakeUpDeadLetters.queueArn });
    new CfnOutput(scope, 'WebhookStreamFailuresQueueUrl', { description: 'Stream batches the fan-out gave up on (their shard and sequence numbers, not their records)', value: this.streamFailures.queueUrl });
  }
}

/** SendMessage (and SendMessageBatch, authorized as it) to these queues, nothing else of SQS (no GetQueueUrl: the URL is in the environment). */
function sendTo(fn: RouteFunction, ...queues: Queue[]): void {
  fn.role.addToPolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: queues.map((q) => q.queueArn) }));
}

/**
 * What a webhook's page reads, as the feed routes read it (routes.ts,
 * FEED_READS): Query (and BatchGetItem of the members, for a page with
 * content) of event data's partitions, and the event index a guest feed's
 * event is checked on (repository.ts, getPublicEvent). No key item:
 * READ_ROUTE_PARTITIONS holds none.
 */
function grantFeedReads(fn: RouteFunction, table: ITableV2, actions: ('dynamodb:Query' | 'dynamodb:BatchGetItem')[]): void {
  fn.role.addToPolicy(
    new PolicyStatement({ sid: 'FeedReads', actions, resources: [table.tableArn], conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...READ_ROUTE_PARTITIONS] } } }),
  );
  fn.role.addToPolicy(new PolicyStatement({ sid: 'PublicEventById', actions: ['dynamodb:Query'], resources: [`${table.tableArn}/index/${INDEXES.event.name}`] }));
}
