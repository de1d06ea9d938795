/** The cost model `npm run bench` prints docs/performance.md's cost table with (scripts/cost-model.ts). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  CLOUDFRONT_MIN_COMPRESS_BYTES,
  LAMBDA_MEMORY_MB,
  PRICES,
  billedDurationMs,
  costPerMillion,
  edgeBodyBytes,
  usd,
  type InvocationProfile,
  type RequestProfile,
} from '../../scripts/cost-model.js';

const ROOT = new URL('../../', import.meta.url).pathname;

const invocation = fc.record({
  readUnits: fc.double({ min: 0, max: 1000, noNaN: true }),
  billedMs: fc.integer({ min: 1, max: 6000 }),
  logBytes: fc.integer({ min: 0, max: 10_000 }),
}) satisfies fc.Arbitrary<InvocationProfile>;
const profile: fc.Arbitrary<RequestProfile> = fc.record(
  {
    route: invocation,
    authorizer: invocation,
    accessLogBytes: fc.integer({ min: 0, max: 2000 }),
    originBytes: fc.integer({ min: 0, max: 6_000_000 }),
    edgeBytes: fc.integer({ min: 0, max: 6_000_000 }),
  },
  { requiredKeys: ['route', 'accessLogBytes', 'originBytes', 'edgeBytes'] },
);
const ratio = fc.double({ min: 0, max: 1, noNaN: true });
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

describe('costPerMillion', () => {
  it('adds up, by hand, for one keyed request', () => {
    // 1.5 RRU and 10 ms in the route function, 1 RRU and 5 ms in the authorizer, 300 + 300 + 400 log bytes, 4,000 bytes out.
    const cost = costPerMillion({
      route: { readUnits: 1.5, billedMs: 10, logBytes: 300 },
      authorizer: { readUnits: 1, billedMs: 5, logBytes: 300 },
      accessLogBytes: 400,
      originBytes: 4000,
      edgeBytes: 1000,
    });
    expect(cost.apiGateway).toBeCloseTo(3.5, 9);
    // 2 invocations × $0.20/M + (15 ms × 0.5 GB = 0.0075 GB-s) × $0.0000133334 × 1M.
    expect(cost.lambda).toBeCloseTo(0.4 + 0.0075 * 0.0000133334 * 1e6, 9);
    expect(cost.dynamodb).toBeCloseTo(2.5 * 0.125, 9);
    // 1,000 bytes × 1M = 1 GB at $0.50; 4,000 bytes × 1M = 4 GB at $0.09.
    expect(cost.logs).toBeCloseTo(0.5, 9);
    expect(cost.dataTransfer).toBeCloseTo(0.36, 9);
    expect(cost.cloudFront).toBe(0);
    expect(cost.total).toBeCloseTo(3.5 + 0.4 + 0.1000005 + 0.3125 + 0.5 + 0.36, 6);
  });

  it('behind CloudFront: every request pays the edge, only misses pay the origin, nothing pays API Gateway transfer', () => {
    const p: RequestProfile = { route: { readUnits: 1, billedMs: 6, logBytes: 300 }, accessLogBytes: 400, originBytes: 5000, edgeBytes: 2000 };
    const direct = costPerMillion(p);
    const edge = costPerMillion(p, { cloudFrontHitRatio: 0.9 });
    expect(edge.cloudFront).toBeCloseTo(1 + 2 * 0.085, 9);
    expect(edge.apiGateway).toBeCloseTo(0.1 * direct.apiGateway, 9);
    expect(edge.lambda).toBeCloseTo(0.1 * direct.lambda, 9);
    expect(edge.dataTransfer).toBe(0);
  });

  it('the total is the sum of its parts, and no part is negative', () => {
    fc.assert(
      fc.property(profile, fc.option(ratio, { nil: undefined }), (p, hit) => {
        const c = costPerMillion(p, { cloudFrontHitRatio: hit });
        const parts = [c.apiGateway, c.lambda, c.dynamodb, c.logs, c.dataTransfer, c.cloudFront];
        expect(parts.every((x) => x >= 0)).toBe(true);
        expect(close(c.total, parts.reduce((a, b) => a + b, 0))).toBe(true);
      }),
    );
  });

  it('a higher hit ratio never costs more, and at 100 % only CloudFront is paid', () => {
    fc.assert(
      fc.property(profile, ratio, ratio, (p, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(costPerMillion(p, { cloudFrontHitRatio: hi }).total).toBeLessThanOrEqual(costPerMillion(p, { cloudFrontHitRatio: lo }).total + 1e-9);
        const all = costPerMillion(p, { cloudFrontHitRatio: 1 });
        expect([all.apiGateway, all.lambda, all.dynamodb, all.logs, all.dataTransfer]).toEqual([0, 0, 0, 0, 0]);
        expect(close(all.total, all.cloudFront)).toBe(true);
      }),
    );
  });

  it('at 0 % hits CloudFront adds its own price to the origin cost and replaces API Gateway transfer', () => {
    fc.assert(
      fc.property(profile, (p) => {
        const direct = costPerMillion(p);
        const miss = costPerMillion(p, { cloudFrontHitRatio: 0 });
        expect(close(miss.total, direct.total - direct.dataTransfer + miss.cloudFront)).toBe(true);
      }),
    );
  });

  it('the authorizer only ever adds', () => {
    fc.assert(
      fc.property(profile, invocation, fc.option(ratio, { nil: undefined }), (p, auth, hit) => {
        const { authorizer: _ignored, ...bare } = p;
        expect(costPerMillion({ ...bare, authorizer: auth }, { cloudFrontHitRatio: hit }).total).toBeGreaterThanOrEqual(
          costPerMillion(bare, { cloudFrontHitRatio: hit }).total,
        );
      }),
    );
  });

  it('rejects a hit ratio outside [0, 1]', () => {
    const p: RequestProfile = { route: { readUnits: 1, billedMs: 1, logBytes: 0 }, accessLogBytes: 0, originBytes: 0, edgeBytes: 0 };
    for (const bad of [-0.1, 1.01, Number.NaN]) expect(() => costPerMillion(p, { cloudFrontHitRatio: bad })).toThrow(RangeError);
  });
});

describe('billedDurationMs', () => {
  it('scales own CPU time, adds the assumed round trips and bills whole milliseconds, at least one', () => {
    const assumptions = { dynamoRoundTripMs: 5, cpuScale: 3 };
    expect(billedDurationMs({ handlerMs: 1.2, dynamoMs: 1.0, roundTrips: 1 }, assumptions)).toBe(6); // 0.6 + 5 → 6
    expect(billedDurationMs({ handlerMs: 0.9, dynamoMs: 1.0, roundTrips: 2 }, assumptions)).toBe(10); // noise below the replay counts as 0
    expect(billedDurationMs({ handlerMs: 0.1, dynamoMs: 0, roundTrips: 0 }, assumptions)).toBe(1);
  });

  it('is a whole number of milliseconds, never below 1, and grows with each round trip', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 500, noNaN: true }), fc.double({ min: 0, max: 500, noNaN: true }), fc.integer({ min: 0, max: 20 }), (h, d, n) => {
        const ms = billedDurationMs({ handlerMs: h, dynamoMs: d, roundTrips: n });
        expect(Number.isInteger(ms) && ms >= 1).toBe(true);
        expect(billedDurationMs({ handlerMs: h, dynamoMs: d, roundTrips: n + 1 })).toBeGreaterThan(ms);
      }),
    );
  });
});

describe('edgeBodyBytes', () => {
  it('is the compressed size from CloudFront’s threshold up, the raw size below it', () => {
    expect(edgeBodyBytes(CLOUDFRONT_MIN_COMPRESS_BYTES - 1, 100)).toBe(CLOUDFRONT_MIN_COMPRESS_BYTES - 1);
    expect(edgeBodyBytes(5000, 1200)).toBe(1200);
    expect(edgeBodyBytes(1000, 1100)).toBe(1000);
  });
});

describe('usd', () => {
  it('shows cents, and a third decimal below ten cents', () => {
    expect([usd(3.5), usd(0.0625), usd(0.0999), usd(0)]).toEqual(['$3.50', '$0.063', '$0.10', '$0.000']);
  });
});

describe('the model describes what is deployed', () => {
  // The stack's own tests assert the template (test/infra/stack.test.ts); these tie the model's constants to the same source.
  it('every function is arm64 with the memory the model prices, and the authorizer result is never cached', () => {
    const fn = readFileSync(`${ROOT}lib/route-function.ts`, 'utf8');
    expect(fn).toContain('architecture: Architecture.ARM_64');
    expect(fn).toContain(`memorySize: ${LAMBDA_MEMORY_MB},`);
    expect(readFileSync(`${ROOT}lib/rest-apis.ts`, 'utf8')).toContain('resultsCacheTtl: Duration.seconds(0)');
  });

  it('names a source for every price', () => {
    for (const price of Object.values(PRICES)) {
      expect(price.usd).toBeGreaterThan(0);
      expect(price.source).not.toBe('');
      expect(price.seenIn).not.toBe('');
    }
  });
});
