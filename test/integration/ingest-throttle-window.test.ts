/**
 * Backpressure under a fault that lasts: the ingest handler against a
 * partition throttled for minutes of the injected clock, with SQS played as
 * it behaves (a failed record comes back when its own visibility runs out; a
 * record the handler set no visibility for, after the queue's timeout).
 *
 * Held here:
 * - a record refused on a throttle is sent to the queue again alone, as a new
 *   message delayed longer at each throttle (2 s doubling, jittered, to
 *   300 s), so the throttle meets fewer and fewer deliveries and uses up none
 *   of the record's receives (each message is received once); the rest of
 *   its batch applies;
 * - each such delivery is counted (`throttled`) with its change's lag, which
 *   grows through the window: the ChangeLag alarm (applied or throttled)
 *   fires on a throttle that lasts, although nothing applies;
 * - every record applies at its first delivery after the window ends, and no
 *   message is received more than once (the queue's maxReceiveCount is never
 *   approached, however long the window);
 * - after the window the table equals a fresh load of the changes and a
 *   follower of every feed, reading through the window, equals the read routes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { fold } from '../../lambdas/core/fold.js';
import { WAITING_RECEIVES, throttleVisibility } from '../../lambdas/core/retry-backoff.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { createWriteClient } from '../../lambdas/store/table/client.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { FeedConsumer, expectReplicasMatch, scopesOf } from '../support/feed-consumer.js';
import { freshLoadReadModel, readModel, scanAll } from '../support/read-model.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';
import { ThrottleWindow, toPartition } from '../support/throttle-window.js';
import { playQueue, queueSends } from '../../scripts/throttle-burst.js';
import { host, party } from '../support/party.js';

let store: TestStore;
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => store?.close());

const START = Date.parse('2026-11-21T12:00:00.000Z');

const guests = Array.from({ length: 12 }, (_, i) => ({ id: `usr_g${String(i).padStart(2, '0')}`, username: `g${i}` }));
/** In Lisbon; its one change also moves it to Porto, so a place's feed partition is on its path (PRODUCT P17). */
const other = { ...party, id: 'evt_other', title: 'Other', location: { name: 'Hall', city: 'Lisbon', country: null } };

describe('a partition throttled for minutes while SQS redelivers', () => {
  it.each([
    ['the guest feed', 'FEED#GUESTS#evt_party'],
    ["the event's partition", 'EVENT#evt_party'],
    ["the old place's feed", 'FEED#PLACE#*#lisbon'],
  ])('%s throttled for 10 minutes of 12 RSVPs: backoff per record, lag reported, every record applied at its first delivery after', async (_name, partition) => {
    const table = `throttle-${partition.replace(/[^A-Za-z0-9_.-]+/g, '-').toLowerCase()}`;
    const d0: Dataset = { users: [host, ...guests], events: [party, other], rsvps: [] };
    await ensureTable(store.client, table);
    await writeDataset(store.client, table, d0);
    const follower = new FeedConsumer(new DynamoRepository(store.client, table), scopesOf(store.client, table, new Set([host.id]), [party.id, other.id], [{ city: 'lisbon' }, { city: 'Porto' }]));
    await follower.drain();

    let now = START;
    const window = new ThrottleWindow(toPartition(partition));
    const client = window.attach(createWriteClient({ endpoint: store.endpoint }));
    const metrics = recordingMetrics();
    const logger = recordingLogger();
    const visibility = new Map<string, number>();
    const sends = queueSends();
    // The jitter at its most: the deliveries the test counts are those of the slowest backoff.
    const ingest = buildIngest({ client, tableName: table, logger, metrics, clock: () => new Date(now), continueLater: sends.continueLater, retryIn: async (handle, seconds) => void visibility.set(handle, seconds), random: () => 0.999 });

    const changes: Change[] = [
      ...guests.map((g, i): Change => ({ type: 'rsvp.upserted', version: 1, occurred_at: new Date(START + i * 1000).toISOString(), rsvp: { event_id: party.id, user_id: g.id, status: 'yes', rsvp_date: '2026-11-21T12:00:00.000Z' } })),
      { type: 'event.upserted', version: 2, occurred_at: new Date(START).toISOString(), event: { ...other, title: 'Other, renamed', location: { name: 'Hall', city: 'Porto', country: null } } },
    ];
    const windowEnds = START + 10 * 60_000;
    window.open();
    const run = await playQueue({
      bodies: changes.map((c) => JSON.stringify(c)),
      start: START,
      spacingMs: 1000,
      windowEnds,
      ingest,
      visibility,
      sends,
      setNow: (t) => void (now = t),
      tick: (t) => t >= windowEnds && window.close(),
      // A follower reads on through the window (its reads are not throttled: the window is on the write path's client).
      afterPoll: () => follower.drain(),
      maxReceives: WAITING_RECEIVES - 1,
    });
    const queue = run.messages;
    const throttledDeliveries = run.failedDuring + run.failedAfter;
    client.destroy();

    // Every delivery that did not apply was a throttle, each record sent again with its own, growing delay, as a new
    // message (received once each: the throttle used up no receives), and nothing failed for another reason.
    expect(metrics.value('Changes', { result: 'failed' })).toEqual([]);
    for (const m of queue) expect({ id: m.id, deliveries: m.deliveries }).toEqual({ id: m.id, deliveries: m.messages });
    expect(visibility.size).toBe(0);
    expect(metrics.value('Changes', { result: 'throttled' })).toHaveLength(throttledDeliveries);
    expect(throttledDeliveries).toBeGreaterThan(0);
    for (const m of queue) expect(m.hidden).toEqual(m.hidden.map((_, i) => throttleVisibility(i + 1, () => 0.999)));
    // The lag of the throttled deliveries grows through the window, past the alarm's 60 s.
    const lags = metrics.value('ChangeLag', { result: 'throttled' });
    expect(Math.max(...lags)).toBeGreaterThan(60);
    // Bounded: each record applied at its first delivery after the window.
    for (const m of queue) expect({ id: m.id, receivesAfterWindow: m.receivesAfter <= 1, appliedAfterWindow: m.hidden.length === 0 || m.appliedAt! >= windowEnds }).toEqual({ id: m.id, receivesAfterWindow: true, appliedAfterWindow: true });
    const throttledRecords = queue.filter((m) => m.hidden.length > 0);
    expect(throttledRecords.length).toBeGreaterThan(0);
    // The end state: a fresh load of the changes, and the follower equal to the read routes.
    expect(readModel(await scanAll(store.client, table))).toEqual(await freshLoadReadModel(store.client, `${table}-expected`, fold(d0, changes).dataset));
    await follower.drain();
    await expectReplicasMatch(store.client, table, follower, new Map([[host.id, host.username]]));
    expect(follower.replicas.get(`guests:${party.id}`)?.size).toBe(guests.length);
    process.stdout.write(
      `throttle window on ${partition} (10 min): ${throttledRecords.length} of ${queue.length} records throttled, ${throttledDeliveries} throttled deliveries, at most ${Math.max(...queue.map((m) => m.deliveries))} deliveries a record (each message received once), lag up to ${Math.round(Math.max(...lags))} s\n`,
    );
  }, 120_000);
});
