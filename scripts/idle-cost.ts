/**
 * `npm run idle-cost`: what a deployed stage costs a month while nobody calls
 * it, read from the synthesized templates themselves (staging and production
 * as the deploy page deploys them). Every resource of a template is priced by
 * its type below, or named free with the reason; a type with no entry stops
 * the report, naming the resource, so a resource added later (a secret, a
 * parameter, a key) shows up in the figures or fails until it is priced.
 * docs/performance.md quotes the table it prints, and a test holds the two
 * equal (test/infra/idle-cost.test.ts).
 *
 * Scope: what bills by the month with no traffic at all. Per-request charges
 * are in scripts/cost-model.ts; storage is priced per GB (it depends on the
 * data, not on the stack); free tiers are ignored, as everywhere in the docs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildApp } from '../lib/app.js';
import { withCdkJsonContext } from '../local/rehearsal/assembly.js';

/** When and where the prices below were looked up. */
export const IDLE_PRICES_AS_OF = '2026-11-26';
export const IDLE_PRICE_REGION = 'us-east-1';

interface IdlePrice {
  /** USD per unit and month. */
  readonly usd: number;
  readonly unit: string;
  /** The AWS pricing page (or documentation page) the figure belongs to. */
  readonly source: string;
  /** Where it was read: the AWS page itself, or summaries quoting it where the page's own text could not be read here (⚠). */
  readonly seenIn: string;
}

export const IDLE_PRICES = {
  alarmMetric: {
    usd: 0.1,
    unit: 'alarm metric (standard resolution)',
    source: 'Amazon CloudWatch pricing (Alarms)',
    seenIn: 'summaries quoting it; the AWS page counts alarms in "alarm metrics" (its free tier: 10 alarm metrics)',
  },
  highResolutionAlarmMetric: { usd: 0.3, unit: 'alarm metric (high resolution)', source: 'Amazon CloudWatch pricing (Alarms)', seenIn: 'summaries quoting it' },
  compositeAlarm: { usd: 0.5, unit: 'composite alarm', source: 'Amazon CloudWatch pricing (Alarms)', seenIn: 'summaries quoting it' },
  dashboard: { usd: 3, unit: 'dashboard', source: 'Amazon CloudWatch pricing (Dashboards)', seenIn: 'summaries quoting it; the AWS page\'s free tier (3 dashboards) was read there' },
  webAcl: {
    usd: 5,
    unit: 'web ACL',
    source: 'AWS WAF pricing',
    seenIn: 'summaries quoting it; an AWS blog post confirms the model (a fee per web ACL and per rule, the same in every region, prorated by the hour)',
  },
  webAclRule: { usd: 1, unit: 'rule of a web ACL', source: 'AWS WAF pricing', seenIn: 'as for the web ACL' },
  secret: { usd: 0.4, unit: 'secret', source: 'AWS Secrets Manager pricing', seenIn: 'summaries quoting it' },
  advancedParameter: { usd: 0.05, unit: 'advanced parameter', source: 'AWS Systems Manager pricing (Parameter Store)', seenIn: 'summaries quoting it (standard parameters are free: AWS documentation, "Specifying a default parameter tier")' },
  kmsKey: { usd: 1, unit: 'KMS key (customer managed)', source: 'AWS Key Management Service pricing', seenIn: 'the AWS page ("Each AWS KMS key that you create in KMS costs $1/month")' },
  kmsRotation: {
    usd: 1,
    unit: 'rotation of a KMS key, for its first two (later ones add nothing)',
    source: 'AWS Key Management Service pricing',
    seenIn: 'the AWS page ("each newly generated backing key costs an additional $1/month") and the AWS Security Blog, "The curious case of faster AWS KMS symmetric key rotation" (April 2024: the price of a key stops rising after its second rotation)',
  },
  sqsRequest: { usd: 0.4 / 1e6, unit: 'SQS request (standard queue)', source: 'Amazon SQS pricing', seenIn: 'summaries quoting it (first 100 billion a month; empty receives count)' },
  sqsFifoRequest: { usd: 0.5 / 1e6, unit: 'SQS request (FIFO queue)', source: 'Amazon SQS pricing', seenIn: "AWS's FIFO launch announcement (November 2016: $0.50 per million) and summaries quoting the current page" },
} as const satisfies Record<string, IdlePrice>;

