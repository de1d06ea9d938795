/**
 * Alarms an operator needs first, each mapped to an action in the runbook
 * (docs/operations.md): 5xx rate and p99 latency per API, errors and throttles per function
 * (the authorizer's errors among them), dead letters and lag of the ingest,
 * DynamoDB throttles, and a burst of key creates through the key-management API. Every alarm notifies an SNS topic on ALARM and OK:
 * the one given by context, or one this stack creates (TLS-only publishing,
 * optionally with an e-mail subscription), so that no alarm notifies nobody.
 */
import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Operation } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DIMENSIONS, METRICS, type DeliveryResult } from '../lambdas/http/metrics.js';

export interface MonitoringProps {
  readonly apis: Record<string, RestApi>;
  readonly functions: Record<string, IFunction>;
  readonly table: ITableV2;
  readonly alarmTopicArn?: string;
  /** Subscribed to the topic the stack creates (not used with alarmTopicArn). */
  readonly alarmEmail?: string;
  /** The change-stream ingest's queues. */
  readonly ingest?: { queue: IQueue; deadLetters: IQueue };
  /** The stage's custom-metrics namespace (lib/observability.ts): where the key-management API counts its operations. */
  readonly metricsNamespace?: string;
  /** Webhooks' queues and fan-out (lib/webhooks.ts): dead letters, lag, delivery failures. */
  readonly webhooks?: WebhookAlarmSources;
}

export interface WebhookAlarmSources {
  readonly wakeUps: IQueue;
  readonly wakeUpDeadLetters: IQueue;
  readonly fanOutDeadLetters: IQueue;
  readonly streamFailures: IQueue;
  readonly fanOut: IFunction;
}

export const ALARM_THRESHOLDS = {
  /** Share of requests answered 5xx over 5 minutes. */
  serverErrorRate: 0.01,
  /** p99 end-to-end latency in ms over 5 minutes. */
  p99LatencyMs: 1000,
  /** Age of the oldest change waiting in the ingest queue, seconds: how far the read model is behind. */
  ingestLagSeconds: 300,
  /**
   * p99 of the seconds from a change at its source to its write here
   * (`ChangeLag`, applied changes): the freshness the write side is built
   * for, a burst shown within a minute (docs/performance.md, freshness under load).
   */
  changeLagP99Seconds: 60,
  /**
   * Keys created through the key-management API in 5 minutes: far above users
   * creating keys by hand in the web product's settings, reached by a loop or
   * a script creating keys (a bug, or stolen web-product credentials).
   */
  keyCreatesPer5Minutes: 50,
  /**
   * Age of the newest stream record the fan-out has read, ms (Lambda's
   * IteratorAge): how late webhooks hear of a change. Seconds in normal
   * running; a minute means the fan-out is failing or throttled.
   */
  webhookFanOutIteratorAgeMs: 60_000,
  /**
   * p99 of the seconds a wake-up waited for a delivery function (retries
   * excluded): P18's burst is to be caught up within a minute, so waits
   * past that say the delivery concurrency is too low or being throttled.
   */
  webhookWakeLagP99Seconds: 60,
  /**
   * Share of all webhooks' attempts that failed, over 5 minutes with at
   * least webhookFailureMinimumAttempts of them: one endpoint down is its
   * owner's (retried, then disabled); most of them failing at once is ours
   * (the outbound path, DNS, a bad deploy).
   */
  webhookFailureShare: 0.5,
  webhookFailureMinimumAttempts: 20,
};

/** The metric the key-creates alarm watches: KeyOperations with operation=created. */
export function changeLagMetric(namespace: string, period: Duration, result: 'applied' | 'throttled' = 'applied'): Metric {
  return new Metric({ namespace, metricName: METRICS.changeLag, dimensionsMap: { [DIMENSIONS.result]: result }, statistic: 'p99', period });
}

/**
 * What the ChangeLag alarm watches: the larger of the p99 lags of applied
 * changes and of deliveries refused on a throttle. While a throttle lasts
 * nothing may apply, so the applied lag alone has no datapoint and the alarm
 * would stay quiet through the very outage it is for; each throttled
 * delivery reports how old its change is (lambdas/ingest/handler.ts).
 */
export function freshnessLag(namespace: string, period: Duration): MathExpression {
  return new MathExpression({
    expression: 'MAX([applied, throttled])',
    usingMetrics: { applied: changeLagMetric(namespace, period), throttled: changeLagMetric(namespace, period, 'throttled') },
    label: 'ChangeLag p99 (applied or throttled)',
    period,
  });
}

