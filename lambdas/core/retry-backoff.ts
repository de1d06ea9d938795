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