/** Storage: what a GB kept costs a month, whatever the traffic. */
export const STORAGE_PRICES = {
  tableGb: { usd: 0.25, unit: 'GB of table (standard table class)', source: 'Amazon DynamoDB pricing (on-demand, data storage)', seenIn: 'not read here: the long-standing list price, to check on the AWS page' },
  pitrGb: { usd: 0.2, unit: 'GB of table, continuous backups (point-in-time recovery)', source: 'Amazon DynamoDB pricing (backup and restore)', seenIn: 'not read here: the long-standing list price, to check on the AWS page' },
  logsGb: { usd: 0.03, unit: 'GB of logs kept (compressed)', source: 'Amazon CloudWatch pricing (Logs, storage)', seenIn: 'not read here: the long-standing list price, to check on the AWS page' },
  s3Gb: { usd: 0.023, unit: 'GB in S3 Standard (first 50 TB)', source: 'Amazon S3 pricing', seenIn: 'not read here: the long-standing list price, to check on the AWS page' },
} as const satisfies Record<string, IdlePrice>;

/**
 * Lambda's pollers of an SQS queue with a maximum concurrency: five long
 * polls at once, never fewer (AWS Lambda developer guide, "Configuring scaling
 * behavior for SQS event source mappings": Lambda scales back to five
 * concurrent batches when traffic is low, and to as few as two only without
 * the maximum concurrency setting). Each long poll waits at most 20 seconds
 * (Amazon SQS developer guide, "Setting-up long polling"), so an idle queue
 * gets at least 5 × 3 requests a minute: an estimate, not a measurement.
 */
export const IDLE_POLLERS = 5;
const LONG_POLL_SECONDS = 20;
/** AWS bills by the hour; 730 hours is its usual month. */
const HOURS_PER_MONTH = 730;
export const IDLE_POLL_REQUESTS_PER_MONTH = IDLE_POLLERS * (3600 / LONG_POLL_SECONDS) * HOURS_PER_MONTH;

/** The lines of the report, in its order. */
export const ITEMS = {
  alarms: 'CloudWatch alarms',
  dashboards: 'CloudWatch dashboard',
  webAcls: 'AWS WAF web ACL',
  pollers: "Lambda's pollers of SQS queues (their requests)",
  secrets: 'Secrets Manager secrets',
  parameters: 'Parameter Store advanced parameters',
  kmsKeys: 'KMS keys',
} as const;
export type Item = keyof typeof ITEMS;
export const STORAGE = { table: 'DynamoDB tables', pitr: 'their point-in-time backups', logs: 'CloudWatch log groups', s3: 'S3 buckets' } as const;
export type Storage = keyof typeof STORAGE;

/** One priced resource: a monthly charge, a storage line, or free while idle (and why). */
export type Charge =
  | { kind: 'monthly'; item: Item; usd: number; units: Record<string, number> }
  | { kind: 'storage'; item: Storage }
  | { kind: 'free'; why: string };

// `any`: CloudFormation properties are free-form JSON, read by path below.
type Properties = Record<string, any>;
export interface CfnResource {
  Type: string;
  Properties?: Properties;
}
export type Template = { Resources: Record<string, CfnResource> };

export class UnpricedResourceError extends Error {}

const unpriced = (id: string, type: string, why: string) =>
  new UnpricedResourceError(`${id} (${type}) has no idle price: ${why}. Price it in scripts/idle-cost.ts (and the docs' table with it).`);

const free = (why: string): Charge => ({ kind: 'free', why });

