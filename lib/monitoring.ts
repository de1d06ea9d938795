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
import { DIMENSIONS, METRICS } from '../lambdas/http/metrics.js';

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
