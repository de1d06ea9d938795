/**
 * One RSVP in a burst takes at most 8 round trips as DynamoDB sees them
 * (issue 57 item 7): 160 new RSVPs on one event of 1,000 guests, applied as
 * the ingest applies a batch (10 records at once, each with its own applier,
 * on the one write client the function makes: createWriteClient), counted
 * at the HTTP level by a recording proxy that releases requests in waves
 * (test/support/wave-proxy.ts, scripts/bench-round-trips.ts burstRoundTrips).
 *
 * The outside saw 9 where the project's own count said 8, for two reasons
 * the count of calls as the code issues them (one RSVP alone, on a small
 * event) could not see:
 * - the SDK's 50 sockets a client: ten records' widest waves (9 calls each)
 *   are about 90 requests at once, and those past 50 waited for a socket,
 *   that is for another answer (one RSVP in three took 9); the write client
 *   now has WRITE_PATH_SOCKETS;
 * - a feed head's flush on the change's path: the RSVP whose append crossed
 *   the flush size waited for the chunk and the trim (two round trips more:
 *   9 for a `no`, 10 for a guest); the flush now goes beside the change's
 *   last waves (feed-append.ts, PendingFlushes).
 * Measured on dbf8d06 through this proxy: 7: 27, 8: 83, 9: 49, 10: 1.
 *
 * RSVP_BURST_RSVPS and RSVP_BURST_GUESTS set the burst's size (the second
 * store runs one ingest batch of 10 on 100 guests: DynamoDB Local answers
 * each wave of about 90 requests in about a second;
 * test/support/dynamodb-local.env.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { BURST, burstRoundTrips, tripsHistogram } from '../../scripts/bench-round-trips.js';
import { useFileStore } from '../support/store.js';

const RSVPS = Number(process.env.RSVP_BURST_RSVPS ?? BURST.rsvps);
const GUESTS = Number(process.env.RSVP_BURST_GUESTS ?? BURST.guests);
const store = useFileStore();

describe('a burst of new RSVPs on one event, counted at the HTTP level', () => {
  it(`every RSVP of ${RSVPS} on an event of ${GUESTS} guests, ${BURST.batch} at once on one write client, takes at most 8 round trips`, async () => {
    const trips = await burstRoundTrips(store.endpoint, store.client, store.nextTable('rsvp-burst'), fixedClock('2026-11-21T12:00:00.000Z'), { ...BURST, guests: GUESTS, rsvps: RSVPS });
    process.stdout.write(`RSVPs by round trips: ${tripsHistogram(trips)}\n`);
    expect(trips).toHaveLength(RSVPS);
    expect({ most: Math.max(...trips), histogram: tripsHistogram(trips.filter((t) => t > 8)) }).toEqual({ most: 8, histogram: '' });
  }, 240_000);
});
