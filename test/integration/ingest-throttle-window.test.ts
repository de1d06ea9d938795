/**
 * Backpressure under a fault that lasts: the ingest handler against a
 * partition throttled for minutes of the injected clock, with SQS played as
 * it behaves (a failed record comes back when its own visibility runs out; a
 * record the handler set no visibility for, after the queue's timeout).
 *
 * Held here:
 * - a record refused on a throttle fails alone and sets its own visibility,
 *   longer at each receive (2 s doubling, jittered, to 300 s), so the throttle
 *   meets fewer and fewer deliveries; the rest of its batch applies;
 * - each such delivery is counted (`throttled`) with its change's lag, which
 *   grows through the window: the ChangeLag alarm (applied or throttled)
 *   fires on a throttle that lasts, although nothing applies;
 * - the deliveries are bounded: every record applies at its first delivery
 *   after the window ends, within the queue's maxReceiveCount;
 * - after the window the table equals a fresh load of the changes and a
 *   follower of every feed, reading through the window, equals the read routes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context, SQSEvent } from 'aws-lambda';
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { fold } from '../../lambdas/core/fold.js';
import { WAITING_RECEIVES, throttleVisibility } from '../../lambdas/core/retry-backoff.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { createWriteClient } from '../../lambdas/store/client.js';
import { DynamoRepository } from '../../lambdas/store/repository.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { FeedConsumer, expectReplicasMatch, scopesOf } from '../support/feed-consumer.js';
import { freshLoadReadModel, readModel, scanAll } from '../support/read-model.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';
import { ThrottleWindow, toPartition } from '../support/throttle-window.js';

let store: TestStore;
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => store?.close());

const START = Date.parse('2026-11-21T12:00:00.000Z');
const QUEUE_TIMEOUT_SECONDS = 720;
const context = { awsRequestId: 'req', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

const host = { id: 'usr_host', username: 'host' };
const guests = Array.from({ length: 12 }, (_, i) => ({ id: `usr_g${String(i).padStart(2, '0')}`, username: `g${i}` }));
const party = {
  id: 'evt_party',
  creator_id: host.id,
  title: 'Party',
  start_date: '2027-01-01T20:00:00.000Z',
  timezone: 'UTC',
  status: 'published' as const,
  visibility: 'public' as const,
  created_at: '2026-11-01T00:00:00.000Z',
};
const other = { ...party, id: 'evt_other', title: 'Other' };

interface Message {
  id: string;
  body: string;
  receives: number;
  visibleAt: number;
  /** The seconds the handler hid it for at each failed receive (undefined: it set none). */
  hidden: (number | undefined)[];
  appliedAt?: number;
  /** Receives once the window had ended. */
  receivesAfter: number;
}

describe('a partition throttled for minutes while SQS redelivers', () => {
  it.each([
    ['the guest feed', 'FEED#GUESTS#evt_party'],
    ["the event's partition", 'EVENT#evt_party'],
  ])('%s throttled for 10 minutes of 12 RSVPs: backoff per record, lag reported, every record applied at its first delivery after', async (_name, partition) => {
    const table = `throttle-${partition.split('#')[0]!.toLowerCase()}`;
    const d0: Dataset = { users: [host, ...guests], events: [party, other], rsvps: [] };
    await ensureTable(store.client, table);
    await writeDataset(store.client, table, d0);
    const follower = new FeedConsumer(new DynamoRepository(store.client, table), scopesOf(store.client, table, new Set([host.id]), [party.id, other.id]));
    await follower.drain();

    let now = START;
    const window = new ThrottleWindow(toPartition(partition));
    const client = window.attach(createWriteClient({ endpoint: store.endpoint }));
    const metrics = recordingMetrics();
    const logger = recordingLogger();
    const visibility = new Map<string, number>();
    // The jitter at its most: the deliveries the test counts are those of the slowest backoff.
    const ingest = buildIngest({ client, tableName: table, logger, metrics, clock: () => new Date(now), continueLater: async () => undefined, retryIn: async (handle, seconds) => void visibility.set(handle, seconds), random: () => 0.999 });

    const changes: Change[] = [
      ...guests.map((g, i): Change => ({ type: 'rsvp.upserted', version: 1, occurred_at: new Date(START + i * 1000).toISOString(), rsvp: { event_id: party.id, user_id: g.id, status: 'yes', rsvp_date: '2026-11-21T12:00:00.000Z' } })),
      { type: 'event.upserted', version: 2, occurred_at: new Date(START).toISOString(), event: { ...other, title: 'Other, renamed' } },
    ];
    const queue: Message[] = changes.map((c, i) => ({ id: `m${i}`, body: JSON.stringify(c), receives: 0, visibleAt: START + i * 1000, hidden: [], receivesAfter: 0 }));
    const windowEnds = START + 10 * 60_000;
    window.open();
    let throttledDeliveries = 0;
    while (queue.some((m) => m.appliedAt === undefined)) {
      const due = queue.filter((m) => m.appliedAt === undefined).sort((a, b) => a.visibleAt - b.visibleAt);
      now = Math.max(now, due[0]!.visibleAt);
      if (now >= windowEnds) window.close();
      // A poll takes up to 10 visible records, in one batch.
      const batch = due.filter((m) => m.visibleAt <= now).slice(0, 10);
      for (const m of batch) {
        m.receives++;
        if (now >= windowEnds) m.receivesAfter++;
      }
      const event: SQSEvent = {
        Records: batch.map((m) => ({
          messageId: m.id,
          receiptHandle: `${m.id}/${m.receives}`,
          body: m.body,
          attributes: { ApproximateReceiveCount: String(m.receives), SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:ingest',
          awsRegion: 'eu-west-1',
        })),
      };
      const failed = new Set((await ingest(event, context)).batchItemFailures.map((f) => f.itemIdentifier));
      for (const m of batch) {
        if (!failed.has(m.id)) {
          m.appliedAt = now;
          continue;
        }
        const seconds = visibility.get(`${m.id}/${m.receives}`);
        m.hidden.push(seconds);
        m.visibleAt = now + (seconds ?? QUEUE_TIMEOUT_SECONDS) * 1000;
        expect(m.receives).toBeLessThan(WAITING_RECEIVES);
      }
      throttledDeliveries += failed.size;
      // A follower reads on through the window (its reads are not throttled: the window is on the write path's client).
      await follower.drain();
    }
    client.destroy();

    // Every failure was a throttle, each record set its own, growing visibility, and nothing failed for another reason.
    expect(metrics.value('Changes', { result: 'failed' })).toEqual([]);
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
      `throttle window on ${partition} (10 min): ${throttledRecords.length} of ${queue.length} records throttled, ${throttledDeliveries} throttled deliveries, at most ${Math.max(...queue.map((m) => m.receives))} receives a record, lag up to ${Math.round(Math.max(...lags))} s\n`,
    );
  }, 120_000);
});
