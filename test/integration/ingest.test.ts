/**
 * The ingest Lambda's handler with SQS events over dynalite: per-record
 * results (a poison record among good ones fails alone), redelivery, and a
 * fan-out too big for one invocation going on by continuations; what each
 * record counts (result, fan-out, lag) and that no log holds its private fields.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'aws-lambda';
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { fold } from '../../lambdas/core/fold.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { keys } from '../../lambdas/store/table/table.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { freshLoadReadModel, readModel, scanAll } from '../support/read-model.js';
import { sqsEvent } from '../support/events.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { waveClient } from '../../scripts/bench-round-trips.js';
import { roundTrips } from '../../local/instrument.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';

let store: TestStore;
const logger = recordingLogger();
let metrics = recordingMetrics();
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => store?.close());

const context = (remainingMs: () => number = () => 60_000) => ({ awsRequestId: 'req', getRemainingTimeInMillis: remainingMs }) as unknown as Context;

const host = { id: 'usr_host', username: 'host', email: 'PRIVATE-host@example.com' };
const fan = { id: 'usr_fan', username: 'fan', phone: 'PRIVATE-555' };
const event = (i: number) => ({
  id: `evt_${String(i).padStart(3, '0')}`,
  creator_id: 'usr_host',
  title: `Night ${i}`,
  start_date: '2027-01-01T20:00:00.000Z',
  timezone: 'UTC',
  status: 'published' as const,
  visibility: 'public' as const,
  created_at: '2026-11-01T00:00:00.000Z',
});

/** The ingest queue as the continuation port sees it: what was sent, in order (SQS itself has no local twin here). */
let sent: string[] = [];

async function table(name: string, d0: Dataset) {
  await ensureTable(store.client, name);
  await writeDataset(store.client, name, d0);
  metrics = recordingMetrics();
  sent = [];
  const continueLater = async (body: string) => void sent.push(body);
  const ingest = buildIngest({ client: store.client, tableName: name, logger, metrics, clock: fixedClock('2026-11-21T12:00:00.000Z'), reserveMs: 1_000, continueLater });
  return ingest;
}

