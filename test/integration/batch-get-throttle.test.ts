/**
 * A throttle that lasts, on every read by key (lambdas/store/table/batch-get.ts).
 * DynamoDB answers a throttled BatchGetItem with keys left in
 * `UnprocessedKeys`; four of the store's five BatchGetItem loops used to send
 * them again at once and without bound (a hot loop until the Lambda timed
 * out). All five now share one: backoff with jitter, bounded attempts, then
 * UnprocessedKeysError, a throttle. Held here, on a real store with a window
 * of throttled BatchGetItem calls (test/support/unprocessed-keys.ts):
 *
 * - for each of the five reads (discovery's page, a profile list, a feed
 *   page's member states, the change path's getMany and users), for any
 *   window length, attempt budget and number of keys: the calls sent are
 *   exactly those the rule plays out, never more than the budget; the waits
 *   between grow (each drawn in [½, 1] of a ceiling that doubles); the
 *   answer is the unthrottled one exactly when the window ends inside the
 *   attempts, else the read fails as a throttle (never a partial answer);
 * - several chunks of 100 keys each get their own budget;
 * - the routes answer such a read `503` with `Retry-After` and the envelope,
 *   never `500` and never a partial page (search and a profile list);
 * - the ingest backs a record off as throttled (not failed) when getMany
 *   uses up its attempts.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context, SQSEvent } from 'aws-lambda';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { configSchema } from '../../lambdas/core/config.js';
import { MESSAGES, SERVICE_BUSY_RETRY_AFTER_SECONDS } from '../../lambdas/core/errors.js';
import { placeOf } from '../../lambdas/core/place.js';
import { createDeps } from '../../lambdas/http/deps.js';
import { build as buildSearch } from '../../lambdas/handlers/search-events.js';
import { build as buildProfile } from '../../lambdas/handlers/get-user-profile-events.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { FeedReads } from '../../lambdas/store/feeds/feed-reads.js';
import { UnprocessedKeysError, type BatchGetOptions } from '../../lambdas/store/table/batch-get.js';
import { TableIO } from '../../lambdas/store/table/table-io.js';
import { isThrottle } from '../../lambdas/store/table/throttling.js';
import { keys } from '../../lambdas/store/table/table.js';
import { EXAMPLES } from '../../lambdas/openapi/examples.generated.js';
import { proxyEvent } from '../support/events.js';
import { testKeyring } from '../support/feed-keys.js';
import { host } from '../support/party.js';
import { useFileStore } from '../support/store.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';
import { chunkOutcome, unprocessedKeysWindow } from '../support/unprocessed-keys.js';

const store = useFileStore();

const N = 6;
const fan = { id: 'usr_fan', username: 'fan' };
const others = Array.from({ length: N - 2 }, (_, i) => ({ id: `usr_o${i}`, username: `o${i}` }));
const users = [host, fan, ...others];
const events = Array.from({ length: N }, (_, i) => ({
  id: `evt_e${i}`,
  creator_id: host.id,
  title: `Event ${i}`,
  start_date: `2027-01-${String(10 + i).padStart(2, '0')}T20:00:00.000Z`,
  timezone: 'UTC',
  status: 'published' as const,
  visibility: 'public' as const,
  created_at: '2026-11-01T00:00:00.000Z',
  location: { name: 'Hall', city: 'Lisbon', country: 'PT' },
}));
const dataset: Dataset = { users, events, rsvps: events.map((e) => ({ event_id: e.id, user_id: fan.id, status: 'yes' as const, rsvp_date: '2026-11-20T12:00:00.000Z' })) };

let tableName: Promise<string> | undefined;
const table = () => (tableName ??= store.loaded('batch-get', dataset));

/** The five reads by key, each over its first `k` keys (1..N), as a comparable value. */
const READS: Record<string, (client: DynamoDBDocumentClient, table: string, opts: BatchGetOptions, k: number) => Promise<unknown>> = {
  "discovery's page": async (client, t, opts, k) =>
    (await new DynamoRepository(client, t, opts).searchEvents({ place: placeOf({ city: 'Lisbon' }), from: '2027-01-01', to: '2027-01-31', limit: k })).events.map((e) => e.event_id),
  'a profile list': async (client, t, opts, k) => (await new DynamoRepository(client, t, opts).listUserEvents(fan.username, 'PROFILE', {}, k)).map((e) => e.event_id),
  "a feed page's member states": async (client, t, opts, k) => [...(await new FeedReads(client, t, opts).feedStates('EVENTS', events.slice(0, k).map((e) => e.id))).entries()].map(([m, s]) => [m, s.shown]),
  "the change path's getMany": async (client, t, opts, k) => [...(await new TableIO(client, t, opts).getMany(events.slice(0, k).map((e) => keys.eventSource(e.id)))).keys()].sort(),
  "the change path's users": async (client, t, opts, k) => [...(await new TableIO(client, t, opts).users(users.slice(0, k).map((u) => u.id))).keys()].sort(),
};

