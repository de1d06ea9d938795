/**
 * What an operator gets from the stack: Powertools settings on every function
 * (per stage, overridable from context), the dashboard with this service's
 * metrics beside API Gateway's, Lambda's, DynamoDB's and SQS's, and alarms
 * that each have a runbook entry in docs/operations.md.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { AUTHORIZER_OUTCOMES, CHANGE_RESULTS, KEY_OPERATIONS, METRICS } from '../../lambdas/http/metrics.js';
import { routes } from '../../lambdas/routes.js';
import { ALARM_THRESHOLDS } from '../../lib/monitoring.js';
import { resources, serviceFunctions, synthApp, synthesized } from './support.js';

const staging = synthesized();
const production = synthesized({ stage: 'production' });
const t = staging.template;

describe('Powertools settings', () => {
  // The service's functions (the widget's deploy-time copier is aws-cdk-lib's, and logs nothing through Powertools).
  const variables = (template: typeof t) => serviceFunctions(template).map(([, f]) => f.Properties.Environment.Variables as Record<string, string>);

  it("are on every function, ingest, authorizer, old-prefix redirect, key management and the webhooks' included, with the stage namespace and sampling", () => {
    const all = variables(t);
    expect(all).toHaveLength(routes.length + 6);
    for (const v of all) {
      expect(v).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'public-events',
        POWERTOOLS_METRICS_NAMESPACE: 'PublicEvents/staging',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        POWERTOOLS_LOGGER_SAMPLE_RATE: '0.1',
      });
      expect(v).not.toHaveProperty('POWERTOOLS_LOGGER_LOG_EVENT');
      expect(v).not.toHaveProperty('POWERTOOLS_DEV');
    }
    for (const v of variables(production.template)) {
      expect(v).toMatchObject({ POWERTOOLS_METRICS_NAMESPACE: 'PublicEvents/production', POWERTOOLS_LOG_LEVEL: 'INFO', POWERTOOLS_LOGGER_SAMPLE_RATE: '0.01' });
    }
  });

  it('take the level and the sampling rate from context, and refuse bad ones by name', () => {
    for (const v of variables(synthesized({ logLevel: 'DEBUG', logSampleRate: '0.5' }).template)) {
      expect(v).toMatchObject({ POWERTOOLS_LOG_LEVEL: 'DEBUG', POWERTOOLS_LOGGER_SAMPLE_RATE: '0.5' });
    }
    expect(() => synthApp({ logLevel: 'LOUD' })).toThrow(/logLevel/);
    expect(() => synthApp({ logSampleRate: '2' })).toThrow(/logSampleRate/);
  });

  it('leave the log level to Powertools: no Lambda log-level filter on any function', () => {
    for (const [, f] of resources(t, 'AWS::Lambda::Function')) {
      expect(f.Properties.LoggingConfig.LogFormat).toBe('Text');
      expect(f.Properties.LoggingConfig).not.toHaveProperty('ApplicationLogLevel');
    }
  });
});

type Widget = { type: string; properties: { title?: string; metrics?: unknown[][]; alarms?: string[]; markdown?: string } };

/** The dashboard body with every CloudFormation reference replaced by `<LogicalId>`, parsed. */
function dashboardBody(template: typeof t): { widgets: Widget[] } {
  const dashboard = resources(template, 'AWS::CloudWatch::Dashboard')[0]![1];
  const join = dashboard.Properties.DashboardBody['Fn::Join'] as [string, unknown[]];
  const text = join[1]
    .map((part) => {
      if (typeof part === 'string') return part;
      const ref = part as { Ref?: string; 'Fn::GetAtt'?: string[] };
      return `<${ref.Ref ?? ref['Fn::GetAtt']?.[0] ?? 'token'}>`;
    })
    .join(join[0]);
  return JSON.parse(text);
}