describe('ingest Lambda (SQS, partial batch responses)', () => {
  it('applies good records and fails only the poison and the waiting ones; the DLQ path keeps them', async () => {
    const d0: Dataset = { users: [host, fan], events: [event(1)], rsvps: [] };
    const good: Change[] = [
      { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_001', user_id: 'usr_fan', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z', email: 'PRIVATE@x' } },
      { type: 'event.upserted', version: 2, occurred_at: '2026-11-21T11:59:30.000Z', event: { ...event(1), title: 'Renamed night' } },
    ];
    const waiting: Change = { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_001', user_id: 'usr_nobody', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' } };
    const ingest = await table('ingest-poison', d0);
    const bodies = [JSON.stringify(good[0]), '{"type":"event.upserted","version":"x"', JSON.stringify(waiting), JSON.stringify(good[1]), JSON.stringify({ type: 'user.deleted', version: 0, user_id: 'usr_fan' })];
    const result = await ingest(sqsEvent(bodies), context());
    // In the order the records finished (applied at once): SQS reads the set.
    expect(result.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m1', 'm2', 'm4']);
    const expected = await freshLoadReadModel(store.client, 'ingest-poison-expected', fold(d0, good).dataset);
    expect(readModel(await scanAll(store.client, 'ingest-poison'))).toEqual(expected);
    const counted = (result: string) => metrics.value('Changes', { result }).length;
    expect(['applied', 'stale', 'waiting', 'invalid'].map(counted)).toEqual([2, 0, 1, 2]);
    // The renamed event's fan-out: its source item and its copies; the lag only where occurred_at was given.
    expect(metrics.value('ChangeWrites', { result: 'applied' }).every((w) => w > 0)).toBe(true);
    expect(metrics.value('ChangeDerivations', { result: 'applied' })).toHaveLength(2);
    expect(metrics.value('ChangeLag', { result: 'applied' })).toEqual([30]);

    // Redelivery of the whole batch changes nothing more.
    const again = await ingest(sqsEvent(bodies), context());
    expect(again.batchItemFailures).toHaveLength(3);
    expect(readModel(await scanAll(store.client, 'ingest-poison'))).toEqual(expected);
    expect(['applied', 'stale', 'waiting', 'invalid'].map(counted)).toEqual([2, 2, 2, 4]);
    expect(JSON.stringify(logger.entries)).not.toContain('PRIVATE');
    expect(logger.entries.some((l) => l.level === 'WARN' && l.missing === 'user usr_nobody')).toBe(true);
  });

  it('applies a batch\'s records at once: ten RSVPs on one event take the round trips of one, and end as their fold', async () => {
    const guests = Array.from({ length: 10 }, (_, i) => ({ id: `usr_g${i}`, username: `guest${i}` }));
    const d0: Dataset = { users: [host, ...guests], events: [event(1)], rsvps: [] };
    const rsvps: Change[] = guests.map((g, i) => ({ type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_001', user_id: g.id, status: (['yes', 'no', 'maybe'] as const)[i % 3]!, rsvp_date: '2026-11-02T00:00:00.000Z' } }));
    await ensureTable(store.client, 'ingest-parallel');
    await writeDataset(store.client, 'ingest-parallel', d0);
    // Calls released in waves (scripts/bench-round-trips.ts): records one after another would chain their round trips.
    const { client, spans } = waveClient(store.endpoint);
    try {
      const ingest = buildIngest({ client, tableName: 'ingest-parallel', logger, metrics: recordingMetrics(), clock: fixedClock('2026-11-21T12:00:00.000Z'), continueLater: async () => undefined });
      const result = await ingest(sqsEvent(rsvps.map((r) => JSON.stringify(r))), context());
      expect(result.batchItemFailures).toEqual([]);
    } finally {
      client.destroy();
    }
    // One RSVP alone is at most 8 (test/integration/change-round-trips.test.ts); contention on the event's counts may add a recount.
    expect(roundTrips(spans)).toBeLessThanOrEqual(12);
    expect(readModel(await scanAll(store.client, 'ingest-parallel'))).toEqual(await freshLoadReadModel(store.client, 'ingest-parallel-expected', fold(d0, rsvps).dataset));
  });

  it('hides a waiting record for 5 s, then 10, 20 … (its receive count), and applies it once its reference came', async () => {
    const d0: Dataset = { users: [host, fan], events: [], rsvps: [] };
    await ensureTable(store.client, 'ingest-backoff');
    await writeDataset(store.client, 'ingest-backoff', d0);
    const hidden: [string, number][] = [];
    let refuse = false;
    const retryIn = async (receiptHandle: string, seconds: number) => {
      if (refuse) throw new Error('AccessDenied');
      hidden.push([receiptHandle, seconds]);
    };
    const ingest = buildIngest({ client: store.client, tableName: 'ingest-backoff', logger, metrics: recordingMetrics(), clock: fixedClock('2026-11-21T12:00:00.000Z'), continueLater: async () => undefined, retryIn });
    const rsvp: Change = { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_001', user_id: 'usr_fan', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' } };
    const received = (n: number) => {
      const e = sqsEvent([JSON.stringify(rsvp)]);
      e.Records[0]!.attributes.ApproximateReceiveCount = String(n);
      return e;
    };
    for (const n of [1, 2, 3]) expect((await ingest(received(n), context())).batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
    expect(hidden).toEqual([['r0', 5], ['r0', 10], ['r0', 20]]);
    // A visibility that cannot be changed: the record still fails (SQS delivers it after the queue's timeout), with a warning.
    refuse = true;
    expect((await ingest(received(4), context())).batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
    expect(logger.entries.some((l) => l.level === 'WARN' && String(l.message).includes('Could not set'))).toBe(true);
    // The event arrives; the record's next delivery applies.
    expect((await ingest(sqsEvent([JSON.stringify({ type: 'event.upserted', version: 1, event: event(1) })]), context())).batchItemFailures).toEqual([]);
    expect((await ingest(received(5), context())).batchItemFailures).toEqual([]);
    expect(hidden).toHaveLength(3);
    expect(readModel(await scanAll(store.client, 'ingest-backoff'))).toEqual(await freshLoadReadModel(store.client, 'ingest-backoff-expected', fold(d0, [{ type: 'event.upserted', version: 1, event: event(1) }, rsvp]).dataset));
  });

  it('finishes a rename fanned out to 60 events by continuations, one invocation after another, never failing the record', async () => {
    const events = Array.from({ length: 60 }, (_, i) => event(i));
    const d0: Dataset = { users: [host, fan], events, rsvps: events.slice(0, 20).map((e) => ({ event_id: e.id, user_id: 'usr_fan', status: 'maybe' as const, rsvp_date: '2026-11-02T00:00:00.000Z' })) };
    const rename: Change = { type: 'user.upserted', version: 5, user: { ...host, username: 'the-host' } };
    const ingest = await table('ingest-fanout', d0);
    // Each look at the clock costs "time": every invocation's budget runs out after a few chunks.
    const budget = () => {
      let left = 60_000;
      return () => (left -= 20_000);
    };
    const first = await ingest(sqsEvent([JSON.stringify(rename)]), context(budget()));
    expect(first.batchItemFailures).toEqual([]);
    expect(sent).toEqual([JSON.stringify(rename)]);
    const user = (await store.client.send(new GetCommand({ TableName: 'ingest-fanout', Key: keys.user('usr_host'), ConsistentRead: true }))).Item;
    expect(user).toMatchObject({ version: 5, pending: true, pending_after: expect.stringMatching(/^evt_/) });
    expect(metrics.value('Changes', { result: 'incomplete' })).toEqual([1]);

    // The continuations, delivered as SQS would: each invocation goes on where the last stopped, none fails.
    let invocations = 1;
    while (sent.length) {
      const body = sent.shift()!;
      const next = await ingest(sqsEvent([body]), context(budget()));
      expect(next.batchItemFailures).toEqual([]);
      invocations++;
      expect(invocations).toBeLessThan(60);
    }
    expect(invocations).toBeGreaterThan(2);
    const after = (await store.client.send(new GetCommand({ TableName: 'ingest-fanout', Key: keys.user('usr_host'), ConsistentRead: true }))).Item;
    expect(after).not.toHaveProperty('pending');
    expect(after).not.toHaveProperty('pending_after');
    expect(readModel(await scanAll(store.client, 'ingest-fanout'))).toEqual(await freshLoadReadModel(store.client, 'ingest-fanout-expected', fold(d0, [rename]).dataset));
    // 80 linked events, each moving two lists (about 60 store calls apiece).
  }, 120_000);

  it('deletes an event with 40 RSVPs by continuations too', async () => {
    const guests = Array.from({ length: 40 }, (_, i) => ({ id: `usr_g${i}`, username: `guest${i}` }));
    const d0: Dataset = { users: [host, ...guests], events: [event(1)], rsvps: guests.map((g) => ({ event_id: 'evt_001', user_id: g.id, status: 'yes' as const, rsvp_date: '2026-11-02T00:00:00.000Z' })) };
    const del: Change = { type: 'event.deleted', version: 3, event_id: 'evt_001' };
    const ingest = await table('ingest-big-delete', d0);
    const budget = () => {
      let left = 60_000;
      return () => (left -= 20_000);
    };
    const first = await ingest(sqsEvent([JSON.stringify(del)]), context(budget()));
    expect(first.batchItemFailures).toEqual([]);
    expect(sent).toEqual([JSON.stringify(del)]);
    let invocations = 1;
    while (sent.length) {
      expect((await ingest(sqsEvent([sent.shift()!]), context(budget()))).batchItemFailures).toEqual([]);
      invocations++;
      expect(invocations).toBeLessThan(40);
    }
    expect(invocations).toBeGreaterThan(1);
    expect(readModel(await scanAll(store.client, 'ingest-big-delete'))).toEqual(await freshLoadReadModel(store.client, 'ingest-big-delete-expected', fold(d0, [del]).dataset));
  });

  it('fails the record (SQS redelivers it) only when its continuation cannot be sent', async () => {
    const events = Array.from({ length: 20 }, (_, i) => event(i));
    const d0: Dataset = { users: [host], events, rsvps: [] };
    const rename: Change = { type: 'user.upserted', version: 5, user: { ...host, username: 'the-host' } };
    await ensureTable(store.client, 'ingest-nosend');
    await writeDataset(store.client, 'ingest-nosend', d0);
    const failing = buildIngest({ client: store.client, tableName: 'ingest-nosend', logger, metrics: recordingMetrics(), reserveMs: 1_000, continueLater: () => Promise.reject(new Error('SQS unavailable')) });
    const out = await failing(sqsEvent([JSON.stringify(rename)]), context(() => 0));
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
  });
});