/** Each wait in [½, 1] of a ceiling doubling from `base`: growing, bounded by the attempts. */
function expectGrowing(sleeps: readonly number[], base: number): void {
  sleeps.forEach((ms, i) => expect({ i, ms, inJitter: ms >= (base * 2 ** i) / 2 && ms <= base * 2 ** i }).toEqual({ i, ms, inJitter: true }));
  for (let i = 1; i < sleeps.length; i++) expect(sleeps[i]!).toBeGreaterThanOrEqual(sleeps[i - 1]!);
}

describe.each(Object.entries(READS))('%s under a BatchGetItem throttle window', (_name, read) => {
  it('answers exactly the unthrottled answer when the window ends inside its attempts, else fails as a throttle; calls bounded, waits growing', async () => {
    const t = await table();
    const client = store.newClient();
    const window = unprocessedKeysWindow(client);
    const base = 20;
    const unthrottled = await Promise.all(Array.from({ length: N }, (_, i) => read(client, t, {}, i + 1)));
    // The reads really read k keys: k events, k members, k items.
    unthrottled.forEach((answer, i) => expect((answer as unknown[]).length).toBe(i + 1));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: N }), async (length, attempts, k) => {
        const sleeps: number[] = [];
        const before = window.calls;
        window.open(length);
        const answer = await read(client, t, { maxAttempts: attempts, baseDelayMs: base, sleep: async (ms) => void sleeps.push(ms) }, k).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
        window.open(0);
        const expected = chunkOutcome(k, length, attempts);
        expect(window.calls - before).toBe(expected.calls);
        expect(sleeps).toHaveLength(expected.calls - 1);
        expectGrowing(sleeps, base);
        if (expected.ends === 'page') expect(answer).toEqual({ value: unthrottled[k - 1] });
        else {
          expect('error' in answer && (answer.error as Error).name).toBe(expected.ends);
          expect('error' in answer && isThrottle(answer.error)).toBe(true);
        }
      }),
      { numRuns: 40 },
    );
    client.destroy();
  });
});

describe('several chunks', () => {
  it('each chunk of 100 keys gets its own attempts; a window that outlasts them fails the read with UnprocessedKeysError', async () => {
    const t = await table();
    const client = store.newClient();
    const window = unprocessedKeysWindow(client);
    const wanted = Array.from({ length: 250 }, (_, i) => keys.eventSource(i < N ? events[i]!.id : `evt_absent${i}`));
    const sleeps: number[] = [];
    const io = new TableIO(client, t, { maxAttempts: 4, sleep: async (ms) => void sleeps.push(ms) });
    window.open(Number.POSITIVE_INFINITY);
    await expect(io.getMany(wanted)).rejects.toBeInstanceOf(UnprocessedKeysError);
    expect(window.calls).toBe(3 * 4);
    expect(sleeps).toHaveLength(3 * 3);
    // A window of two calls: the chunks' first calls throttled or not, every item read.
    window.open(2);
    expect([...(await io.getMany(wanted)).keys()].sort()).toEqual(events.map((e) => `EVENT#${e.id}\u0000SRC`).sort());
    client.destroy();
  });
});