describe('dashboard', () => {
  const dashboards = resources(t, 'AWS::CloudWatch::Dashboard');
  const body = dashboardBody(t);
  const metrics = body.widgets.flatMap((w) => w.properties.metrics ?? []);
  /** [namespace, name, ...dimension pairs, options?] rows, and SEARCH expressions. */
  const has = (namespace: string, name: string) => metrics.some((m) => m[0] === namespace && m[1] === name);
  const rendered = JSON.stringify(body);

  it('is one per stage, named for it', () => {
    expect(dashboards).toHaveLength(1);
    expect(dashboards[0]![1].Properties.DashboardName).toBe('PublicEvents-staging');
    expect(resources(production.template, 'AWS::CloudWatch::Dashboard')[0]![1].Properties.DashboardName).toBe('PublicEvents-production');
  });

  it("shows API Gateway's count, 4xx, 5xx and latency p50/p99 for both APIs", () => {
    for (const name of ['Count', '4XXError', '5XXError', 'Latency']) {
      expect(metrics.filter((m) => m[0] === 'AWS/ApiGateway' && m[1] === name).length).toBeGreaterThanOrEqual(name === 'Latency' ? 4 : 2);
    }
    const latencyStats = metrics.filter((m) => m[1] === 'Latency').map((m) => (m.at(-1) as { stat?: string }).stat);
    expect(latencyStats.sort()).toEqual(['p50', 'p50', 'p99', 'p99']);
  });

  it("shows Lambda's errors, throttles, duration and concurrency for every function", () => {
    for (const name of ['Errors', 'Throttles', 'Duration', 'ConcurrentExecutions']) {
      expect(metrics.filter((m) => m[0] === 'AWS/Lambda' && m[1] === name)).toHaveLength(routes.length + 6);
    }
  });

  it("shows DynamoDB's consumed capacity and throttles, and the ingest queue, its age and its dead letters", () => {
    expect(has('AWS/DynamoDB', 'ConsumedReadCapacityUnits')).toBe(true);
    expect(has('AWS/DynamoDB', 'ConsumedWriteCapacityUnits')).toBe(true);
    expect(has('AWS/DynamoDB', 'ThrottledRequests')).toBe(true);
    // The ingest queue and its dead letters; the webhooks' wake-ups and their three kinds of dead letters (test/infra/webhooks.test.ts).
    expect(metrics.filter((m) => m[0] === 'AWS/SQS' && m[1] === 'ApproximateNumberOfMessagesVisible')).toHaveLength(6);
    expect(has('AWS/SQS', 'ApproximateAgeOfOldestMessage')).toBe(true);
  });

  it("shows this service's own metrics from its stage namespace, by their bounded dimensions", () => {
    const ns = 'PublicEvents/staging';
    expect(rendered).toContain(`SEARCH('{${ns},route,statusClass} MetricName=\\"${METRICS.requests}\\"'`);
    expect(rendered).toContain(`SEARCH('{${ns},route,statusClass} MetricName=\\"${METRICS.errors}\\"'`);
    for (const outcome of AUTHORIZER_OUTCOMES) expect(metrics).toContainEqual(expect.arrayContaining([ns, METRICS.authorizerDecisions, 'outcome', outcome]));
    for (const result of CHANGE_RESULTS) expect(metrics).toContainEqual(expect.arrayContaining([ns, METRICS.changes, 'result', result]));
    for (const operation of KEY_OPERATIONS) expect(metrics).toContainEqual(expect.arrayContaining([ns, METRICS.keyOperations, 'operation', operation]));
    for (const name of [METRICS.changeWrites, METRICS.changeDerivations, METRICS.changeLag]) expect(has(ns, name)).toBe(true);
    expect(rendered).not.toContain('PublicEvents/production');
  });

  it('shows the state of every alarm', () => {
    const alarmWidget = body.widgets.find((w) => w.type === 'alarm')!;
    expect(alarmWidget.properties.alarms).toHaveLength(resources(t, 'AWS::CloudWatch::Alarm').length);
  });
});

describe('alarms', () => {
  const alarms = resources(t, 'AWS::CloudWatch::Alarm');
  const byId = (part: string) => alarms.filter(([id]) => id.includes(part));

  it('cover 5xx rate, p99 latency, authorizer errors, dead letters, ingest lag, change lag, DynamoDB throttles and bursts of key creates', () => {
    // Public, Embed and the key-management API.
    expect(byId('ServerErrorRate')).toHaveLength(3);
    expect(byId('P99Latency')).toHaveLength(3);
    const [[, burst]] = byId('KeyCreatesBurst') as [[string, (typeof alarms)[number][1]]];
    expect(burst.Properties).toMatchObject({
      Namespace: 'PublicEvents/staging',
      MetricName: METRICS.keyOperations,
      Dimensions: [{ Name: 'operation', Value: 'created' }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: ALARM_THRESHOLDS.keyCreatesPer5Minutes,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(byId('AuthorizerErrors')).toHaveLength(1);
    expect(byId('IngestDeadLetters')).toHaveLength(1);
    expect(byId('IngestLag')).toHaveLength(1);
    // Freshness: the p99 from their source over a minute of applied changes, or of deliveries refused on a throttle
    // (while a throttle lasts nothing applies; the ingest's own metric, its one bounded dimension).
    const [[, lag]] = alarms.filter(([id]) => /ChangeLag/.test(id)) as [[string, (typeof alarms)[number][1]]];
    expect(lag.Properties).toMatchObject({ Threshold: ALARM_THRESHOLDS.changeLagP99Seconds, EvaluationPeriods: 5, DatapointsToAlarm: 3 });
    const lagMetrics = lag.Properties.Metrics as Array<{ Id: string; Expression?: string; ReturnData?: boolean; MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown }; Stat: string; Period: number } }>;
    expect(lagMetrics.find((m) => m.Expression)).toMatchObject({ Expression: 'MAX([applied, throttled])' });
    for (const result of ['applied', 'throttled']) {
      expect(lagMetrics.find((m) => m.Id === result)?.MetricStat).toEqual({
        Metric: { Namespace: 'PublicEvents/staging', MetricName: METRICS.changeLag, Dimensions: [{ Name: 'result', Value: result }] },
        Stat: 'p99',
        Period: 60,
      });
    }
    const [[, throttles]] = byId('TableThrottles') as [[string, (typeof alarms)[number][1]]];
    const expression = throttles.Properties.Metrics as Array<{ MetricStat?: { Metric: { MetricName: string; Dimensions: Array<{ Name: string; Value: unknown }> } } }>;
    const operations = expression.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
    expect(operations.every((m) => m.MetricName === 'ThrottledRequests')).toBe(true);
    expect(operations.map((m) => m.Dimensions.find((d) => d.Name === 'Operation')!.Value).sort()).toEqual(
      ['BatchGetItem', 'BatchWriteItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'UpdateItem'],
    );
    expect(throttles.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
  });

  it('each say what they mean, and each kind has a runbook entry in docs/operations.md', () => {
    for (const [, a] of alarms) expect(String(a.Properties.AlarmDescription).length).toBeGreaterThan(20);
    const runbook = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    expect(runbook.length).toBeGreaterThan(0);
    for (const kind of ['ServerErrorRate', 'P99Latency', 'AuthorizerErrors', '{Function}Errors', '{Function}Throttles', 'IngestDeadLetters', 'IngestLag', 'ChangeLag', 'KeyCreatesBurst', 'TableThrottles', 'WebhookDeadLetters', 'WebhookFanOutFailures', 'WebhookFanOutLag', 'WebhookWakeLag', 'WebhookDeliveryFailures']) {
      expect(runbook).toContain(`\`${kind}\``);
    }
  });
});
