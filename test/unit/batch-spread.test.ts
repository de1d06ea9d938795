/**
 * The loader's calls (lambdas/store/table/batch-write.ts spreadBatches): no
 * call holds one partition twice, every request is in exactly one call of at
 * most 25, and requests that share no partition keep their order; so under
 * 8 calls in flight a partition takes at most 8 items of any 8 consecutive
 * calls (issue 59, d1; test/integration/load-partitions.test.ts measures a
 * real load).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { spreadBatches } from '../../lambdas/store/table/batch-write.js';

describe('spreadBatches (property)', () => {
  it('no partition twice in a call, every request once, calls of at most 25', () => {
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 12 }).map(String), { minLength: 1, maxLength: 4 }), { maxLength: 600 }), (requests) => {
        const calls = spreadBatches(requests);
        expect(calls.flat().sort((a, b) => a - b)).toEqual(requests.map((_, i) => i));
        for (const call of calls) {
          expect(call.length).toBeLessThanOrEqual(25);
          const parts = call.flatMap((i) => requests[i]!);
          expect(new Set(parts).size).toBe(parts.length);
        }
        // Two requests of one partition keep their order.
        const callOf = new Map(calls.flatMap((c, n) => c.map((i) => [i, n] as const)));
        for (let a = 0; a < requests.length; a++) for (let b = a + 1; b < Math.min(requests.length, a + 30); b++) if (requests[a]!.some((p) => requests[b]!.includes(p))) expect(callOf.get(a)!).toBeLessThan(callOf.get(b)!);
      }),
      { numRuns: 300 },
    );
  });

  it('fills calls when partitions allow: 1,000 requests of distinct partitions are 40 calls, 100 of one partition 100', () => {
    expect(spreadBatches(Array.from({ length: 1000 }, (_, i) => [`p${i}`]))).toHaveLength(40);
    expect(spreadBatches(Array.from({ length: 100 }, () => ['hot']))).toHaveLength(100);
  });
});