/** Types with no monthly fee: billed per use, or not at all. */
const FREE: Record<string, string> = {
  'AWS::ApiGateway::Account': 'account setting',
  'AWS::ApiGateway::ApiKey': 'billed per request',
  'AWS::ApiGateway::Authorizer': 'billed per request (its function)',
  'AWS::ApiGateway::BasePathMapping': 'no charge',
  'AWS::ApiGateway::Deployment': 'no charge',
  'AWS::ApiGateway::DomainName': 'no charge for a custom domain (the certificate is ACM, free)',
  'AWS::ApiGateway::GatewayResponse': 'no charge',
  'AWS::ApiGateway::Method': 'billed per request',
  'AWS::ApiGateway::Resource': 'no charge',
  'AWS::ApiGateway::RestApi': 'billed per request',
  'AWS::ApiGateway::UsagePlan': 'no charge',
  'AWS::ApiGateway::UsagePlanKey': 'no charge',
  'AWS::ApiGatewayV2::RoutingRule': 'no charge',
  'AWS::CDK::Metadata': 'not a resource',
  'AWS::CloudFront::CachePolicy': 'no charge',
  'AWS::CloudFront::Distribution': 'pay as you go: billed per request and per GB, no monthly fee',
  'AWS::CloudFront::OriginAccessControl': 'no charge',
  'AWS::CloudFront::OriginRequestPolicy': 'no charge',
  'AWS::CloudFront::ResponseHeadersPolicy': 'no charge',
  'AWS::Events::Rule': 'no charge for a scheduled rule (the function it invokes is billed per invocation)',
  'AWS::IAM::ManagedPolicy': 'no charge',
  'AWS::IAM::Policy': 'no charge',
  'AWS::IAM::Role': 'no charge',
  'AWS::Lambda::LayerVersion': "no charge (its code counts toward Lambda's free code storage)",
  'Custom::CDKBucketDeployment': 'run at deploy time (its function is billed per invocation, one per deploy that changes it)',
  'AWS::Lambda::Function': 'billed per invocation and duration (no provisioned concurrency: that would be an alias or version with its own price)',
  'AWS::Lambda::Permission': 'no charge',
  'AWS::S3::BucketPolicy': 'no charge',
  'AWS::SNS::Subscription': 'billed per notification',
  'AWS::SNS::Topic': 'billed per request and notification',
  'AWS::SNS::TopicPolicy': 'no charge',
  'AWS::SQS::Queue': 'billed per request (its pollers are priced with the event source mapping)',
  'AWS::SQS::QueuePolicy': 'no charge',
  'AWS::WAFv2::WebACLAssociation': 'no charge (the web ACL is priced)',
};

/**
 * Lambda reads a DynamoDB stream for its event source at no charge: "Read
 * requests made by AWS Lambda-based consumers of DynamoDB Streams are free"
 * (Amazon DynamoDB developer guide, "Evaluate your DynamoDB streams usage"),
 * and a stream costs nothing idle.
 */
const FREE_STREAM_POLLING = "no charge: Lambda's reads of a DynamoDB stream are free, and a stream has no fee while idle";

/** Paid WAF rule groups (a subscription on top of the rule): not priced here. */
const PAID_RULE_GROUPS = /BotControl|ATP|ACFP|AntiDDoS/;

function alarmMetrics(p: Properties): { metrics: number; highResolution: boolean } {
  if (Array.isArray(p.Metrics)) {
    const stats = (p.Metrics as Properties[]).filter((m) => m.MetricStat);
    return { metrics: stats.length, highResolution: stats.some((m) => Number(m.MetricStat.Period) < 60) };
  }
  return { metrics: 1, highResolution: Number(p.Period) < 60 };
}

