/** The keyless-flood line of the cost model (scripts/flood-cost.ts, issue 22). */
import { describe, expect, it } from '@jest/globals';
import { PRICES } from '../../scripts/cost-model.js';
import { FLOOD, embedFloodCostPerMillion, embedFloodScenarios, floodCostPerMillion, floodScenarios } from '../../scripts/flood-cost.js';

const profile = { authorizer: { readUnits: 0, billedMs: 2, logBytes: 500 }, accessLogBytes: 400, answerBytes: 500 };
const limits = { throttle: { rateLimit: 100, burstLimit: 200 }, wafLimit: 1000 };

describe('floodCostPerMillion', () => {
  it('adds up, by hand, with no limit: every request meets API Gateway and the authorizer', () => {
    const cost = floodCostPerMillion(profile, { gateway: 1, authorizer: 1, waf: false });
    expect(cost.apiGateway).toBeCloseTo(3.5, 9);
    // $0.20 per million invocations + 2 ms at 0.5 GB.
    expect(cost.lambda).toBeCloseTo(0.2 + 0.002 * 0.5 * PRICES.lambdaArmGbSecond.usd * 1e6, 9);
    expect(cost.dynamodb).toBe(0);
    expect(cost.logs).toBeCloseTo((900 / 1e9) * 0.5 * 1e6, 9);
    expect(cost.dataTransfer).toBeCloseTo((500 / 1e9) * 0.09 * 1e6, 9);
    expect(cost.waf).toBe(0);
    expect(cost.total).toBeCloseTo(cost.apiGateway + cost.lambda + cost.logs + cost.dataTransfer, 9);
  });

  it('charges the web ACL for every request it inspects, and API Gateway only for what it lets through', () => {
    const cost = floodCostPerMillion(profile, { gateway: 0.002, authorizer: 0.002, waf: true });
    expect(cost.waf).toBeCloseTo(0.6, 9);
    expect(cost.apiGateway).toBeCloseTo(0.007, 9);
  });

  it('refuses shares outside [0, 1], and an authorizer seeing more than API Gateway admits', () => {
    expect(() => floodCostPerMillion(profile, { gateway: 1.5, authorizer: 1, waf: false })).toThrow(RangeError);
    expect(() => floodCostPerMillion(profile, { gateway: 0.1, authorizer: 0.2, waf: false })).toThrow(RangeError);
  });
});

describe('floodScenarios', () => {
  it('lets the throttle admit its burst and rate over the flood, and one address its web ACL limit per five minutes', () => {
    const [none, throttle, oneAddress, many] = floodScenarios(limits).map((s) => s.admitted);
    expect(none).toEqual({ gateway: 1, authorizer: 1, waf: false });
    expect(throttle).toEqual({ gateway: 1, authorizer: (100 * FLOOD.seconds + 200) / FLOOD.requests, waf: false });
    expect(oneAddress).toEqual({ gateway: 0.002, authorizer: 0.002, waf: true });
    expect(many).toEqual({ gateway: 1, authorizer: throttle!.authorizer, waf: true });
  });

  it('makes each limit cheaper than none for keyless requests, the one-address web ACL cheapest', () => {
    const totals = floodScenarios(limits).map((s) => floodCostPerMillion(profile, s.admitted).total);
    expect(totals[1]).toBeLessThan(totals[0]!);
    expect(totals[2]).toBeLessThan(totals[1]!);
  });
});

describe('embedFloodCostPerMillion (issue 58, s4)', () => {
  const route = { readUnits: 1, billedMs: 8, logBytes: 900 };
  const embed = { route, accessLogBytes: 400, edgeBytes: 1000 };
  const limits = { throttle: { rateLimit: 200, burstLimit: 400 }, wafLimit: 1000, maxAgeSeconds: 60 };

  it('bills CloudFront for every request, API Gateway for the misses, the Lambda and DynamoDB for what the throttle admits', () => {
    const cost = embedFloodCostPerMillion(embed, { origin: 1, lambda: 0.1, waf: false });
    expect(cost.cloudFront).toBeCloseTo(1 + (1000 / 1e9) * 0.085 * 1e6, 9);
    expect(cost.apiGateway).toBeCloseTo(3.5, 9);
    expect(cost.dynamodb).toBeCloseTo(0.1 * PRICES.dynamoReadRequestUnit.usd * 1e6, 9);
    expect(cost.logs).toBeCloseTo(((400 + 0.1 * 900) / 1e9) * 0.5 * 1e6, 9);
    expect(cost.waf).toBe(0);
    expect(cost.total).toBeCloseTo(cost.cloudFront + cost.apiGateway + cost.lambda + cost.dynamodb + cost.logs, 9);
    expect(() => embedFloodCostPerMillion(embed, { origin: 0.1, lambda: 0.2, waf: false })).toThrow(RangeError);
  });

  it('before the fix every request misses and the throttle admits 12 %; after, one URL misses once a max-age; the web ACL lets one address through 1000 per 5 minutes', () => {
    const [before, oneUrl, oneAddress, many] = embedFloodScenarios(limits).map((s) => s.admitted);
    expect(before).toEqual({ origin: 1, lambda: (200 * 600 + 400) / 1e6, waf: false });
    expect(oneUrl).toEqual({ origin: 10 / 1e6, lambda: 10 / 1e6, waf: false });
    expect(oneAddress).toEqual({ origin: 2000 / 1e6, lambda: 2000 / 1e6, waf: true });
    expect(many).toEqual({ ...before, waf: true });
    const cost = (a: typeof before) => embedFloodCostPerMillion(embed, a!).total;
    expect(cost(oneUrl)).toBeLessThan(cost(before) / 4);
    expect(cost(oneAddress)).toBeLessThan(cost(before) / 2);
  });
});
