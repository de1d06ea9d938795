/**
 * One CloudWatch dashboard per stage: this service's own metrics (EMF from
 * Powertools, names from lambdas/http/metrics.ts) beside API Gateway's,
 * Lambda's, DynamoDB's and SQS's, and the state of every alarm. Rows read top
 * to bottom the way an incident is worked: what is alarming, what clients
 * see, which route, the authorizer, the functions, the table, the ingest.
 */
import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  type Alarm,
  type IMetric,
  type IWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { AUTHORIZER_OUTCOMES, CHANGE_RESULTS, DELIVERY_RESULTS, DIMENSIONS, KEY_OPERATIONS, METRICS } from '../lambdas/http/metrics.js';
import { tableThrottles, webhookFailureShare, webhookWakeLagMetric, type WebhookAlarmSources } from './monitoring.js';

export interface OperationsDashboardProps {
  readonly dashboardName: string;
  /** The stage's EMF namespace (lib/observability.ts). */
  readonly namespace: string;
  readonly apis: Record<string, RestApi>;
  readonly functions: Record<string, IFunction>;
  readonly table: ITableV2;
  readonly ingest: { queue: IQueue; deadLetters: IQueue };
  readonly webhooks: WebhookAlarmSources;
  readonly alarms: Alarm[];
}

const PERIOD = Duration.minutes(5);
const WIDTH = 24;