/** The idle charge of one resource of `template`, or UnpricedResourceError. */
export function priceResource(id: string, resource: CfnResource, template: Template): Charge {
  const { Type: type } = resource;
  const p: Properties = resource.Properties ?? {};
  switch (type) {
    case 'AWS::CloudWatch::Alarm': {
      const expressions = Array.isArray(p.Metrics) ? (p.Metrics as Properties[]).map((m) => String(m.Expression ?? '')).join(' ') : '';
      if (p.ThresholdMetricId || /ANOMALY_DETECTION_BAND|SELECT/.test(expressions)) throw unpriced(id, type, 'an anomaly detection or Metrics Insights alarm is priced differently');
      const { metrics, highResolution } = alarmMetrics(p);
      const price = highResolution ? IDLE_PRICES.highResolutionAlarmMetric : IDLE_PRICES.alarmMetric;
      return { kind: 'monthly', item: 'alarms', usd: metrics * price.usd, units: { alarms: 1, 'alarm metrics': metrics, ...(highResolution ? { 'high-resolution alarms': 1 } : {}) } };
    }
    case 'AWS::CloudWatch::CompositeAlarm':
      return { kind: 'monthly', item: 'alarms', usd: IDLE_PRICES.compositeAlarm.usd, units: { alarms: 1, 'composite alarms': 1 } };
    case 'AWS::CloudWatch::Dashboard':
      return { kind: 'monthly', item: 'dashboards', usd: IDLE_PRICES.dashboard.usd, units: { dashboards: 1 } };
    case 'AWS::WAFv2::WebACL': {
      const rules = (p.Rules ?? []) as Properties[];
      const paid = rules.find((r) => PAID_RULE_GROUPS.test(String(r.Statement?.ManagedRuleGroupStatement?.Name ?? '')));
      if (paid) throw unpriced(id, type, `rule ${String(paid.Name)} is a paid managed rule group`);
      return { kind: 'monthly', item: 'webAcls', usd: IDLE_PRICES.webAcl.usd + rules.length * IDLE_PRICES.webAclRule.usd, units: { 'web ACLs': 1, rules: rules.length } };
    }
    case 'AWS::Lambda::EventSourceMapping': {
      const source = JSON.stringify(p.EventSourceArn ?? '');
      if (p.ProvisionedPollerConfig) throw unpriced(id, type, 'provisioned pollers bill by the hour');
      const [streamTable, attribute] = (p.EventSourceArn?.['Fn::GetAtt'] ?? []) as [string?, string?];
      if (attribute === 'StreamArn' && /^AWS::DynamoDB::(Global)?Table$/.test(template.Resources[streamTable ?? '']?.Type ?? '')) return free(FREE_STREAM_POLLING);
      const queue = Object.entries(template.Resources).find(([other, r]) => r.Type === 'AWS::SQS::Queue' && source.includes(`"${other}"`));
      if (!queue) throw unpriced(id, type, 'only an SQS queue or a DynamoDB stream in the same template is priced as a source');
      const requests = IDLE_POLL_REQUESTS_PER_MONTH;
      const fifo = queue[1].Properties?.FifoQueue === true;
      return { kind: 'monthly', item: 'pollers', usd: requests * (fifo ? IDLE_PRICES.sqsFifoRequest : IDLE_PRICES.sqsRequest).usd, units: { pollers: IDLE_POLLERS, requests, ...(fifo ? { 'FIFO pollers': IDLE_POLLERS } : {}) } };
    }
    case 'AWS::SecretsManager::Secret':
      return { kind: 'monthly', item: 'secrets', usd: IDLE_PRICES.secret.usd, units: { secrets: 1 } };
    case 'AWS::SSM::Parameter': {
      const tier = String(p.Tier ?? 'Standard');
      if (tier === 'Standard') return free('standard parameter');
      if (tier === 'Advanced') return { kind: 'monthly', item: 'parameters', usd: IDLE_PRICES.advancedParameter.usd, units: { parameters: 1 } };
      throw unpriced(id, type, `tier ${tier} may be advanced`);
    }
    case 'AWS::KMS::Key':
      // A rotated key is priced at what it comes to after its second rotation, and stays at (two years on, with yearly rotations).
      if (p.EnableKeyRotation) return { kind: 'monthly', item: 'kmsKeys', usd: IDLE_PRICES.kmsKey.usd + 2 * IDLE_PRICES.kmsRotation.usd, units: { keys: 1, 'rotated keys': 1 } };
      return { kind: 'monthly', item: 'kmsKeys', usd: IDLE_PRICES.kmsKey.usd, units: { keys: 1 } };
    case 'AWS::DynamoDB::GlobalTable':
    case 'AWS::DynamoDB::Table': {
      if (p.BillingMode !== 'PAY_PER_REQUEST') throw unpriced(id, type, 'provisioned capacity bills by the hour, used or not');
      if (Array.isArray(p.Replicas) && p.Replicas.length > 1) throw unpriced(id, type, 'a replica in another region stores and writes again');
      if (p.SSESpecification?.KMSMasterKeyId) throw unpriced(id, type, 'a customer managed key is priced as a KMS key');
      return { kind: 'storage', item: 'table' };
    }
    case 'AWS::Logs::LogGroup':
      return { kind: 'storage', item: 'logs' };
    case 'AWS::S3::Bucket':
      return { kind: 'storage', item: 's3' };
    case 'AWS::ApiGateway::Stage':
      if (p.CacheClusterEnabled) throw unpriced(id, type, "a stage's cache bills by the hour");
      return free('billed per request (no cache)');
    default: {
      const why = FREE[type];
      if (why === undefined) throw unpriced(id, type, 'no price and no reason it is free');
      return free(why);
    }
  }
}

/** Continuous backups are priced per GB too, when the table has them. */
function hasPitr(resource: CfnResource): boolean {
  const p = resource.Properties ?? {};
  const replicas = (p.Replicas ?? []) as Properties[];
  return Boolean(p.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled || replicas.some((r) => r.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled));
}

export interface StageIdleCost {
  /** USD a month per item, and the units counted for it (alarms, alarm metrics, rules…). */
  monthly: Partial<Record<Item, { usd: number; units: Record<string, number> }>>;
  total: number;
  /** Resources billed per GB kept, by kind: how many. */
  storage: Partial<Record<Storage, number>>;
  /** Resources with no monthly fee, by type: how many, and why. */
  free: Record<string, { count: number; why: string }>;
}

