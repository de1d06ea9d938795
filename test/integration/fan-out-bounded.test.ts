/**
 * Every fan-out progresses in every invocation (issue 57, item 4): a
 * change whose work grows with data (a host's rename over their events, a
 * user's deletion over the events they answered, an event's hide or
 * deletion over its guests), through the real ingest, each delivery held to
 * the ingest's 120 s as a budget of calls (each call costs 30 ms of the
 * modelled clock, so 4,000 calls is the timeout, and its 15 s reserve 500;
 * a call past the timeout fails the invocation, as Lambda cuts it), SQS
 * played as it behaves (scripts/throttle-burst.ts: a continuation is a new
 * message).
 *
 * Held: no delivery is cut off; the change takes several deliveries (the
 * work is more than one invocation's), each going on where the last stopped
 * (the saved progress, `pending_after`, or the tombstones already written);
 * the table then equals a fresh load of the change's fold.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { fold } from '../../lambdas/core/fold.js';
import { WAITING_RECEIVES } from '../../lambdas/core/retry-backoff.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { playQueue, queueSends } from '../../scripts/throttle-burst.js';
import { directClient } from '../support/direct-dynalite.js';
import { startInProcessDynalite, type InProcessStore } from '../support/in-process-dynalite.js';
import { budgetedClient } from '../support/invocation-budget.js';
import { clock, host, party } from '../support/party.js';
import { freshLoadReadModel, readModel, scanAll } from '../support/read-model.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';

const TIMEOUT_MS = 120_000;
const MS_PER_CALL = 30;
const CALLS_IN_ONE_INVOCATION = TIMEOUT_MS / MS_PER_CALL;
const N = 240;

let store: InProcessStore;
beforeAll(async () => {
  store = await startInProcessDynalite();
});
afterAll(async () => store?.close());

const guests = Array.from({ length: N }, (_, i) => ({ id: `usr_g${String(i).padStart(4, '0')}`, username: `g${i}` }));
const events = Array.from({ length: N }, (_, i) => ({ ...party, id: `evt_${String(i).padStart(4, '0')}`, title: `Night ${i}` }));
/** The host's N events, each answered by the fan; and the party, answered by N guests. */
const fan = { id: 'usr_fan', username: 'fan' };
const d0: Dataset = {
  users: [host, fan, ...guests],
  events: [party, ...events],
  rsvps: [...events.map((e) => ({ event_id: e.id, user_id: fan.id, status: 'yes' as const, rsvp_date: '2026-11-02T00:00:00.000Z' })), ...guests.map((g) => ({ event_id: party.id, user_id: g.id, status: 'maybe' as const, rsvp_date: '2026-11-02T00:00:00.000Z' }))],
};

const cases: [string, Change][] = [
  [`a host's rename over their ${N + 1} events`, { type: 'user.upserted', version: 5, user: { ...host, username: 'the-host' } }],
  [`a user's deletion over the ${N} events they answered`, { type: 'user.deleted', version: 5, user_id: fan.id }],
  [`an event's hide over its ${N} guests`, { type: 'event.upserted', version: 5, event: { ...party, visibility: 'private' } }],
  [`an event's deletion over its ${N} guests`, { type: 'event.deleted', version: 5, event_id: party.id }],
];

describe.each(cases)('%s', (name, change) => {
  it('goes on invocation after invocation, none cut off, to the fresh load of its fold', async () => {
    const table = `bounded-${name.split(' ')[1]!.replace(/[^a-z]/g, '')}-${change.type.replace('.', '-')}`;
    await ensureTable(directClient(store.call), table);
    await writeDataset(directClient(store.call), table, d0);
    const timed = budgetedClient(store, CALLS_IN_ONE_INVOCATION, 'Task timed out after 120.00 seconds');
    const sends = queueSends();
    const metrics = recordingMetrics();
    const ingest = buildIngest({ client: timed.client, tableName: table, logger: recordingLogger(), metrics, clock, continueLater: sends.continueLater });
    const perDelivery: number[] = [];
    const delivered = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
      timed.reset();
      try {
        return await ingest(event, { ...context, getRemainingTimeInMillis: () => TIMEOUT_MS - timed.calls() * MS_PER_CALL });
      } finally {
        perDelivery.push(timed.calls());
      }
    };
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const run = await playQueue({ bodies: [JSON.stringify(change)], start: now, spacingMs: 0, windowEnds: now, ingest: delivered, visibility: new Map(), sends, setNow: (t) => void (now = t), tick: () => undefined, maxReceives: WAITING_RECEIVES });
    expect(metrics.value('Changes', { result: 'failed' })).toEqual([]);
    expect(Math.max(...perDelivery)).toBeLessThanOrEqual(CALLS_IN_ONE_INVOCATION);
    // More than one invocation's work, each delivery a continuation of the last (none of them received twice).
    expect(run.messages[0]!.deliveries).toBeGreaterThan(1);
    expect(run.messages[0]!.deliveries).toBe(run.messages[0]!.messages);
    expect(readModel(await scanAll(directClient(store.call), table))).toEqual(await freshLoadReadModel(directClient(store.call), `${table}-expected`, fold(d0, [change]).dataset));
    process.stdout.write(`${name}: ${run.messages[0]!.deliveries} deliveries of at most ${Math.max(...perDelivery)} calls (${perDelivery.reduce((a, b) => a + b, 0)} in all)\n`);
  }, 300_000);
});
