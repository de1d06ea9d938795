import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FIRST_WAIT_SECONDS, KEPT_RECEIVES, QUEUE_VISIBILITY_SECONDS, THROTTLE_CAP_SECONDS, THROTTLE_FIRST_SECONDS, THROTTLE_KEPT_SECONDS, WAITING_RECEIVES, throttleVisibility, totalWait, waitingVisibility } from '../../lambdas/core/retry-backoff.js';

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

describe("a throttled record's backoff", () => {
  it('doubles from 2 s to 300 s, drawn between half and all of it', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => throttleVisibility(n, () => 0.999999))).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => throttleVisibility(n, () => 0))).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 150, 150]);
  });

  it('is a whole number of seconds within SQS bounds, never over the cap, and its least never shrinks from one receive to the next', () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 10_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, r) => {
        const s = throttleVisibility(n, () => r);
        expect(Number.isInteger(s) && s >= 1 && s <= THROTTLE_CAP_SECONDS).toBe(true);
        expect(throttleVisibility(n + 1, () => 0)).toBeGreaterThanOrEqual(throttleVisibility(n, () => 0));
      }),
    );
  });

  it('keeps a record the throttle outlasts out of the dead-letter queue for at least 24 minutes (every wait at its least)', () => {
    expect(THROTTLE_KEPT_SECONDS).toBe(1_455);
    expect(THROTTLE_FIRST_SECONDS).toBe(2);
  });
});
