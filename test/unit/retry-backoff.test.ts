import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FIRST_WAIT_SECONDS, KEPT_RECEIVES, QUEUE_VISIBILITY_SECONDS, WAITING_RECEIVES, totalWait, waitingVisibility } from '../../lambdas/core/retry-backoff.js';

describe('a waiting record\'s backoff', () => {
  it('starts in seconds and doubles up to the queue\'s visibility timeout', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(waitingVisibility)).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 720, 720]);
  });

  it('is never shorter than the first wait, never longer than the timeout, and never shrinks (SQS allows 0 to 43,200 s)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 10_000 }), (n) => {
        const s = waitingVisibility(n);
        expect(Number.isInteger(s) && s >= FIRST_WAIT_SECONDS && s <= QUEUE_VISIBILITY_SECONDS).toBe(true);
        expect(waitingVisibility(n + 1)).toBeGreaterThanOrEqual(s);
      }),
    );
  });

  it('reaches the dead-letter queue after as long as ten full timeouts did, within one more timeout', () => {
    expect(WAITING_RECEIVES).toBe(17);
    expect(totalWait(WAITING_RECEIVES)).toBeGreaterThanOrEqual(KEPT_RECEIVES * QUEUE_VISIBILITY_SECONDS);
    expect(totalWait(WAITING_RECEIVES)).toBeLessThan((KEPT_RECEIVES + 1) * QUEUE_VISIBILITY_SECONDS);
    expect(totalWait(WAITING_RECEIVES - 1)).toBeLessThan(KEPT_RECEIVES * QUEUE_VISIBILITY_SECONDS);
  });
});