/** Prices every resource of the stage's templates (its stack, and any other stack the stage deploys). */
export function idleCost(templates: readonly Template[]): StageIdleCost {
  const cost: StageIdleCost = { monthly: {}, total: 0, storage: {}, free: {} };
  for (const template of templates) {
    for (const [id, resource] of Object.entries(template.Resources)) {
      const charge = priceResource(id, resource, template);
      if (charge.kind === 'monthly') {
        const line = (cost.monthly[charge.item] ??= { usd: 0, units: {} });
        line.usd += charge.usd;
        for (const [unit, n] of Object.entries(charge.units)) line.units[unit] = (line.units[unit] ?? 0) + n;
        cost.total += charge.usd;
      } else if (charge.kind === 'storage') {
        cost.storage[charge.item] = (cost.storage[charge.item] ?? 0) + 1;
        if (charge.item === 'table' && hasPitr(resource)) cost.storage.pitr = (cost.storage.pitr ?? 0) + 1;
      } else {
        const entry = (cost.free[resource.Type] ??= { count: 0, why: charge.why });
        entry.count++;
      }
    }
  }
  return cost;
}

/** The stages as docs/deploy.md deploys them (the placeholders filled), and production's optional Embed web ACL stack. */
export const IDLE_STAGES = {
  staging: { stage: 'staging', siteUrl: 'https://staging.events.example', alarmEmail: 'ops@events.example' },
  production: {
    stage: 'production',
    siteUrl: 'https://events.example',
    domainName: 'api.events.example',
    certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000',
    alarmEmail: 'oncall@events.example',
  },
} as const;