describe('the routes under a throttle that lasts', () => {
  const ctx = { awsRequestId: 'r' } as Context;
  const config = configSchema.parse({ tableName: 'unused', serviceName: 'events', siteUrl: 'https://s.example', userEventsVariant: 'typed' });
  const routes: [string, typeof buildSearch, () => APIGatewayProxyEvent][] = [
    ['search', buildSearch, () => proxyEvent('/events', {}, { city: 'Lisbon', from: '2027-01-01', to: '2027-01-31', limit: String(N) })],
    ['a profile list', buildProfile, () => proxyEvent('/users/{username}/profile-events', { username: fan.username }, { since: '2027-01-01', to: '2027-01-31' })],
  ];

  it.each(routes)('%s: for any window and attempt budget, the exact page or 503 + Retry-After + envelope, never a partial page, never 500', async (_name, build, event) => {
    const t = await table();
    const client = store.newClient();
    const window = unprocessedKeysWindow(client);
    const logger = recordingLogger();
    const handler = (opts: BatchGetOptions) => {
      const repo = new DynamoRepository(client, t, opts);
      return build(createDeps(config, { reader: repo, search: repo, keys: repo, cursorKeys: testKeyring, clock: () => new Date('2026-11-21T12:00:00.000Z'), logger }));
    };
    const exact = await handler({})(event(), ctx);
    expect(exact.statusCode).toBe(200);
    expect((JSON.parse(exact.body) as { data: unknown[] | { events: unknown[] } }).data).toEqual(expect.anything());
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 1, max: 7 }), async (length, attempts) => {
        window.open(length);
        const res = await handler({ maxAttempts: attempts, sleep: async () => {} })(event(), ctx);
        window.open(0);
        expect([200, 503]).toContain(res.statusCode);
        if (res.statusCode === 200) expect(res.body).toBe(exact.body);
        else {
          expect(res.headers?.['Retry-After']).toBe(String(SERVICE_BUSY_RETRY_AFTER_SECONDS));
          expect(JSON.parse(res.body)).toEqual({ success: false, message: MESSAGES.serviceBusy });
          expect(JSON.parse(res.body)).toEqual(EXAMPLES.serviceBusy);
        }
        expect(res.statusCode === 200).toBe(chunkOutcome(N, length, attempts).ends === 'page');
      }),
      { numRuns: 30 },
    );
    // Logged as a warning, not as an unhandled error.
    expect(logger.entries.filter((l) => l.level === 'ERROR')).toEqual([]);
    expect(logger.entries.some((l) => l.message === 'Store throttled; answered 503')).toBe(true);
    client.destroy();
  });
});

describe('the ingest when getMany uses up its attempts', () => {
  it('backs the record off as throttled, with its own visibility, and applies it once the window is over', async () => {
    const t = await store.loaded('batch-get-ingest', dataset);
    const client = store.newClient();
    const window = unprocessedKeysWindow(client);
    const metrics = recordingMetrics();
    const visibility = new Map<string, number>();
    const sentAgain: { body: string; delaySeconds: number }[] = [];
    const sleeps: number[] = [];
    const ingest = buildIngest({
      client,
      tableName: t,
      logger: recordingLogger(),
      metrics,
      continueLater: async (body, again) => void sentAgain.push({ body, delaySeconds: again?.delaySeconds ?? 0 }),
      retryIn: async (handle, seconds) => void visibility.set(handle, seconds),
      random: () => 0,
      batchGet: { maxAttempts: 3, sleep: async (ms) => void sleeps.push(ms) },
    });
    // An RSVP reads its event, its user and more by key: every BatchGetItem throttled.
    const change = { type: 'rsvp.upserted', version: 1, occurred_at: '2026-11-21T12:00:00.000Z', rsvp: { event_id: events[0]!.id, user_id: others[0]!.id, status: 'yes', rsvp_date: '2026-11-21T12:00:00.000Z' } };
    const sqs = (receives: number): SQSEvent => ({
      Records: [{ messageId: 'm1', receiptHandle: 'h1', body: JSON.stringify(change), attributes: { ApproximateReceiveCount: String(receives) }, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn', awsRegion: 'us-east-1' } as unknown as SQSEvent['Records'][number]],
    });
    const lambda = { getRemainingTimeInMillis: () => 60_000, awsRequestId: 'r' } as unknown as Context;
    window.open(Number.POSITIVE_INFINITY);
    // A throttle uses none of the record's receives (issue 57 r2): it is sent again as a new, delayed message, and this delivery is done.
    expect(await ingest(sqs(1), lambda)).toEqual({ batchItemFailures: [] });
    expect(metrics.value('Changes', { result: 'throttled' })).toEqual([1]);
    expect(metrics.value('Changes', { result: 'failed' })).toEqual([]);
    expect(sentAgain).toEqual([{ body: JSON.stringify(change), delaySeconds: expect.any(Number) }]);
    expect(sentAgain[0]!.delaySeconds).toBeGreaterThan(0);
    expect(sleeps.length).toBeGreaterThan(0);
    expect(sleeps.length % 2).toBe(0); // two waits per throttled chunk of three attempts
    window.open(0);
    expect(await ingest(sqs(2), lambda)).toEqual({ batchItemFailures: [] });
    expect(metrics.value('Changes', { result: 'applied' })).toEqual([1]);
    client.destroy();
  });
});
