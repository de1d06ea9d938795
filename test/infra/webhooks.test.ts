/**
 * Webhooks in the synthesized templates (lib/webhooks.ts; PRODUCT P18, issue
 * 60 items 2 and 5): the table's stream and the fan-out's filtered event
 * source, the FIFO wake-up queue and its dead letters set above the retry
 * schedule's attempts, the delivery function's one-message batches and stated
 * concurrency, the secrets key's policy, the alarms and the dashboard row, and
 * the local setting that lets the outbound guard reach loopback receivers,
 * which no function of any template carries. What each role may do is the
 * IAM table's (route-roles-key-items.test.ts); the rehearsal runs it all
 * (test/rehearsal/webhooks.test.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FAILING_DISABLE_SECONDS, retryDelaySeconds } from '../../lambdas/core/webhook-rules.js';
import { ALLOW_LOOPBACK_SETTING, WEBHOOK_ENV } from '../../lambdas/delivery/settings.js';
import { METRICS } from '../../lambdas/http/metrics.js';
import { ALARM_THRESHOLDS } from '../../lib/monitoring.js';
import { WEBHOOK_DELIVERY_CONCURRENCY, stackConfigSchema } from '../../lib/stack-config.js';
import { HEAD_WRITES_FILTER, KEY_ADMIN_ACTIONS, WEBHOOKS, attemptsBeforeDisable } from '../../lib/webhooks.js';
import { matchesPattern } from '../../local/rehearsal/streams.js';
import { resources, synthesized } from './support.js';

const staging = synthesized();
const production = synthesized({ stage: 'production' });
const t = staging.template;
const byPrefix = (type: string, prefix: string, template = t) => resources(template, type).filter(([id]) => id.startsWith(prefix));
const one = (type: string, prefix: string, template = t) => {
  const found = byPrefix(type, prefix, template);
  if (found.length !== 1) throw new Error(`${found.length} ${type} named ${prefix}…`);
  return found[0]!;
};
const [wakeUpsId, wakeUps] = one('AWS::SQS::Queue', 'WebhooksWakeUps');
const [wakeUpDlqId, wakeUpDlq] = one('AWS::SQS::Queue', 'WebhooksWakeUpDeadLetters');
const [fanOutQueueId] = one('AWS::SQS::Queue', 'WebhooksFanOutQueue');
const [streamFailuresId] = one('AWS::SQS::Queue', 'WebhooksStreamFailures');
const [fanOutId, fanOut] = one('AWS::Lambda::Function', 'WebhooksFanOutFunction');
const [deliveryId, delivery] = one('AWS::Lambda::Function', 'WebhooksDeliveryFunction');
const [tableId, table] = one('AWS::DynamoDB::GlobalTable', 'EventsTable');
const mappingsOf = (fnId: string) => resources(t, 'AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.FunctionName.Ref === fnId).map(([, m]) => m.Properties);

describe("the table's stream and the fan-out", () => {
  it('the table streams its writes keys only', () => {
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'KEYS_ONLY' });
  });

  it('feeds the fan-out from its oldest record, filtered to the heads of the changes feeds; failing batches halved, retried, then described on the failures queue', () => {
    const [stream] = mappingsOf(fanOutId).filter((m) => m.EventSourceArn['Fn::GetAtt']?.[1] === 'StreamArn');
    expect(stream).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [tableId, 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: WEBHOOKS.streamBatchSize,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: WEBHOOKS.streamRetryAttempts,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [streamFailuresId, 'Arn'] } } },
    });
    expect(stream!.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual([HEAD_WRITES_FILTER]);
  });

  it('the filter lets through exactly the writes of a feed head (FEED#{scope} / H#{shard}), as Lambda matches it', () => {
    const record = (pk: string, sk: string) => ({ eventName: 'MODIFY', dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } } } });
    for (const [pk, sk] of [['FEED#EVENTS', 'H#0'], ['FEED#HOST#usr_alice', 'H#31'], ['FEED#GUESTS#evt_jazz01', 'H#7'], ['FEED#PLACE#lisbon|PT', 'H#0']]) expect(matchesPattern(HEAD_WRITES_FILTER, record(pk!, sk!))).toBe(true);
    for (const [pk, sk] of [['FEED#EVENTS', 'C#000000000012#0'], ['FEED#EVENTS', 'M#evt_jazz01'], ['FEED#EVENTS', 'H'], ['EVENT#evt_jazz01', 'H#0'], ['WEBHOOK#wh_1', 'WEBHOOK'], ['WHSCOPE#EVENTS', 'W#wh_1']]) expect(matchesPattern(HEAD_WRITES_FILTER, record(pk!, sk!))).toBe(false);
  });

  it("reads its own queue's continuations with partial batch responses, two at a time", () => {
    const [queued] = mappingsOf(fanOutId).filter((m) => m.EventSourceArn['Fn::GetAtt']?.[0] === fanOutQueueId);
    expect(queued).toMatchObject({ BatchSize: WEBHOOKS.fanOutQueueBatchSize, FunctionResponseTypes: ['ReportBatchItemFailures'], ScalingConfig: { MaximumConcurrency: WEBHOOKS.fanOutQueueMaxConcurrency } });
  });
});

describe('the wake-up queue', () => {
  it('is FIFO with explicit deduplication ids, high-throughput (deduplication and throughput per message group), encrypted, TLS-only, kept 14 days', () => {
    expect(wakeUps.Properties).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: false, DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId', SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    expect(wakeUpDlq.Properties).toMatchObject({ FifoQueue: true, MessageRetentionPeriod: 14 * 86_400 });
    const policies = resources(t, 'AWS::SQS::QueuePolicy').filter(([, p]) => JSON.stringify(p.Properties.Queues).includes(wakeUpsId));
    expect(JSON.stringify(policies)).toContain('aws:SecureTransport');
  });

  it('hides a run cut off for six times the delivery function’s timeout (AWS’s advice for SQS event sources)', () => {
    expect(wakeUps.Properties.VisibilityTimeout).toBe(6 * delivery.Properties.Timeout);
    expect(delivery.Properties.Timeout).toBe(WEBHOOKS.deliveryTimeoutSeconds);
  });

  it("dead-letters a wake-up only after more receives than the retry schedule's attempts before the 3-day disable, whatever its draws", () => {
    expect(wakeUps.Properties.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [wakeUpDlqId, 'Arn'] }, maxReceiveCount: WEBHOOKS.wakeUpMaxReceives });
    expect(WEBHOOKS.wakeUpMaxReceives).toBeGreaterThan(attemptsBeforeDisable());
    // SQS takes at most 1,000.
    expect(WEBHOOKS.wakeUpMaxReceives).toBeLessThanOrEqual(1_000);
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 400, maxLength: 400 }), (draws) => {
        let attempts = 1;
        for (let waited = 0; waited < FAILING_DISABLE_SECONDS; attempts++) waited += retryDelaySeconds(attempts, () => draws[attempts % draws.length]!);
        return attempts <= attemptsBeforeDisable();
      }),
      { numRuns: 200 },
    );
  });

  it('states its figures on the deploy page: the receives, and the attempts they exceed', () => {
    const page = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(page).toContain(`after ${WEBHOOKS.wakeUpMaxReceives} receives`);
    expect(page).toContain(`before it disables a webhook (${attemptsBeforeDisable()}, every wait drawn at its shortest)`);
  });
});

describe('the delivery function', () => {
  const [fromQueue] = mappingsOf(deliveryId);

  it('takes one message a batch (no webhook waits for another webhook’s endpoint), at most webhookDeliveryConcurrency at once', () => {
    expect(mappingsOf(deliveryId)).toHaveLength(1);
    expect(fromQueue).toMatchObject({ EventSourceArn: { 'Fn::GetAtt': [wakeUpsId, 'Arn'] }, BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'], ScalingConfig: { MaximumConcurrency: WEBHOOK_DELIVERY_CONCURRENCY } });
    const tuned = resources(synthesized({ webhookDeliveryConcurrency: '200' }).template, 'AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties.ScalingConfig?.MaximumConcurrency);
    expect(tuned).toContain(200);
    expect(() => stackConfigSchema.parse({ stage: 'staging', webhookDeliveryConcurrency: '1' })).toThrow();
    expect(() => stackConfigSchema.parse({ stage: 'staging', webhookDeliveryConcurrency: '1001' })).toThrow();
  });

  it('reserves no concurrency (the event source bounds it) and lets its own continuations pass recursive loop detection, as the fan-out does', () => {
    for (const f of [delivery, fanOut]) {
      expect(f.Properties.ReservedConcurrentExecutions).toBeUndefined();
      expect(f.Properties.RecursiveLoop).toBe('Allow');
    }
  });

  it('is told its table, site, cursor key, secrets key and queue, and nothing else', () => {
    expect(Object.keys(delivery.Properties.Environment.Variables).filter((k) => !k.startsWith('POWERTOOLS_')).sort()).toEqual(
      [WEBHOOK_ENV.table, WEBHOOK_ENV.siteUrl, WEBHOOK_ENV.cursorSecret, WEBHOOK_ENV.secretsKey, WEBHOOK_ENV.wakeUpQueue, 'NODE_OPTIONS'].sort(),
    );
    expect(Object.keys(fanOut.Properties.Environment.Variables).filter((k) => !k.startsWith('POWERTOOLS_')).sort()).toEqual([WEBHOOK_ENV.table, WEBHOOK_ENV.wakeUpQueue, WEBHOOK_ENV.fanOutQueue, 'NODE_OPTIONS'].sort());
    const [, keyAdmin] = one('AWS::Lambda::Function', 'KeyAdminFunction');
    expect(keyAdmin.Properties.Environment.Variables).toMatchObject({
      [WEBHOOK_ENV.siteUrl]: 'https://events.example.com',
      [WEBHOOK_ENV.cursorSecret]: expect.anything(),
      [WEBHOOK_ENV.secretsKey]: expect.anything(),
      [WEBHOOK_ENV.wakeUpQueue]: { Ref: wakeUpsId },
    });
  });
});

describe('loopback receivers: only by the local setting, which the stack never sets', () => {
  it.each([
    ['staging', {}],
    ['production', { stage: 'production' }],
    ['staging with every optional switch', { embedCdn: 'true', publicWaf: 'true', quotaHeaders: 'context', webhookDeliveryConcurrency: '1000' }],
    // Context keys that look like the setting are not settings of the app: nothing reads them.
    ['staging asked for loopback by context', { [ALLOW_LOOPBACK_SETTING]: 'true', allowLoopbackWebhooks: 'true', allowLoopback: 'true' }],
  ])('no function of the %s template carries it, nor any value that would turn it on', (_name, context) => {
    const { template } = synthesized(context);
    const functions = resources(template, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(20);
    for (const [id, f] of functions) {
      const variables = f.Properties.Environment?.Variables ?? {};
      expect([id, Object.keys(variables).filter((k) => /loopback/i.test(k))]).toEqual([id, []]);
    }
    expect(JSON.stringify(template.toJSON())).not.toContain(ALLOW_LOOPBACK_SETTING);
  });

  it('the stack configuration has no key for it', () => {
    expect(Object.keys(stackConfigSchema.shape).filter((k) => /loopback/i.test(k))).toEqual([]);
  });
});

describe("the secrets key's policy", () => {
  const [, key] = one('AWS::KMS::Key', 'WebhooksSecretsKey');
  const statements = key.Properties.KeyPolicy.Statement as { Sid: string; Principal: unknown; Action: string | string[]; Condition?: unknown }[];

  it('rotates yearly and is kept with a production table (its sealed secrets need it)', () => {
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(one('AWS::KMS::Key', 'WebhooksSecretsKey', production.template)[1]).toMatchObject({ DeletionPolicy: 'Retain' });
  });

  it('has three statements: the account administers and never uses it; the key manager encrypts and the delivery function decrypts, each with a webhook_id context only', () => {
    expect(statements.map((s) => s.Sid)).toEqual(['AdministerNotUse', 'KeyManagerSeals', 'DeliveryOpens']);
    const admin = statements[0]!;
    expect([admin.Action].flat().sort()).toEqual([...KEY_ADMIN_ACTIONS].sort());
    expect([admin.Action].flat().filter((a) => /\*|Encrypt|Decrypt|GenerateDataKey|CreateGrant|Sign|Verify|Mac/.test(a))).toEqual([]);
    const role = (fnProperties: Record<string, unknown>) => (fnProperties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const [, keyAdmin] = one('AWS::Lambda::Function', 'KeyAdminFunction');
    expect(statements[1]).toMatchObject({ Principal: { AWS: { 'Fn::GetAtt': [role(keyAdmin.Properties), 'Arn'] } }, Action: 'kms:Encrypt' });
    expect(statements[2]).toMatchObject({ Principal: { AWS: { 'Fn::GetAtt': [role(delivery.Properties), 'Arn'] } }, Action: 'kms:Decrypt' });
    for (const s of statements.slice(1)) expect(s.Condition).toEqual({ 'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['webhook_id'] }, 'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['webhook_id'] } });
  });

  it('no role has a KMS action in its own policies (the key policy alone says who may use the key)', () => {
    const actions = resources(t, 'AWS::IAM::Policy').flatMap(([, p]) => (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => [s.Action].flat()));
    expect(actions.filter((a) => a.startsWith('kms:'))).toEqual([]);
  });
});

describe('alarms and the dashboard', () => {
  const alarms = resources(t, 'AWS::CloudWatch::Alarm');
  const alarm = (name: string) => one('AWS::CloudWatch::Alarm', `Monitoring${name}`)[1].Properties;

  it('alarm on dead letters, fan-outs given up, the fan-out behind the stream, wake-ups waiting, and most attempts failing; and on each function’s errors and throttles', () => {
    expect(alarm('WebhookDeadLetters')).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [wakeUpDlqId, 'QueueName'] } }], Threshold: 0 });
    expect(JSON.stringify(alarm('WebhookFanOutFailures').Metrics)).toContain(streamFailuresId);
    expect(alarm('WebhookFanOutLag')).toMatchObject({ MetricName: 'IteratorAge', Namespace: 'AWS/Lambda', Threshold: ALARM_THRESHOLDS.webhookFanOutIteratorAgeMs, Dimensions: [{ Name: 'FunctionName', Value: { Ref: fanOutId } }] });
    expect(alarm('WebhookWakeLag')).toMatchObject({ MetricName: METRICS.webhookWakeLag, Namespace: 'PublicEvents/staging', ExtendedStatistic: 'p99', Threshold: ALARM_THRESHOLDS.webhookWakeLagP99Seconds });
    const failures = alarm('WebhookDeliveryFailures');
    expect(failures.Threshold).toBe(ALARM_THRESHOLDS.webhookFailureShare);
    const metrics = failures.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string; Dimensions: { Value: string }[] } } }[];
    expect(metrics.filter((m) => m.MetricStat).map((m) => [m.MetricStat!.Metric.MetricName, m.MetricStat!.Metric.Dimensions[0]!.Value]).sort()).toEqual(
      ['delivered', 'refused', 'rejected', 'unanswered'].map((r) => [METRICS.webhookDeliveries, r]),
    );
    for (const fn of ['WebhookFanOut', 'WebhookDelivery']) for (const kind of ['Errors', 'Throttles']) expect(alarms.some(([id]) => id.startsWith(`Monitoring${fn}${kind}`))).toBe(true);
  });

  it("show the webhooks' attempts, lag, queues and the webhooks woken and disabled", () => {
    const [, dashboard] = one('AWS::CloudWatch::Dashboard', 'Dashboard');
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const name of [METRICS.webhookDeliveries, METRICS.webhookDeliveryLag, METRICS.webhookWakeLag, METRICS.webhookNudges, METRICS.webhooksDisabled, 'IteratorAge', 'ApproximateNumberOfMessagesNotVisible']) expect(body).toContain(name);
    for (const title of ['Webhook attempts by result', 'Webhook lag (s)', 'Webhook queues', 'Webhooks woken and disabled']) expect(body).toContain(title);
  });
});
