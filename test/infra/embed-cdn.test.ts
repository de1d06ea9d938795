/**
 * CloudFront in front of the Embed API (on by default in production), the optional
 * us-east-1 web ACL stack, and cfn-lint over every synthesized template.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { resources, synthApp, synthesized, validationReport } from './support.js';

const ACL = 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/embed/0f3c1a2b-1111-2222-3333-444455556666';

describe('Embed API behind CloudFront (default in production)', () => {
  const { template } = synthesized({ stage: 'production' });

  it('keys the cache on path and query string only, honours the origin Cache-Control, compresses', () => {
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: {
        MinTTL: 0,
        DefaultTTL: 0,
        MaxTTL: 86_400,
        ParametersInCacheKeyAndForwardedToOrigin: {
          HeadersConfig: { HeaderBehavior: 'none' },
          CookiesConfig: { CookieBehavior: 'none' },
          QueryStringsConfig: { QueryStringBehavior: 'all' },
          EnableAcceptEncodingGzip: true,
          EnableAcceptEncodingBrotli: true,
        },
      },
    });
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultCacheBehavior: Match.objectLike({
          Compress: true,
          ViewerProtocolPolicy: 'https-only',
          AllowedMethods: ['GET', 'HEAD', 'OPTIONS'],
          CachedMethods: ['GET', 'HEAD'],
        }),
        Logging: Match.objectLike({ Prefix: 'embed/' }),
      }),
    });
  });

  it('has the Embed REST API, at its stage, as its only origin; no origin request policy adds headers', () => {
    const dist = resources(template, 'AWS::CloudFront::Distribution')[0]?.[1];
    const config = dist!.Properties.DistributionConfig;
    expect(config.Origins).toHaveLength(1);
    expect(JSON.stringify(config.Origins[0].DomainName)).toContain('EmbedApi');
    // The origin path is the stage, cut from the API's URL at deploy time.
    expect(JSON.stringify(config.Origins[0].OriginPath)).toContain('execute-api');
    expect(config.DefaultCacheBehavior.OriginRequestPolicyId).toBeUndefined();
    expect(config.WebACLId).toBeUndefined();
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

  it('embedWaf=true adds a us-east-1 stack with a rate-based rule per client IP', () => {
    const { assembly } = synthesized({ embedWaf: 'true', embedWafRateLimit: '500' });
    const waf = assembly.getStackByName('PublicEventsEmbedWaf-staging');
    expect(waf.environment.region).toBe('us-east-1');
    Template.fromJSON(waf.template as Record<string, unknown>).hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'CLOUDFRONT',
      Rules: [Match.objectLike({ Action: { Block: {} }, Statement: { RateBasedStatement: { Limit: 500, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } } })],
    });
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
