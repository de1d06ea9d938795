/**
 * A throttle uses up none of a record's deliveries (issue 57, item 3): the
 * ingest handler, its table client throttled through the SDK's retries,
 * answers the throttled record done and sends it to the queue again as a
 * new message (a fresh receive count), delayed by its backoff, its count of
 * throttles carried in the THROTTLES message attribute so the backoff goes
 * on growing across messages; only if that send fails does the record fail,
 * its own visibility set to the same backoff (SQS delivers it again then,
 * using a receive). The rest of its batch applies either way.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Context } from 'aws-lambda';
import { fixedClock } from '../../lambdas/core/clock.js';
import { THROTTLE_CAP_SECONDS, throttleVisibility } from '../../lambdas/core/retry-backoff.js';
import { THROTTLES_ATTRIBUTE, buildIngest, throttlesOf, type SendAgain } from '../../lambdas/ingest/handler.js';
import { createWriteClient } from '../../lambdas/store/table/client.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { sqsEvent } from '../support/events.js';
import { host, party } from '../support/party.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';
import { ThrottleWindow, toPartition } from '../support/throttle-window.js';

let store: TestStore;
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => store?.close());

const context = { awsRequestId: 'req', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
const guest = { id: 'usr_g1', username: 'g1' };
const rsvp = JSON.stringify({ type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: guest.id, status: 'yes', rsvp_date: '2026-11-21T12:00:00.000Z' } });
const rename = JSON.stringify({ type: 'user.upserted', version: 2, user: { ...guest, username: 'g1-renamed' } });

async function setUp(table: string, send: (body: string, again?: SendAgain) => Promise<void>) {
  await ensureTable(store.client, table);
  await writeDataset(store.client, table, { users: [host, guest], events: [party], rsvps: [] });
  const window = new ThrottleWindow(toPartition(`EVENT#${party.id}`));
  const client = window.attach(createWriteClient({ endpoint: store.endpoint }));
  const hidden: [string, number][] = [];
  const metrics = recordingMetrics();
  const ingest = buildIngest({ client, tableName: table, logger: recordingLogger(), metrics, clock: fixedClock('2026-11-21T12:00:00.000Z'), continueLater: send, retryIn: async (h, s) => void hidden.push([h, s]), random: () => 0.5 });
  return { ingest, window, hidden, metrics, close: () => client.destroy() };
}

it('sends a throttled record again, delayed, its throttles counted across messages; the rest of its batch applies; no receive is used', async () => {
  const sent: { body: string; again?: SendAgain }[] = [];
  const t = await setUp('resend-throttle', async (body, again) => void sent.push({ body, ...(again ? { again } : {}) }));
  t.window.open();
  // The RSVP's writes are on the throttled event partition; the rename of a user with no link touches none of it.
  const event = sqsEvent([rsvp, rename]);
  expect((await t.ingest(event, context)).batchItemFailures).toEqual([]);
  expect(sent).toEqual([{ body: rsvp, again: { delaySeconds: throttleVisibility(1, () => 0.5), throttles: 1 } }]);
  // Its next message, throttled again: the count goes on from the attribute, the delay with it (to the cap).
  for (const [before, expected] of [[1, 2], [9, 10], [40, 41]] as const) {
    sent.length = 0;
    const again = sqsEvent([rsvp]);
    again.Records[0]!.messageAttributes = { [THROTTLES_ATTRIBUTE]: { stringValue: String(before), dataType: 'Number', stringListValues: [], binaryListValues: [] } };
    expect(throttlesOf(again.Records[0]!)).toBe(before);
    expect((await t.ingest(again, context)).batchItemFailures).toEqual([]);
    expect(sent).toEqual([{ body: rsvp, again: { delaySeconds: throttleVisibility(expected, () => 0.5), throttles: expected } }]);
  }
  expect(sent[0]!.again!.delaySeconds).toBeLessThanOrEqual(THROTTLE_CAP_SECONDS);
  expect(t.hidden).toEqual([]);
  expect(t.metrics.value('Changes', { result: 'throttled' })).toHaveLength(4);
  // Once the throttle is over, its next message applies.
  t.window.close();
  expect((await t.ingest(sqsEvent([rsvp]), context)).batchItemFailures).toEqual([]);
  expect(t.metrics.value('Changes', { result: 'applied' }).length).toBeGreaterThanOrEqual(2);
  t.close();
});

it('fails a throttled record whose send fails, with its own visibility set to the backoff (SQS delivers it again)', async () => {
  const t = await setUp('resend-fails', async () => {
    throw new Error('SQS unavailable');
  });
  t.window.open();
  const event = sqsEvent([rsvp]);
  event.Records[0]!.messageAttributes = { [THROTTLES_ATTRIBUTE]: { stringValue: '3', dataType: 'Number', stringListValues: [], binaryListValues: [] } };
  expect((await t.ingest(event, context)).batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
  expect(t.hidden).toEqual([['r0', throttleVisibility(4, () => 0.5)]]);
  t.close();
});

it('reads no throttles from an attribute that is not a positive whole number', () => {
  const of = (stringValue: string | undefined) => throttlesOf({ messageAttributes: stringValue === undefined ? {} : { [THROTTLES_ATTRIBUTE]: { stringValue, dataType: 'Number', stringListValues: [], binaryListValues: [] } } });
  expect([of(undefined), of('x'), of('-2'), of('1.5'), of('7')]).toEqual([0, 0, 0, 0, 7]);
});