export function keyCreatesMetric(namespace: string, period: Duration): Metric {
  return new Metric({ namespace, metricName: METRICS.keyOperations, dimensionsMap: { [DIMENSIONS.operation]: 'created' }, statistic: 'Sum', period });
}

/** WebhookDeliveries of one result, summed. */
export function webhookDeliveriesMetric(namespace: string, result: DeliveryResult, period: Duration): Metric {
  return new Metric({ namespace, metricName: METRICS.webhookDeliveries, dimensionsMap: { [DIMENSIONS.result]: result }, statistic: 'Sum', period });
}

/** The share of webhook attempts that failed (0 below the minimum count of attempts, so a quiet stage never alarms on one failure). */
export function webhookFailureShare(namespace: string, period: Duration): MathExpression {
  const m = (r: DeliveryResult) => webhookDeliveriesMetric(namespace, r, period);
  return new MathExpression({
    expression: `IF(delivered + rejected + unanswered + refused >= ${ALARM_THRESHOLDS.webhookFailureMinimumAttempts}, (rejected + unanswered + refused) / (delivered + rejected + unanswered + refused), 0)`,
    usingMetrics: { delivered: m('delivered'), rejected: m('rejected'), unanswered: m('unanswered'), refused: m('refused') },
    label: 'Share of webhook attempts failed',
    period,
  });
}

export function webhookWakeLagMetric(namespace: string, period: Duration, statistic = 'p99'): Metric {
  return new Metric({ namespace, metricName: METRICS.webhookWakeLag, statistic, period });
}