export class OperationsDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    const { namespace } = props;
    const own = (metricName: string, dimensionsMap: Record<string, string>, statistic = 'Sum', label?: string) =>
      new Metric({ namespace, metricName, dimensionsMap, statistic, period: PERIOD, ...(label ? { label } : {}) });
    // Per-route series: a SEARCH finds every route and status class present, so a new route needs no dashboard change.
    const search = (metricName: string, label: string) =>
      new MathExpression({
        expression: `SEARCH('{${namespace},${DIMENSIONS.route},${DIMENSIONS.statusClass}} MetricName="${metricName}"', 'Sum', ${PERIOD.toSeconds()})`,
        usingMetrics: {},
        label,
        period: PERIOD,
      });
    const graph = (title: string, left: IMetric[], width = 8, right?: IMetric[]) =>
      new GraphWidget({ title, left, ...(right ? { right } : {}), width, height: 6, period: PERIOD });
    const perFunction = (title: string, metric: (fn: IFunction, label: string) => IMetric) =>
      graph(title, Object.entries(props.functions).map(([name, fn]) => metric(fn, name)), 6);
    const apis = Object.entries(props.apis);

    const rows: IWidget[][] = [
      [
        new TextWidget({
          markdown: `# ${props.dashboardName}\nAlarms and what to do about each: the runbook in docs/operations.md. Custom metrics: namespace \`${namespace}\`.`,
          width: WIDTH,
          height: 2,
        }),
      ],
      [new AlarmStatusWidget({ title: 'Alarms', alarms: props.alarms, width: WIDTH, height: 4 })],
      // What clients see, per API.
      apis.map(([name, api]) =>
        graph(`${name} API: requests, 4xx, 5xx`, [api.metricCount({ period: PERIOD, label: 'requests' })], WIDTH / 4, [
          api.metricClientError({ period: PERIOD, statistic: 'Sum', label: '4xx' }),
          api.metricServerError({ period: PERIOD, statistic: 'Sum', label: '5xx' }),
        ]),
      ).concat(
        apis.map(([name, api]) =>
          graph(`${name} API: latency (ms)`, [
            api.metricLatency({ period: PERIOD, statistic: 'p50', label: 'p50' }),
            api.metricLatency({ period: PERIOD, statistic: 'p99', label: 'p99' }),
          ], WIDTH / 4),
        ),
      ),
      // Which route, and how it answered.
      [
        graph('Requests by route and status class', [search(METRICS.requests, '')], 12),
        graph('5xx answers by route', [search(METRICS.errors, '')], 6),
        graph(
          'Authorizer decisions',
          AUTHORIZER_OUTCOMES.map((outcome) => own(METRICS.authorizerDecisions, { [DIMENSIONS.outcome]: outcome }, 'Sum', outcome)),
          6,
        ),
      ],
      // The functions.
      [
        perFunction('Lambda errors', (fn, label) => fn.metricErrors({ period: PERIOD, statistic: 'Sum', label })),
        perFunction('Lambda throttles', (fn, label) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum', label })),
        perFunction('Lambda duration p99 (ms)', (fn, label) => fn.metricDuration({ period: PERIOD, statistic: 'p99', label })),
        perFunction('Lambda concurrent executions (max)', (fn, label) => fn.metric('ConcurrentExecutions', { period: PERIOD, statistic: 'Maximum', label })),
      ],
      // The table.
      [
        graph('DynamoDB consumed capacity', [
          props.table.metricConsumedReadCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'read units' }),
          props.table.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'write units' }),
        ], 12),
        graph('DynamoDB throttled requests', [tableThrottles(props.table, PERIOD)], 12),
      ],
      // The change stream.
      [
        graph('Changes by result', CHANGE_RESULTS.map((result) => own(METRICS.changes, { [DIMENSIONS.result]: result }, 'Sum', result)), 6),
        graph('Fan-out per applied change', [
          own(METRICS.changeWrites, { [DIMENSIONS.result]: 'applied' }, 'Average', 'writes (avg)'),
          own(METRICS.changeWrites, { [DIMENSIONS.result]: 'applied' }, 'Maximum', 'writes (max)'),
          own(METRICS.changeDerivations, { [DIMENSIONS.result]: 'applied' }, 'Maximum', 'events re-derived (max)'),
        ], 6),
        graph('Change lag, occurred_at → applied (s)', [
          own(METRICS.changeLag, { [DIMENSIONS.result]: 'applied' }, 'p50', 'p50'),
          own(METRICS.changeLag, { [DIMENSIONS.result]: 'applied' }, 'p99', 'p99'),
        ], 6),
        graph('Ingest queue', [
          props.ingest.queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'queued' }),
          props.ingest.deadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'dead letters' }),
        ], 6, [props.ingest.queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum', label: 'oldest (s)' })]),
      ],
      // Webhooks (PRODUCT P18): what was sent and how it was answered, how late, what waits (their alarms: Webhook*).
      [
        graph('Webhook attempts by result', DELIVERY_RESULTS.map((result) => own(METRICS.webhookDeliveries, { [DIMENSIONS.result]: result }, 'Sum', result)), 6, [webhookFailureShare(namespace, PERIOD)]),
        graph('Webhook lag (s)', [
          webhookWakeLagMetric(namespace, PERIOD, 'p50'),
          webhookWakeLagMetric(namespace, PERIOD),
          own(METRICS.webhookDeliveryLag, {}, 'p99', 'first attempt → 2xx (p99)'),
        ], 6, [props.webhooks.fanOut.metric('IteratorAge', { period: PERIOD, statistic: 'Maximum', label: 'fan-out behind the stream (ms)' })]),
        graph('Webhook queues', [
          props.webhooks.wakeUps.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'wake-ups waiting' }),
          props.webhooks.wakeUps.metricApproximateNumberOfMessagesNotVisible({ period: PERIOD, statistic: 'Maximum', label: 'in flight (retries waiting included)' }),
        ], 6, [
          props.webhooks.wakeUpDeadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'wake-up dead letters' }),
          props.webhooks.fanOutDeadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'fan-out dead letters' }),
          props.webhooks.streamFailures.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'stream batches given up' }),
        ]),
        graph('Webhooks woken and disabled', [own(METRICS.webhookNudges, {}, 'Sum', 'woken')], 6, [
          own(METRICS.webhooksDisabled, { [DIMENSIONS.result]: 'gone' }, 'Sum', 'disabled: 410'),
          own(METRICS.webhooksDisabled, { [DIMENSIONS.result]: 'failing' }, 'Sum', 'disabled: 3 days failing'),
        ]),
      ],
      // The web product's key management (its alarm: KeyCreatesBurst).
      [graph('Key management by operation', KEY_OPERATIONS.map((operation) => own(METRICS.keyOperations, { [DIMENSIONS.operation]: operation }, 'Sum', operation)), 12)],
    ];

    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName, widgets: rows });
  }
}
