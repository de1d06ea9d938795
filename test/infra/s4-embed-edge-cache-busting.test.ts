/**
 * Review s4: the edge does not bound what one client sends to the Embed
 * origin, so one client can deny the Embed API to every host page (and pay
 * for it with the operator's money).
 *
 * cdk-nag's CFR2 acknowledgement (lib/nag.ts) says "the edge cache and the
 * stage throttle bound the origin load meanwhile". The edge cache does not:
 * - the cache policy puts every query string in the key and forwards it
 *   (QueryStringBehavior `all`: AWS, CachePolicyQueryStringsConfig), and
 * - every Embed route but the place feed ignores a parameter it does not
 *   read (lambdas/core/params.ts, parseParams), answering the very same
 *   cacheable 200 (the origin fact below),
 * so `?_=1`, `?_=2`, … are all misses that reach API Gateway, Lambda and
 * DynamoDB. Nothing else bounds one client: the Embed web ACL is opt-in
 * (`embedWaf` false in every stage, production included, where the Public
 * API's is on), and CloudFront has no per-viewer limit of its own. What is
 * left is the stage throttle (200 rps, burst 400), a token bucket for all
 * callers of the stage or method, not per client (AWS, "How throttling limit
 * settings are applied"): a client sustaining more than that takes every
 * token, and every other viewer's miss (each widget URL misses once a minute
 * per edge by design: `from` is "now" rounded to the minute) answers 429
 * THROTTLED, which CloudFront does not cache either, so the widget says
 * "Events could not be loaded: Too many requests." on every host page while
 * the flood lasts. At the project's own per-million prices for Embed data
 * routes behind CloudFront at 0 % hits ($5.39 to $5.87, docs/performance.md),
 * 200 rps is 17.3 million origin requests a day, about $93 to $101 a day per
 * throttled method.
 *
 * Drop into test/infra/ (it reads the templates with test/infra/support.ts;
 * the origin fact uses the local server).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildDocument } from '../../lambdas/openapi/document.js';
import { DEFAULT_DOCUMENT_OPTIONS } from '../../local/schema-files.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { resources, synthesized } from './support.js';

/** Every query parameter an Embed route reads, from the Embed OpenAPI document. */
function embedQueryParameters(): string[] {
  const document = buildDocument('embed', DEFAULT_DOCUMENT_OPTIONS) as unknown as { paths: Record<string, Record<string, { parameters?: { in?: string; name?: string }[] }>> };
  const names = new Set<string>();
  for (const item of Object.values(document.paths)) for (const op of Object.values(item)) for (const p of op.parameters ?? []) if (p.in === 'query' && p.name) names.add(p.name);
  return [...names].sort();
}

describe('the origin (fact)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.close());

  it('answers a parameter no route reads with the same cacheable 200 as without it', async () => {
    const plain = await get(`${server.embedBaseUrl}/users/alice/events?limit=3`);
    const busted = await get(`${server.embedBaseUrl}/users/alice/events?limit=3&_=8431`);
    expect(busted.status).toBe(200);
    expect(busted.text).toBe(plain.text);
    expect(busted.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
  });
});

describe('the Embed distribution, production defaults', () => {
  const { template, assembly } = synthesized({ stage: 'production' });

  // Adapted at adoption: one cache behavior per route, each keyed on that route's own parameters (stricter than one
  // allow-list of every Embed route's), so the union over the behaviors is what the reproducer asked of its one policy.
  it('keys the cache on, and forwards, only the query parameters the Embed routes read', () => {
    expect(embedQueryParameters()).toEqual(expect.arrayContaining(['city', 'country', 'cursor', 'from', 'limit', 'order', 'since', 'to']));
    const policies = new Map(resources(template, 'AWS::CloudFront::CachePolicy').map(([id, p]) => [id, p.Properties.CachePolicyConfig.ParametersInCacheKeyAndForwardedToOrigin.QueryStringsConfig]));
    const config = resources(template, 'AWS::CloudFront::Distribution')[0]![1].Properties.DistributionConfig;
    const behaviors = [config.DefaultCacheBehavior, ...config.CacheBehaviors] as { PathPattern?: string; CachePolicyId: { Ref: string } | string }[];
    // Adapted again (issue 58 item 5): the widget's files have their own behavior, on AWS's managed CachingOptimized
    // policy, which keys on and forwards no query string (lib/embed-widget.ts; its id from AWS's managed cache policies).
    const managed: Record<string, { QueryStringBehavior: string }> = { '658327ea-f89d-4fab-a63d-7e88639e58f6': { QueryStringBehavior: 'none' } };
    const keyed = behaviors.map((b) => (typeof b.CachePolicyId === 'string' ? managed[b.CachePolicyId] : policies.get(b.CachePolicyId.Ref))!);
    for (const q of keyed) expect(['whitelist', 'none']).toContain(q.QueryStringBehavior);
    expect([...new Set(keyed.flatMap((q) => (q.QueryStringBehavior === 'whitelist' ? q.QueryStrings : [])))].sort()).toEqual(embedQueryParameters());
  });

  it('bounds what one client can send through the edge (a rate-based rule on the distribution)', () => {
    const dist = resources(template, 'AWS::CloudFront::Distribution')[0]?.[1];
    const withAcl = dist!.Properties.DistributionConfig.WebACLId !== undefined;
    const wafStack = assembly.stacks.some((s) => s.stackName.startsWith('PublicEventsEmbedWaf-'));
    expect({ withAcl, wafStack }).not.toEqual({ withAcl: false, wafStack: false });
  });
});