export class Monitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly topic: ITopic;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const period = Duration.minutes(5);
    for (const [name, api] of Object.entries(props.apis)) {
      this.alarms.push(
        new Alarm(this, `${name}ServerErrorRate`, {
          alarmDescription: `${name} API: more than ${ALARM_THRESHOLDS.serverErrorRate * 100}% of requests answered 5xx`,
          // The 5XXError metric's average is the share of 5xx answers.
          metric: api.metricServerError({ period, statistic: 'Average' }),
          threshold: ALARM_THRESHOLDS.serverErrorRate,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
        new Alarm(this, `${name}P99Latency`, {
          alarmDescription: `${name} API: p99 latency above ${ALARM_THRESHOLDS.p99LatencyMs} ms`,
          metric: api.metricLatency({ period, statistic: 'p99' }),
          threshold: ALARM_THRESHOLDS.p99LatencyMs,
          evaluationPeriods: 3,
          datapointsToAlarm: 2,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    for (const [name, fn] of Object.entries(props.functions)) {
      this.alarms.push(
        new Alarm(this, `${name}Errors`, {
          alarmDescription: `${name}: Lambda errors (unhandled failures; handled ones are 4xx envelopes)`,
          metric: fn.metricErrors({ period, statistic: 'Sum' }),
          threshold: 0,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
        new Alarm(this, `${name}Throttles`, {
          alarmDescription: `${name}: Lambda throttles (account or reserved concurrency exhausted)`,
          metric: fn.metricThrottles({ period, statistic: 'Sum' }),
          threshold: 0,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    if (props.ingest) {
      this.alarms.push(
        new Alarm(this, 'IngestDeadLetters', {
          alarmDescription: 'Change records in the ingest dead-letter queue: they never applied (invalid, or a reference that never came). Inspect, fix, redrive (runbook: docs/operations.md).',
          metric: props.ingest.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
          threshold: 0,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
        new Alarm(this, 'IngestLag', {
          alarmDescription: `The oldest change in the ingest queue is older than ${ALARM_THRESHOLDS.ingestLagSeconds} s: the read model is behind its source.`,
          metric: props.ingest.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
          threshold: ALARM_THRESHOLDS.ingestLagSeconds,
          evaluationPeriods: 5,
          datapointsToAlarm: 3,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    if (props.ingest && props.metricsNamespace) {
      this.alarms.push(
        new Alarm(this, 'ChangeLag', {
          alarmDescription: `Changes took more than ${ALARM_THRESHOLDS.changeLagP99Seconds} s (p99) from their source to the table, or are that old and still throttled: readers see them late (runbook: docs/operations.md).`,
          metric: freshnessLag(props.metricsNamespace, Duration.minutes(1)),
          threshold: ALARM_THRESHOLDS.changeLagP99Seconds,
          evaluationPeriods: 5,
          datapointsToAlarm: 3,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    if (props.metricsNamespace) {
      this.alarms.push(
        new Alarm(this, 'KeyCreatesBurst', {
          alarmDescription: `More than ${ALARM_THRESHOLDS.keyCreatesPer5Minutes} keys created through the key-management API in 5 minutes: check who called (its access logs and the function's "Key created" lines name the IAM caller); see docs/operations.md.`,
          metric: keyCreatesMetric(props.metricsNamespace, period),
          threshold: ALARM_THRESHOLDS.keyCreatesPer5Minutes,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    if (props.webhooks) this.alarms.push(...webhookAlarms(this, props.webhooks, props.metricsNamespace));
    this.alarms.push(
      new Alarm(this, 'TableThrottles', {
        alarmDescription: 'DynamoDB throttled requests on the table or an index: reads or writes are being refused (hot partition, or traffic past on-demand\'s instant capacity). See the runbook in docs/operations.md.',
        metric: tableThrottles(props.table, period),
        threshold: 0,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    if (props.alarmTopicArn) this.topic = Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn);
    else {
      // No KMS key: CloudWatch cannot publish to a topic under the AWS-managed SNS key, a customer key
      // costs a monthly fee, and alarm notifications carry no data. TLS-only publishing (cdk-nag SNS3).
      const topic = new Topic(this, 'AlarmTopic', { displayName: 'Public Events alarms', enforceSSL: true });
      if (props.alarmEmail) topic.addSubscription(new EmailSubscription(props.alarmEmail));
      this.topic = topic;
    }
    const action = new SnsAction(this.topic);
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}

/** Every operation this service sends (reads by the handlers and the authorizer, writes by the ingest, the loader and key management); a throttle on an index counts on the request. */
export const TABLE_OPERATIONS = [Operation.GET_ITEM, Operation.QUERY, Operation.BATCH_GET_ITEM, Operation.PUT_ITEM, Operation.UPDATE_ITEM, Operation.DELETE_ITEM, Operation.BATCH_WRITE_ITEM];

export function tableThrottles(table: ITableV2, period: Duration) {
  return table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period, statistic: 'Sum', label: 'Throttled requests' });
}

/** Webhooks' alarms (lib/webhooks.ts; runbook: docs/operations.md, "Webhooks"). */
function webhookAlarms(scope: Construct, w: WebhookAlarmSources, namespace: string | undefined): Alarm[] {
  const minute = Duration.minutes(1);
  const alarms = [
    new Alarm(scope, 'WebhookDeadLetters', {
      alarmDescription: 'Webhook wake-ups in their dead-letter queue: a webhook whose every receive failed (the delivery function erring, a dependency down for hours). Its state is in its item; redrive after fixing the cause (runbook: docs/operations.md).',
      metric: w.wakeUpDeadLetters.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: 'Maximum' }),
      threshold: 0,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
    new Alarm(scope, 'WebhookFanOutFailures', {
      alarmDescription: "Fan-outs given up on: stream batches after their retries, or continuations after their receives. Their webhooks were not woken by those changes (they are by the scope's next one, or a resume); see docs/operations.md.",
      metric: new MathExpression({
        expression: 'MAX([stream, continuations])',
        usingMetrics: {
          stream: w.streamFailures.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: 'Maximum' }),
          continuations: w.fanOutDeadLetters.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: 'Maximum' }),
        },
        label: 'Fan-outs given up on',
        period: minute,
      }),
      threshold: 0,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
    new Alarm(scope, 'WebhookFanOutLag', {
      alarmDescription: `The fan-out is more than ${ALARM_THRESHOLDS.webhookFanOutIteratorAgeMs / 1000} s behind the table's stream: webhooks hear of changes late (runbook: docs/operations.md).`,
      metric: w.fanOut.metric('IteratorAge', { period: minute, statistic: 'Maximum' }),
      threshold: ALARM_THRESHOLDS.webhookFanOutIteratorAgeMs,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
  ];
  if (namespace) {
    alarms.push(
      new Alarm(scope, 'WebhookWakeLag', {
        alarmDescription: `Webhook wake-ups waited more than ${ALARM_THRESHOLDS.webhookWakeLagP99Seconds} s (p99) for a delivery function: the delivery concurrency is too low for the load, or the function is throttled (runbook: docs/operations.md).`,
        metric: webhookWakeLagMetric(namespace, minute),
        threshold: ALARM_THRESHOLDS.webhookWakeLagP99Seconds,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(scope, 'WebhookDeliveryFailures', {
        alarmDescription: `More than ${ALARM_THRESHOLDS.webhookFailureShare * 100}% of all webhook attempts failed for 15 minutes: not one consumer's endpoint but the way out (DNS, the network, a bad deploy); see docs/operations.md.`,
        metric: webhookFailureShare(namespace, Duration.minutes(5)),
        threshold: ALARM_THRESHOLDS.webhookFailureShare,
        evaluationPeriods: 3,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }
  return alarms;
}
