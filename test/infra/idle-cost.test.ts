/**
 * The operator's numbers come from the templates: docs/performance.md's idle
 * cost table is what `npm run idle-cost` prints for the synthesized stages,
 * and docs/deploy.md's count of Lambda functions is the templates' count.
 * A resource added to the stack changes the printed table (so this page's
 * test fails until the page follows), or stops the report until it is priced.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { routes } from '../../lambdas/routes.js';
import {
  IDLE_POLL_REQUESTS_PER_MONTH,
  UnpricedResourceError,
  idleCost,
  idleCostMarkdown,
  idleCostReport,
  priceResource,
  stagesTemplates,
  type CfnResource,
  type StagesTemplates,
  type Template,
} from '../../scripts/idle-cost.js';
import { ROOT } from '../support/process.js';

const page = (name: string) => readFileSync(`${ROOT}docs/${name}`, 'utf8');
let templates: StagesTemplates;
beforeAll(() => {
  templates = stagesTemplates();
}, 120_000);

const ofType = (ts: readonly Template[], type: string) => ts.flatMap((t) => Object.values(t.Resources).filter((r) => r.Type === type));
const withResource = (ts: readonly Template[], id: string, resource: CfnResource): Template[] => [{ Resources: { ...ts[0]!.Resources, [id]: resource } }, ...ts.slice(1)];

describe('docs/performance.md: what a stage costs a month with no traffic', () => {
  it('is the table npm run idle-cost prints for the synthesized stages', () => {
    const report = idleCostReport(templates);
    const state = page('performance.md').includes(report) ? 'current' : `stale: run \`npm run idle-cost\` and put what it prints in docs/performance.md in place of the old table:\n${report}`;
    expect(state).toBe('current');
    // The shown command prints it (the script's main is this function).
    expect(readFileSync(`${ROOT}scripts/idle-cost.ts`, 'utf8')).toContain('process.stdout.write(idleCostReport());');
  });

  it('counts alarm metrics from the templates: one per alarm, each metric of a metric math alarm', () => {
    for (const stage of [templates.staging, templates.production]) {
      const alarms = ofType(stage, 'AWS::CloudWatch::Alarm');
      const metrics = alarms.reduce((n, a) => n + (Array.isArray(a.Properties?.Metrics) ? (a.Properties.Metrics as Array<{ MetricStat?: unknown }>).filter((m) => m.MetricStat).length : 1), 0);
      expect(idleCost(stage).monthly.alarms).toEqual({ usd: expect.closeTo(metrics * 0.1, 9), units: { alarms: alarms.length, 'alarm metrics': metrics } });
    }
  });

  it("prices the pollers of each SQS event source (the ingest's, the webhooks' fan-out and FIFO wake-ups at FIFO's rate), the stream's as free, and production alone pays its two web ACLs (Public, Embed)", () => {
    expect(idleCost(templates.staging).monthly.pollers).toEqual({ usd: expect.closeTo(IDLE_POLL_REQUESTS_PER_MONTH * (2 * 0.4 + 0.5) / 1e6, 9), units: { pollers: 15, requests: 3 * IDLE_POLL_REQUESTS_PER_MONTH, 'FIFO pollers': 5 } });
    const mappings = ofType(templates.staging, 'AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(4);
    expect(idleCost(templates.staging).free['AWS::Lambda::EventSourceMapping']).toEqual({ count: 1, why: expect.stringMatching(/stream/) });
    // The webhooks' secrets key, rotated yearly: priced at its cap, reached at its second rotation.
    expect(idleCost(templates.staging).monthly.kmsKeys).toEqual({ usd: 3, units: { keys: 1, 'rotated keys': 1 } });
    expect(idleCost(templates.staging).monthly.webAcls).toBeUndefined();
    expect(idleCost(templates.production).monthly.webAcls).toEqual({ usd: 12, units: { 'web ACLs': 2, rules: 2 } });
    // The Embed web ACL stack (us-east-1) holds that web ACL and nothing else.
    expect(templates.production.map((t) => Object.values(t.Resources).map((r) => r.Type)).filter((types) => !types.includes('AWS::Lambda::Function'))).toEqual([['AWS::WAFv2::WebACL']]);
  });

  it('shows a resource added later: a secret adds its fee, a standard parameter is listed free, an advanced one adds its fee', () => {
    const base = idleCost(templates.production);
    const table = (ts: Template[]) => idleCostMarkdown({ staging: idleCost(templates.staging), production: idleCost(ts) });
    const secret = withResource(templates.production, 'FeedCursorKey', { Type: 'AWS::SecretsManager::Secret', Properties: {} });
    expect(idleCost(secret).total).toBeCloseTo(base.total + 0.4, 9);
    expect(table(secret)).not.toBe(table(templates.production));
    const standard = withResource(templates.production, 'FeedCursorKey', { Type: 'AWS::SSM::Parameter', Properties: { Type: 'String', Value: 'x' } });
    expect(idleCost(standard).total).toBeCloseTo(base.total, 9);
    expect(table(standard)).toContain('SSM::Parameter (0/1)');
    const advanced = withResource(templates.production, 'FeedCursorKey', { Type: 'AWS::SSM::Parameter', Properties: { Tier: 'Advanced' } });
    expect(idleCost(advanced).total).toBeCloseTo(base.total + 0.05, 9);
  });

  it.each<[string, CfnResource]>([
    ['a type it does not know', { Type: 'AWS::Route53::HostedZone', Properties: {} }],
    ['a provisioned table', { Type: 'AWS::DynamoDB::Table', Properties: { BillingMode: 'PROVISIONED' } }],
    ["a stage's cache", { Type: 'AWS::ApiGateway::Stage', Properties: { CacheClusterEnabled: true } }],
    ['provisioned pollers', { Type: 'AWS::Lambda::EventSourceMapping', Properties: { EventSourceArn: { 'Fn::GetAtt': ['Q', 'Arn'] }, ProvisionedPollerConfig: { MinimumPollers: 2 } } }],
    ['an anomaly detection alarm', { Type: 'AWS::CloudWatch::Alarm', Properties: { ThresholdMetricId: 'ad1', Metrics: [] } }],
    ['a paid managed rule group', { Type: 'AWS::WAFv2::WebACL', Properties: { Rules: [{ Name: 'Bots', Statement: { ManagedRuleGroupStatement: { Name: 'AWSManagedRulesBotControlRuleSet' } } }] } }],
    ['an intelligent-tiering parameter', { Type: 'AWS::SSM::Parameter', Properties: { Tier: 'Intelligent-Tiering' } }],
  ])('stops at %s, naming the resource, until it is priced', (_, resource) => {
    const template: Template = { Resources: { Q: { Type: 'AWS::SQS::Queue' }, Added: resource } };
    expect(() => priceResource('Added', resource, template)).toThrow(UnpricedResourceError);
    expect(() => idleCost([template])).toThrow(/^Added \(AWS::[\w:]+\) has no idle price: .*Price it in scripts\/idle-cost\.ts/);
  });
});

describe("docs/deploy.md's count of Lambda functions", () => {
  const UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];
  const WORDS = [...UNITS, ...UNITS.slice(1, 10).map((u) => `twenty-${u}`), 'thirty'];
  const number = (word: string) => WORDS.indexOf(word.toLowerCase());

  it('is the templates\' count, and its parts are the route table\'s', () => {
    const text = page('deploy.md').replace(/\s+/g, ' ');
    const m = /([\w-]+) Lambda functions \((\w+) Public data routes: (\w+) reads and (\w+) changes feeds; (\w+) Embed routes, (\w+) JSON and (\w+) iCalendar; the two OpenAPI documents, the authorizer, the old-prefix redirect, the ingest function, key management, the webhooks' fan-out and delivery;/.exec(text);
    expect(m).not.toBeNull();
    const [functions, publicData, reads, feeds, embed, json, ical] = m!.slice(1).map(number);
    // Where the Embed distribution is (production by default), one more: the widget's copier, run at deploy time only.
    const copier = /where the Embed distribution is \(production by default\), one more \(([\w-]+) in all\) that runs only at deploy time/.exec(text);
    expect(number(copier?.[1] ?? '')).toBe(functions! + 1);
    expect(ofType(templates.staging, 'AWS::Lambda::Function')).toHaveLength(functions!);
    expect(ofType(templates.production, 'AWS::Lambda::Function')).toHaveLength(functions! + 1);
    const keyed = routes.filter((r) => r.surface === 'public' && r.auth === 'key');
    const embedData = routes.filter((r) => r.surface === 'embed' && r.handler !== 'openapi');
    expect({ publicData, reads, feeds, embed, json, ical }).toEqual({
      publicData: keyed.length,
      reads: keyed.filter((r) => !r.path.startsWith('/changes/')).length,
      feeds: keyed.filter((r) => r.path.startsWith('/changes/')).length,
      embed: embedData.length,
      json: embedData.filter((r) => !r.path.endsWith('.ics')).length,
      ical: embedData.filter((r) => r.path.endsWith('.ics')).length,
    });
    // The rest: two documents, the authorizer, the redirect, the ingest, the key-management and the webhooks' two functions.
    expect(functions).toBe(publicData! + embed! + 2 + 6);
  });
});
