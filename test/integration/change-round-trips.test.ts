/**
 * How long a change takes to show is its chain of dependent DynamoDB
 * requests (scripts/bench-round-trips.ts: each request sent only once
 * another was answered counts one round trip; requests sent together count
 * once), counted as DynamoDB sees them: the change path's own client
 * (createWriteClient) through a proxy that releases requests in waves
 * (test/support/wave-proxy.ts), so the figure includes what the SDK adds
 * (its retries, a wait for a socket) and does not depend on how fast this
 * machine's store answers. The bounds are the ones docs/performance.md
 * ("Freshness under load") builds its model on; a burst's RSVPs:
 * rsvp-burst-round-trips.test.ts.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { changeRoundTrips, FAN_OUT_CHUNK_TRIPS, fanOutRoundTrips, ROUND_TRIP_BOUNDS, USER_EDIT_TRIPS, type ChangeTrips } from '../../scripts/bench-round-trips.js';
import { useFileStore } from '../support/store.js';

const clock = fixedClock('2026-11-21T12:00:00.000Z');
const store = useFileStore();

describe('round trips per change (dynalite)', () => {
  let rows: ChangeTrips[] = [];
  beforeAll(async () => {
    rows = await changeRoundTrips(store.endpoint, store.client, store.nextTable('round-trips'), clock);
    process.stdout.write(`${rows.map((r) => `${r.change}: ${r.roundTrips} round trips, ${r.calls} calls (${r.result})`).join('\n')}\n`);
  }, 60_000);

  it('every case was applied (none a stale duplicate but the one meant to be)', () => {
    expect(rows.map((r) => [r.change, r.result === 'stale'])).toEqual(rows.map((r) => [r.change, r.change === 'stale duplicate']));
  });

  it.each(Object.entries(ROUND_TRIP_BOUNDS))('%s: at most %d round trips', (change, bound) => {
    const row = rows.find((r) => r.change === change);
    expect(row).toBeDefined();
    expect(row!.roundTrips).toBeLessThanOrEqual(bound);
  });

  // A fan-out: the user's own change, one Query of its links, then a chunk of units (8 at once, the default
  // fanOutConcurrency) at a time, each chunk's read sent with the chunk before it.
  it('a fan-out adds one Query and at most FAN_OUT_CHUNK_TRIPS per chunk of 8 units to the change without one', async () => {
    const lines: string[] = [];
    let alone = 0;
    for (const links of [0, 1, 8, 16, 24]) {
      const { edit, rename } = await fanOutRoundTrips(store.endpoint, store.client, store.nextTable(`fan-out-${links}`), clock, links);
      lines.push(`${links} events: edit ${edit.roundTrips} round trips (${edit.calls} calls), rename ${rename.roundTrips} (${rename.calls} calls)`);
      if (links === 0) alone = Math.max(edit.roundTrips, rename.roundTrips);
      const bound = links === 0 ? USER_EDIT_TRIPS : alone + 1 + Math.ceil(links / 8) * FAN_OUT_CHUNK_TRIPS;
      for (const row of [edit, rename]) expect({ change: row.change, roundTrips: Math.min(row.roundTrips, bound) }).toEqual({ change: row.change, roundTrips: row.roundTrips });
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }, 120_000);
});
