/**
 * When a change record that waits for a reference (an RSVP that overtook its
 * event: a standard queue allows it) is delivered again. SQS would hide it
 * for the queue's whole visibility timeout (720 s, sized for a batch's run);
 * the ingest instead sets its visibility from how often it was received:
 * seconds at first, so a record is applied soon after the record it waits
 * for, then doubling up to the queue's timeout. The dead-letter queue still
 * takes it after as long as ten full timeouts did (WAITING_RECEIVES, held by
 * test/unit/retry-backoff.test.ts), so a reference that comes late still
 * has the same time to come.
 */

/** The queue's visibility timeout: six times the ingest function's 120 s (lib/ingest.ts). */
export const QUEUE_VISIBILITY_SECONDS = 720;
/** The first wait. */
export const FIRST_WAIT_SECONDS = 5;
/** Receives before the dead-letter queue as it was, each followed by a full timeout: the time kept. */
export const KEPT_RECEIVES = 10;

/** Seconds until the record's next delivery after its `receiveCount`-th receive (1 for the first) found it waiting. */
export function waitingVisibility(receiveCount: number): number {
  const n = Math.max(1, Math.floor(receiveCount));
  // Doubling, capped before it overflows: 5, 10, 20, … 640, then the queue's timeout.
  return n > 16 ? QUEUE_VISIBILITY_SECONDS : Math.min(QUEUE_VISIBILITY_SECONDS, FIRST_WAIT_SECONDS * 2 ** (n - 1));
}

/** Total wait of the first `receives` receives. */
export function totalWait(receives: number): number {
  let total = 0;
  for (let n = 1; n <= receives; n++) total += waitingVisibility(n);
  return total;
}

/** The queue's maxReceiveCount: the fewest receives whose waits add up to at least KEPT_RECEIVES full timeouts. */
export const WAITING_RECEIVES = (() => {
  let n = 1;
  while (totalWait(n) < KEPT_RECEIVES * QUEUE_VISIBILITY_SECONDS) n++;
  return n;
})();

/**
 * When a change that failed on a throttle (a hot partition past its limit,
 * the SDK's own retries used up) is delivered again: later each time, so a
 * throttle that lasts is met by fewer and fewer deliveries instead of a
 * queue's worth every visibility timeout. Doubling from THROTTLE_FIRST_SECONDS
 * to THROTTLE_CAP_SECONDS, drawn between half and all of that ("equal
 * jitter"), so records throttled together do not come back together. The
 * cap keeps a record that the throttle outlasts coming back often enough to
 * report its lag (the ChangeLag alarm) and to apply within minutes once the
 * partition has room; the queue's maxReceiveCount (WAITING_RECEIVES) bounds
 * the deliveries, THROTTLE_KEPT_SECONDS is how long that is at least.
 */
export const THROTTLE_FIRST_SECONDS = 2;
export const THROTTLE_CAP_SECONDS = 300;

/** Seconds until the record's next delivery after its `receiveCount`-th receive failed on a throttle; `random` in [0, 1). */
export function throttleVisibility(receiveCount: number, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(receiveCount));
  const full = n > 16 ? THROTTLE_CAP_SECONDS : Math.min(THROTTLE_CAP_SECONDS, THROTTLE_FIRST_SECONDS * 2 ** (n - 1));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.max(1, Math.ceil(full / 2 + (full / 2) * r));
}

/** The least time a record that fails on every delivery stays out of the dead-letter queue: each wait at its least. */
export const THROTTLE_KEPT_SECONDS = (() => {
  let total = 0;
  for (let n = 1; n < WAITING_RECEIVES; n++) total += throttleVisibility(n, () => 0);
  return total;
})();
