/**
 * CloudFront in front of the Embed API (on by default in production), the optional
 * us-east-1 web ACL stack, and cfn-lint over every synthesized template.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { embedEdgeRoutes } from '../../lib/embed-cdn.js';
import { WIDGET_PATH_PATTERN } from '../../lib/embed-widget.js';
import { MESSAGES } from '../../lambdas/core/errors.js';
import { resourcePath, routes, type RouteDefinition } from '../../lambdas/routes.js';
import { resources, synthApp, synthesized, validationReport } from './support.js';

const ACL = 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/embed/0f3c1a2b-1111-2222-3333-444455556666';

describe('Embed API behind CloudFront (default in production)', () => {
  const { template } = synthesized({ stage: 'production' });

  it('has one behavior per Embed route, keyed on its path and exactly the query parameters its handler reads; honours the origin Cache-Control; compresses', () => {
    const policies = new Map(resources(template, 'AWS::CloudFront::CachePolicy').map(([id, p]) => [id, p.Properties.CachePolicyConfig]));
    for (const policy of policies.values()) {
      expect(policy).toMatchObject({ MinTTL: 0, DefaultTTL: 0, MaxTTL: 86_400 });
      expect(policy.ParametersInCacheKeyAndForwardedToOrigin).toMatchObject({
        HeadersConfig: { HeaderBehavior: 'none' },
        CookiesConfig: { CookieBehavior: 'none' },
        EnableAcceptEncodingGzip: true,
        EnableAcceptEncodingBrotli: true,
      });
    }
    const config = resources(template, 'AWS::CloudFront::Distribution')[0]![1].Properties.DistributionConfig;
    // The API's behaviors; the widget's files have their own, last (test/infra/embed-widget.test.ts).
    const apiBehaviors = config.CacheBehaviors.filter((b: { PathPattern: string }) => b.PathPattern !== WIDGET_PATH_PATTERN);
    expect(config.CacheBehaviors.map((b: { PathPattern: string }) => b.PathPattern).at(-1)).toBe(WIDGET_PATH_PATTERN);
    const keyOf = (b: { CachePolicyId: { Ref: string } }) => {
      const q = policies.get(b.CachePolicyId.Ref)!.ParametersInCacheKeyAndForwardedToOrigin.QueryStringsConfig;
      return q.QueryStringBehavior === 'none' ? [] : [...q.QueryStrings].sort();
    };
    // The route table's own parameters, route by route, in the order CloudFront matches them.
    const edge = embedEdgeRoutes('typed');
    expect(apiBehaviors.map((b: { PathPattern: string }) => b.PathPattern)).toEqual(edge.map((r) => r.pattern));
    expect(apiBehaviors.map(keyOf)).toEqual(edge.map((r) => r.query));
    expect(Object.fromEntries(edge.map((r) => [r.id, r.query]))).toEqual({
      embedGetEvent: [],
      embedGetEventFeed: [],
      embedGetUserEvents: ['from', 'limit', 'order', 'since', 'to'],
      embedGetUserFeed: [],
      embedGetPlaceFeed: ['city', 'country'],
      embedSearchEvents: ['city', 'country', 'cursor', 'from', 'limit', 'to'],
      embedOpenApi: [],
    });
    // Anything else (a gateway 404) forwards no query string.
    expect(keyOf(config.DefaultCacheBehavior)).toEqual([]);
    for (const b of [config.DefaultCacheBehavior, ...apiBehaviors]) {
      expect(b).toMatchObject({ Compress: true, ViewerProtocolPolicy: 'https-only', AllowedMethods: ['GET', 'HEAD', 'OPTIONS'], CachedMethods: ['GET', 'HEAD'] });
      expect(b.OriginRequestPolicyId).toBeUndefined();
    }
    expect(config.Logging).toMatchObject({ Prefix: 'embed/' });
  });

  it('matches every route to its own behavior: the first pattern (in order) that a path of the route matches is its own', () => {
    // CloudFront's path patterns: `*` is any run of characters, `/` included; the rest literal and case-sensitive.
    const matches = (pattern: string, path: string) => new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(path);
    const edge = embedEdgeRoutes('typed');
    const sample = (r: RouteDefinition) => resourcePath(r).replace(/\{\w+\}/g, 'x_1');
    for (const route of routes.filter((r) => r.surface === 'embed')) expect(edge.find((e) => matches(e.pattern, sample(route)))?.id).toBe(route.id);
    // The redirect of {eventId}.ics goes by the JSON route's behavior (no query), as its resource does.
    expect(edge.find((e) => matches(e.pattern, '/api/embed/v1/events/evt_x.ics'))?.id).toBe('embedGetEvent');
  });

  it('keeps no error answer: an Error Caching Minimum TTL of 0, and no page of its own, for every code CloudFront may cache', () => {
    const config = resources(template, 'AWS::CloudFront::Distribution')[0]![1].Properties.DistributionConfig;
    expect(config.CustomErrorResponses).toEqual([400, 403, 404, 405, 414, 500, 501, 502, 503, 504].map((ErrorCode) => ({ ErrorCode, ErrorCachingMinTTL: 0 })));
  });

  it('attaches the Embed web ACL by default: its ARN is a parameter without a default, so no deploy can leave it out', () => {
    const dist = resources(template, 'AWS::CloudFront::Distribution')[0]?.[1];
    expect(dist!.Properties.DistributionConfig.WebACLId).toEqual({ Ref: 'EmbedWebAclArn' });
    const parameter = template.toJSON().Parameters.EmbedWebAclArn;
    expect(parameter).toMatchObject({ Type: 'String' });
    expect(parameter.Default).toBeUndefined();
    const pattern = new RegExp(parameter.AllowedPattern as string);
    expect(pattern.test(ACL)).toBe(true);
    expect(pattern.test(ACL.replace('us-east-1', 'eu-west-1'))).toBe(false);
  });

  it('has the Embed REST API, at its stage, as the origin of every API behavior (the widget bucket is the other origin); no origin request policy adds headers', () => {
    const dist = resources(template, 'AWS::CloudFront::Distribution')[0]?.[1];
    const config = dist!.Properties.DistributionConfig;
    const api = config.Origins.filter((o: { CustomOriginConfig?: unknown }) => o.CustomOriginConfig);
    expect(api).toHaveLength(1);
    expect(config.Origins).toHaveLength(2);
    expect(JSON.stringify(api[0].DomainName)).toContain('EmbedApi');
    // The origin path is the stage, cut from the API's URL at deploy time.
    expect(JSON.stringify(api[0].OriginPath)).toContain('execute-api');
    for (const b of [config.DefaultCacheBehavior, ...config.CacheBehaviors.filter((b: { PathPattern: string }) => b.PathPattern !== WIDGET_PATH_PATTERN)]) expect(b.TargetOriginId).toBe(api[0].Id);
  });

  it('gives the edge address as EmbedApiUrl and keeps the origin address as EmbedOriginUrl', () => {
    expect(JSON.stringify(template.findOutputs('EmbedApiUrl'))).toContain('DomainName');
    expect(template.findOutputs('EmbedOriginUrl')).not.toEqual({});
  });
});

describe('context', () => {
  it('embedCdn=false leaves the distribution out', () => {
    const { template } = synthesized({ embedCdn: 'false' });
    template.resourceCountIs('AWS::CloudFront::Distribution', 0);
    expect(template.findOutputs('EmbedOriginUrl')).toEqual({});
  });

  it('embedWebAclArn attaches an existing us-east-1 web ACL, and nag needs no WAF acknowledgement then', () => {
    const { template, outdir } = synthesized({ embedWebAclArn: ACL });
    template.hasResourceProperties('AWS::CloudFront::Distribution', { DistributionConfig: Match.objectLike({ WebACLId: ACL }) });
    const report = JSON.parse(readFileSync(validationReport(outdir), 'utf8')) as { pluginReports: { violations: unknown[]; suppressedViolations: { ruleName?: string; acknowledgedId: string }[] }[] };
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
    expect(JSON.stringify(report.pluginReports.flatMap((r) => r.suppressedViolations))).not.toContain('CFR2');
  });

  it('refuses a web ACL ARN outside us-east-1 or without the distribution', () => {
    expect(() => synthApp({ embedWebAclArn: ACL.replace('us-east-1', 'eu-west-1') })).toThrow(/embedWebAclArn/);
    expect(() => synthApp({ embedCdn: 'false', embedWebAclArn: ACL })).toThrow(/embedWebAclArn/);
  });

  it('embedWaf (production by default) adds a us-east-1 stack with a rate-based rule per client IP, answering the Embed 429 envelope with CORS', () => {
    const { assembly } = synthesized({ stage: 'production', embedWafRateLimit: '500' });
    const waf = assembly.getStackByName('PublicEventsEmbedWaf-production');
    expect(waf.environment.region).toBe('us-east-1');
    // The service stack depends on it: `cdk deploy --all` deploys the web ACL first.
    expect(assembly.getStackByName('PublicEvents-production').dependencies.map((d) => d.id)).toContain(waf.id);
    const acl = Template.fromJSON(waf.template as Record<string, unknown>);
    acl.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'CLOUDFRONT',
      Rules: [
        Match.objectLike({
          Action: {
            Block: {
              CustomResponse: {
                ResponseCode: 429,
                CustomResponseBodyKey: 'TooManyRequests',
                ResponseHeaders: [
                  { Name: 'access-control-allow-origin', Value: '*' },
                  { Name: 'cache-control', Value: 'no-store' },
                ],
              },
            },
          },
          Statement: { RateBasedStatement: { Limit: 500, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } },
        }),
      ],
    });
    const content = Object.values(acl.findResources('AWS::WAFv2::WebACL'))[0]!.Properties.CustomResponseBodies.TooManyRequests.Content as string;
    expect(JSON.parse(content)).toEqual({ success: false, message: MESSAGES.tooManyRequests });
    expect(synthesized({ embedWaf: 'true', embedCdn: 'true' }).assembly.stacks.map((s) => s.stackName)).toContain('PublicEventsEmbedWaf-staging');
  });

  it('embedWaf=false in production leaves the distribution without a web ACL (and nag needs its acknowledgement)', () => {
    const { template, assembly } = synthesized({ stage: 'production', embedWaf: 'false' });
    expect(resources(template, 'AWS::CloudFront::Distribution')[0]![1].Properties.DistributionConfig.WebACLId).toBeUndefined();
    expect(template.toJSON().Parameters?.EmbedWebAclArn).toBeUndefined();
    expect(assembly.stacks.map((s) => s.stackName)).toEqual(['PublicEvents-production']);
  });
});

describe('cfn-lint on the synthesized templates', () => {
  // cfn-lint is a Python tool, not an npm package: not every machine has it.
  const probe = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  const available = probe.status === 0;

  // Always runs: lints where cfn-lint exists, and otherwise says so and asserts the absence (nothing is skipped).
  it(available ? 'finds no error and no warning but W3005' : 'is not installed here: the templates are not linted, and the test says so', () => {
    if (!available) {
      console.warn('NOTICE: cfn-lint is not installed here, so the synthesized templates were NOT linted (pip install cfn-lint to run the check)');
      // Absent for real: it could not be started, or it did not answer --version.
      expect(probe.error !== undefined || probe.status !== 0).toBe(true);
      return;
    }
    // Production with both web ACLs, and staging with the other switches (its defaults: no distribution, no web ACL).
    const production = synthesized({ stage: 'production', embedWaf: 'true' }).outdir;
    const staging = synthesized({
      quotaHeaders: 'context',
      alarmEmail: 'ops@example.com',
      domainName: 'api.example.com',
      certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
    }).outdir;
    const templates = [production, staging].flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith('.template.json')).map((f) => join(dir, f)));
    expect(templates).toHaveLength(3);
    const run = spawnSync('cfn-lint', ['--format', 'json', ...templates], { encoding: 'utf8' });
    const matches = JSON.parse(run.stdout || '[]') as { Rule: { Id: string }; Message: string }[];
    // W3005: route-function.ts makes each function depend on its role's policy explicitly, which cfn-lint calls redundant.
    expect(matches.filter((m) => m.Rule.Id !== 'W3005').map((m) => `${m.Rule.Id} ${m.Message}`)).toEqual([]);
  }, 120_000);
});