/** The stage's templates, synthesized as `cdk synth` does (cdk.json's flags) but without bundling: pricing needs no code. */
export function stageTemplates(context: Record<string, string>): Template[] {
  const outdir = mkdtempSync(join(tmpdir(), 'pe-idle-'));
  try {
    const app = new App({ outdir, context: { ...withCdkJsonContext(context), 'aws:cdk:bundling-stacks': [] } });
    buildApp(app);
    return app.synth().stacks.map((s) => s.template as Template);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

export const dollars = (usd: number) => `$${usd.toFixed(2)}`;
/** `1 alarm`, `54 alarm metrics`: units are named in the plural. */
const count = (n: number, unit: string) => `${n.toLocaleString('en-US')} ${n === 1 ? unit.replace(/s$/, '') : unit}`;
const counted = (units: Record<string, number>) =>
  Object.entries(units)
    .map(([unit, n]) => count(n, unit))
    .join(', ');

function priceOf(item: Item): string {
  switch (item) {
    case 'alarms':
      return `${dollars(IDLE_PRICES.alarmMetric.usd)} per alarm metric (a metric math alarm counts each metric it reads)`;
    case 'dashboards':
      return `${dollars(IDLE_PRICES.dashboard.usd)} per dashboard`;
    case 'webAcls':
      return `${dollars(IDLE_PRICES.webAcl.usd)} per web ACL, ${dollars(IDLE_PRICES.webAclRule.usd)} per rule`;
    case 'pollers':
      return `${dollars(IDLE_PRICES.sqsRequest.usd * 1e6)} per million requests (FIFO ${dollars(IDLE_PRICES.sqsFifoRequest.usd * 1e6)}); ${IDLE_POLLERS} long polls of at most 20 s at once per queue`;
    case 'secrets':
      return `${dollars(IDLE_PRICES.secret.usd)} per secret`;
    case 'parameters':
      return `${dollars(IDLE_PRICES.advancedParameter.usd)} per advanced parameter`;
    case 'kmsKeys':
      return `${dollars(IDLE_PRICES.kmsKey.usd)} per key, ${dollars(IDLE_PRICES.kmsRotation.usd)} more for each of its first two rotations`;
  }
}

const SOURCE: Record<Item, string> = {
  alarms: IDLE_PRICES.alarmMetric.source,
  dashboards: IDLE_PRICES.dashboard.source,
  webAcls: IDLE_PRICES.webAcl.source,
  pollers: `${IDLE_PRICES.sqsRequest.source}; AWS Lambda developer guide (SQS scaling)`,
  secrets: IDLE_PRICES.secret.source,
  parameters: IDLE_PRICES.advancedParameter.source,
  kmsKeys: IDLE_PRICES.kmsKey.source,
};

/**
 * The docs' table: a line per item any stage pays for, a column per stage,
 * the total; then production's optional Embed web ACL stack, and what is
 * billed per GB stored.
 */
export function idleCostMarkdown(stages: Record<string, StageIdleCost>, optional: Record<string, StageIdleCost> = {}): string {
  const names = Object.keys(stages);
  const title = (s: string) => s[0]!.toUpperCase() + s.slice(1);
  const items = (Object.keys(ITEMS) as Item[]).filter((item) => names.some((n) => stages[n]!.monthly[item]));
  const cell = (cost: StageIdleCost, item: Item) => {
    const line = cost.monthly[item];
    return line ? `${dollars(line.usd)} (${counted(line.units)})` : 'none';
  };
  const rows = [
    `| Billed every month, idle or not (${IDLE_PRICE_REGION}, prices as of ${IDLE_PRICES_AS_OF}) | ${names.map(title).join(' | ')} | Price | AWS pricing page |`,
    `|---|${names.map(() => '---').join('|')}|---|---|`,
    ...items.map((item) => `| ${ITEMS[item]} | ${names.map((n) => cell(stages[n]!, item)).join(' | ')} | ${priceOf(item)} | ${SOURCE[item]} |`),
    `| **Total a month** | ${names.map((n) => `**${dollars(stages[n]!.total)}**`).join(' | ')} | | |`,
    ...Object.entries(optional).map(
      ([label, cost]) =>
        `| ${label} | ${names.map((n) => (n === 'production' ? `+${dollars(cost.total)} (${(Object.keys(cost.monthly) as Item[]).map((i) => counted(cost.monthly[i]!.units)).join('; ')})` : '')).join(' | ')} | | |`,
    ),
  ];
  const storage = (Object.keys(STORAGE) as Storage[]).filter((s) => names.some((n) => stages[n]!.storage[s]));
  const price: Record<Storage, string> = {
    table: `${dollars(STORAGE_PRICES.tableGb.usd)} per GB`,
    pitr: `${dollars(STORAGE_PRICES.pitrGb.usd)} per GB`,
    logs: `${dollars(STORAGE_PRICES.logsGb.usd)} per GB`,
    s3: `${STORAGE_PRICES.s3Gb.usd.toFixed(3).replace(/^/, '$')} per GB`,
  };
  const source: Record<Storage, string> = {
    table: STORAGE_PRICES.tableGb.source,
    pitr: STORAGE_PRICES.pitrGb.source,
    logs: STORAGE_PRICES.logsGb.source,
    s3: STORAGE_PRICES.s3Gb.source,
  };
  const storageRows = [
    `| Billed per GB kept, a month | ${names.map(title).join(' | ')} | Price | AWS pricing page |`,
    `|---|${names.map(() => '---').join('|')}|---|---|`,
    ...storage.map((s) => `| ${STORAGE[s]} | ${names.map((n) => (stages[n]!.storage[s] ? count(stages[n]!.storage[s]!, s === 'pitr' ? 'tables' : STORAGE[s].split(' ').at(-1)!) : 'none')).join(' | ')} | ${price[s]} | ${source[s]} |`),
  ];
  const freeTypes = [...new Set(names.flatMap((n) => Object.keys(stages[n]!.free)))].sort();
  const freeLine = `No monthly fee (billed per use, or not at all), ${names.join('/')}: ${freeTypes
    .map((type) => `${type.replace(/^AWS::/, '')} (${names.map((n) => stages[n]!.free[type]?.count ?? 0).join('/')})`)
    .join(', ')}.`;
  return `${rows.join('\n')}\n\n${storageRows.join('\n')}\n\n${freeLine}\n`;
}

export interface StagesTemplates {
  staging: Template[];
  /** Production's stacks as `cdk deploy --all` ships them: the service and its us-east-1 Embed web ACL (embedWaf). */
  production: Template[];
}

/** Fresh templates of both stages. */
export function stagesTemplates(): StagesTemplates {
  return { staging: stageTemplates(IDLE_STAGES.staging), production: stageTemplates(IDLE_STAGES.production) };
}

/** Both stages' report. */
export function idleCostReport(templates: StagesTemplates = stagesTemplates()): string {
  return idleCostMarkdown({ staging: idleCost(templates.staging), production: idleCost(templates.production) });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(idleCostReport());
}
