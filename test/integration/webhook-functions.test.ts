/**
 * The webhooks' Lambda entries (lambdas/delivery/fan-out-handler.ts,
 * delivery-handler.ts) on a real store with the real engine: what each does
 * with its event sources' batches (a DynamoDB Streams batch of feed-head
 * writes, the fan-out's own queue, the FIFO wake-ups) and how the engine's
 * outcomes become queue operations (deleted, a new wake-up in the group, a
 * message made invisible until its retry is due, a failure that comes back).
 * The queues are recorded, not run: the rehearsal of cdk.out runs them
 * (test/rehearsal/webhooks.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Context, DynamoDBStreamEvent, SQSEvent, SQSRecord } from 'aws-lambda';
import { fixedClock } from '../../lambdas/core/clock.js';
import { feedScopes, sealCursor, staticKeyring } from '../../lambdas/core/feed-cursor.js';
import type { Change } from '../../lambdas/core/changes.js';
import { resolveScope, type WebhookScope } from '../../lambdas/core/webhook-rules.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { DeliveryState } from '../../lambdas/store/webhooks/delivery-state.js';
import { localSecretBox } from '../../lambdas/store/webhooks/secret-box.js';
import { WebhookRecords } from '../../lambdas/store/webhooks/webhook-records.js';
import type { ScopeEntryState } from '../../lambdas/store/webhooks/webhook-items.js';
import { buildFanOutFunction } from '../../lambdas/delivery/fan-out-handler.js';
import { PARKED_RENEW_RECEIVES, buildDeliveryFunction } from '../../lambdas/delivery/delivery-handler.js';
import { HIDDEN_RECHECK_SECONDS } from '../../lambdas/core/webhook-rules.js';
import { WEBHOOKS } from '../../lib/webhooks.js';
import type { FanOutTask, Nudge } from '../../lambdas/delivery/fan-out.js';
import type { PostOutcome, PostRequest } from '../../lambdas/delivery/outbound.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { METRICS, type MetricsSink } from '../../lambdas/http/metrics.js';
import { throttleVisibility } from '../../lambdas/core/retry-backoff.js';
import { newWebhookSecret } from '../../lambdas/core/webhook-signing.js';
import { demoDataset, NOW } from '../support/fixtures.js';
import { startTestStore, type TestStore } from '../support/store.js';

let store: TestStore;
const keyring = staticKeyring(randomBytes(32));
const secrets = localSecretBox();
const clock = fixedClock(NOW);
let seq = 0;
/** Each webhook's secret in clear, to look for in what the functions log. */
const opened = new Map<string, string>();
/** Every line the delivery function logged, with its fields. */
const lines: string[] = [];
const recordingLogger = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, (message: string, ...fields: unknown[]) => void lines.push(JSON.stringify([level, message, ...fields]))])) as unknown as typeof silentLogger;

beforeAll(async () => {
  store = await startTestStore(demoDataset());
});
afterAll(async () => store?.close());

const context = (remainingMs: () => number = () => 60_000) => ({ awsRequestId: 'req', getRemainingTimeInMillis: remainingMs }) as unknown as Context;

/** A webhook of `scope` at its scope's head, its scope entry in `state`. */
async function hook(scope: WebhookScope, state: ScopeEntryState = 'active', url = 'https://hooks.example.com/in'): Promise<string> {
  const records = new WebhookRecords(store.client, store.tableName);
  const { feed } = resolveScope(scope);
  const webhookId = `wh_${String(++seq).padStart(20, '0')}`;
  const cursor = await sealCursor({ scope: feed, mode: 'entries', position: await store.repository.feedHead(feed), after: '', asOf: Math.floor(clock().getTime() / 1000) }, keyring);
  await records.putScopeEntry(feed, webhookId, state);
  const secret = newWebhookSecret();
  opened.set(webhookId, secret);
  await records.putWebhook({ type: 'WEBHOOK', webhook_id: webhookId, user_id: 'usr_alice', key_id: 'key_0000000001', scope, feed, url, secret: await secrets.seal(secret, webhookId), state: 'active', cursor, created_at: clock().toISOString() });
  return webhookId;
}

const streamRecord = (pk: string, sk: string, sequence: string) => ({ eventSource: 'aws:dynamodb', eventName: 'MODIFY', dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } }, SequenceNumber: sequence, StreamViewType: 'KEYS_ONLY' } });
const sqsRecord = (body: unknown, attrs: Partial<SQSRecord['attributes']> = {}, id = `m${++seq}`): SQSRecord =>
  ({ messageId: id, receiptHandle: `rh-${id}`, body: typeof body === 'string' ? body : JSON.stringify(body), eventSource: 'aws:sqs', attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(clock().getTime()), ...attrs }, messageAttributes: {} }) as unknown as SQSRecord;

describe('the fan-out function', () => {
  let woken: Nudge[];
  let queued: FanOutTask[];
  let nudgeCounts: number[];
  const metrics: MetricsSink = { publish: (_d, values) => values.forEach((v) => v.name === METRICS.webhookNudges && nudgeCounts.push(v.value)) };
  const build = (opts: { pageSize?: number; maxPages?: number; maxWakeUps?: number; failWakeUps?: boolean } = {}) =>
    buildFanOutFunction({
      state: new DeliveryState(store.client, store.tableName),
      wakeUps: async (n) => {
        if (opts.failWakeUps) throw new Error('SQS down');
        woken.push(...n);
      },
      continueLater: async (t) => void queued.push(...t),
      logger: silentLogger,
      metrics,
      pageSize: opts.pageSize,
      maxPages: opts.maxPages,
      maxWakeUps: opts.maxWakeUps,
    });
  beforeEach(() => {
    woken = [];
    queued = [];
    nudgeCounts = [];
  });

  it("wakes each active webhook of every scope a stream batch moved once, with the scope's latest sequence number; retrying and disabled ones are left to their own schedule", async () => {
    const [a, b] = [await hook({ type: 'catalogue' }), await hook({ type: 'catalogue' })];
    await hook({ type: 'catalogue' }, 'retrying');
    await hook({ type: 'catalogue' }, 'disabled');
    const host = await hook({ type: 'host', userId: 'usr_alice' });
    const event = {
      Records: [
        streamRecord(`FEED#${feedScopes.catalogue()}`, 'H#0', '100'),
        streamRecord(`FEED#${feedScopes.host('usr_alice')}`, 'H#3', '101'),
        streamRecord(`FEED#${feedScopes.catalogue()}`, 'H#5', '1000'),
        // Not a head (the event source's filter keeps these out; the function holds it anyway).
        streamRecord('EVENT#evt_jazz01', 'EVENT', '1001'),
      ],
    } as unknown as DynamoDBStreamEvent;
    await build()(event, context());
    // The ids are minted, so their order is not known here: both sides sorted the one way.
    const byId = (x: { webhookId: string }, y: { webhookId: string }) => (x.webhookId < y.webhookId ? -1 : x.webhookId > y.webhookId ? 1 : 0);
    expect(woken.filter((n) => [a, b, host].includes(n.webhookId)).sort(byId)).toEqual(
      [
        { webhookId: a, dedupId: `${a}.1000` },
        { webhookId: b, dedupId: `${b}.1000` },
        { webhookId: host, dedupId: `${host}.101` },
      ].sort(byId),
    );
    expect(woken).toHaveLength(3);
    expect(queued).toEqual([]);
    expect(nudgeCounts).toEqual([3]);
  });

  it('sends at most maxWakeUps wake-ups an invocation and queues the rest of the scope, which its queue then finishes', async () => {
    const place = { type: 'place', city: 'Lisbon' } as const;
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await hook(place));
    const feed = resolveScope(place).feed;
    const fn = build({ pageSize: 2, maxWakeUps: 4 });
    await fn({ Records: [streamRecord(`FEED#${feed}`, 'H#1', '7')] } as unknown as DynamoDBStreamEvent, context());
    expect(woken.map((n) => n.webhookId)).toEqual(ids.slice(0, 4));
    expect(queued).toEqual([{ feed, token: '7', after: ids[3] }]);
    const rest = queued.splice(0);
    const answer = await fn({ Records: rest.map((t) => sqsRecord(t)) } as SQSEvent, context());
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(woken.map((n) => n.webhookId)).toEqual(ids);
    expect(new Set(woken.map((n) => n.dedupId.split('.')[1]))).toEqual(new Set(['7']));
    expect(queued).toEqual([]);
  });

  it('reads at most maxPages pages an invocation (a scope with no webhook costs one), and with too little time left none: the rest is queued', async () => {
    await build({ maxPages: 1 })({ Records: [streamRecord('FEED#HOST#usr_carol', 'H#0', '5'), streamRecord('FEED#HOST#usr_dave', 'H#0', '6')] } as unknown as DynamoDBStreamEvent, context());
    expect(queued).toEqual([{ feed: 'HOST#usr_dave', token: '6' }]);
    queued = [];
    await build()({ Records: [streamRecord('FEED#EVENTS', 'H#0', '9'), streamRecord('FEED#HOST#usr_bob', 'H#0', '8')] } as unknown as DynamoDBStreamEvent, context(() => 1_000));
    expect(woken).toEqual([]);
    expect(queued).toEqual([
      { feed: 'EVENTS', token: '9' },
      { feed: 'HOST#usr_bob', token: '8' },
    ]);
  });

  it('fails a stream batch whose wake-ups could not be sent (Lambda retries it), and reports a continuation that failed on its own; an unreadable one is dropped', async () => {
    await hook({ type: 'guests', eventId: 'evt_jazz01' });
    const failing = build({ failWakeUps: true });
    await expect(failing({ Records: [streamRecord('FEED#GUESTS#evt_jazz01', 'H#0', '1')] } as unknown as DynamoDBStreamEvent, context())).rejects.toThrow('SQS down');
    const good = sqsRecord({ feed: 'GUESTS#evt_jazz01', token: '1' });
    expect(await failing({ Records: [good, sqsRecord('not json')] } as SQSEvent, context())).toEqual({ batchItemFailures: [{ itemIdentifier: good.messageId }] });
  });
});

describe('the delivery function', () => {
  let posts: PostRequest[];
  let answer: PostOutcome;
  let wakeUps: Nudge[];
  let visibility: [string, number][];
  let lags: number[];
  const metrics: MetricsSink = { publish: (_d, values) => values.forEach((v) => v.name === METRICS.webhookWakeLag && lags.push(v.value)) };
  let throwFrom: Error | undefined;
  const build = (opts: { maxDeliveries?: number; failWakeUps?: boolean; now?: () => Date } = {}) => {
    const state = new DeliveryState(store.client, store.tableName);
    return buildDeliveryFunction({
      delivery: {
        state: throwFrom ? Object.assign(Object.create(state) as DeliveryState, { webhook: async () => Promise.reject(throwFrom) }) : state,
        feeds: store.repository,
        events: store.repository,
        keyring,
        secrets,
        post: async (req) => (posts.push(req), answer),
        siteUrl: 'https://events.example.com',
        clock: opts.now ?? clock,
        random: () => 0.5,
        logger: recordingLogger,
        metrics,
      },
      wakeUps: async (n) => {
        if (opts.failWakeUps) throw new Error('SQS down');
        wakeUps.push(...n);
      },
      retryIn: async (handle, seconds) => void visibility.push([handle, seconds]),
      logger: recordingLogger,
      metrics,
      clock: () => new Date(Date.parse(NOW) + 2_500),
      maxDeliveries: opts.maxDeliveries,
      random: () => 0,
    });
  };
  beforeEach(() => {
    posts = [];
    answer = { kind: 'answered', status: 204 };
    wakeUps = [];
    visibility = [];
    lags = [];
    throwFrom = undefined;
  });
  let version = 5_000;
  const edit = async (title: string) => {
    const event = demoDataset().events.find((e) => e.id === 'evt_jazz01')!;
    await new ChangeApplier(store.client, store.tableName, { clock }).apply({ type: 'event.upserted', version: ++version, event: { ...event, title } } as Change);
  };
  const wakeUp = (webhookId: string, attrs: Partial<SQSRecord['attributes']> = {}) => sqsRecord({ webhookId }, { MessageGroupId: webhookId, ...attrs });

  it("delivers what the webhook has not had and deletes every message of its group; the wait is counted at a message's first receive only", async () => {
    const id = await hook({ type: 'host', userId: 'usr_alice' });
    await edit('Jazz, first');
    const out = await build()({ Records: [wakeUp(id), wakeUp(id, { ApproximateReceiveCount: '3' })] } as SQSEvent, context());
    expect(out).toEqual({ batchItemFailures: [] });
    expect(posts.map((p) => JSON.parse(p.body).changes.map((c: { id: string }) => c.id))).toEqual([['evt_jazz01']]);
    expect(lags).toEqual([2.5]);
  });

  it('a failed attempt: the first message of the group is kept invisible until the retry is due and reported failed, the others deleted', async () => {
    const id = await hook({ type: 'catalogue' });
    await edit('Jazz, second');
    answer = { kind: 'answered', status: 503 };
    const [first, second] = [wakeUp(id), wakeUp(id)];
    const out = await build()({ Records: [first, second] } as SQSEvent, context());
    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: first.messageId }] });
    // deliver.ts's first retry: 5 s drawn between half and all (random 0.5 → 4 s).
    expect(visibility).toEqual([[first.receiptHandle, 4]]);
    expect(posts).toHaveLength(1);
    // Received again before it is due (SQS's clock ahead of ours): made invisible for the time still to wait.
    visibility = [];
    const early = wakeUp(id, { ApproximateReceiveCount: '2' });
    expect(await build({ now: () => new Date(Date.parse(NOW) + 1_000) })({ Records: [early] } as SQSEvent, context())).toEqual({ batchItemFailures: [{ itemIdentifier: early.messageId }] });
    expect(visibility).toEqual([[early.receiptHandle, 3]]);
    expect(posts).toHaveLength(1);
    // Due: the same delivery is sent again, acknowledged, and the message deleted.
    answer = { kind: 'answered', status: 200 };
    expect(await build({ now: () => new Date(Date.parse(NOW) + 5_000) })({ Records: [wakeUp(id, { ApproximateReceiveCount: '3' })] } as SQSEvent, context())).toEqual({ batchItemFailures: [] });
    expect(posts.map((p) => p.headers['webhook-id'])).toEqual([posts[0]!.headers['webhook-id'], posts[0]!.headers['webhook-id']]);
    // What it logged of the failure names ids and the status, never the secret or the body sent.
    expect(lines.some((l) => l.includes('Webhook delivery failed') && l.includes(id) && l.includes('503'))).toBe(true);
    expect(lines.filter((l) => l.includes(opened.get(id)!) || l.includes('Jazz, second'))).toEqual([]);
  });

  it("its bound reached with more to send: a new wake-up in the group, its deduplication id the message's it follows, and every message deleted", async () => {
    const id = await hook({ type: 'catalogue' });
    await edit('Jazz, third');
    const records = [wakeUp(id), wakeUp(id)];
    expect(await build({ maxDeliveries: 0 })({ Records: records } as SQSEvent, context())).toEqual({ batchItemFailures: [] });
    expect(wakeUps).toEqual([{ webhookId: id, dedupId: `${id}.more.${records[1]!.messageId}` }]);
    expect(posts).toEqual([]);
    // The wake-up could not be queued: the message comes back at once instead.
    const again = wakeUp(id);
    expect(await build({ maxDeliveries: 0, failWakeUps: true })({ Records: [again] } as SQSEvent, context())).toEqual({ batchItemFailures: [{ itemIdentifier: again.messageId }] });
    expect(visibility).toEqual([[again.receiptHandle, 0]]);
  });

  it('no send starts without the time for its deadline: the run stops at once with more to do', async () => {
    const id = await hook({ type: 'catalogue' });
    await edit('Jazz, fourth');
    await build()({ Records: [wakeUp(id)] } as SQSEvent, context(() => 14_000));
    expect(posts).toEqual([]);
    expect(wakeUps.map((n) => n.webhookId)).toEqual([id]);
  });

  it('a throttle: the message comes back after the backoff it sets; another error after the queue\'s visibility timeout', async () => {
    const id = await hook({ type: 'catalogue' });
    throwFrom = Object.assign(new Error('slow down'), { name: 'ProvisionedThroughputExceededException', $retryable: { throttling: true } });
    const throttled = wakeUp(id, { ApproximateReceiveCount: '4' });
    expect(await build()({ Records: [throttled] } as SQSEvent, context())).toEqual({ batchItemFailures: [{ itemIdentifier: throttled.messageId }] });
    expect(visibility).toEqual([[throttled.receiptHandle, throttleVisibility(4, () => 0)]]);
    visibility = [];
    throwFrom = new Error('KMS down');
    const failed = wakeUp(id);
    expect(await build()({ Records: [failed] } as SQSEvent, context())).toEqual({ batchItemFailures: [{ itemIdentifier: failed.messageId }] });
    expect(visibility).toEqual([]);
  });

  it('runs each group of a batch once, the groups side by side; a message whose body names another webhook than its group is dropped unrun', async () => {
    const [a, b] = [await hook({ type: 'catalogue' }), await hook({ type: 'catalogue' })];
    await edit('Jazz, fifth');
    const forged = sqsRecord({ webhookId: a }, { MessageGroupId: b });
    expect(await build()({ Records: [wakeUp(a), forged, wakeUp(a)] } as SQSEvent, context())).toEqual({ batchItemFailures: [] });
    expect(posts.map((p) => JSON.parse(p.body).webhook_id)).toEqual([a]);
  });

  it('a scope not shown (a guest list whose event is hidden): looked at again in 5 minutes; a wake-up received 100 times is renewed, never dead-lettered', async () => {
    const id = await hook({ type: 'guests', eventId: 'evt_jazz01' });
    const event = demoDataset().events.find((e) => e.id === 'evt_jazz01')!;
    await new ChangeApplier(store.client, store.tableName, { clock }).apply({ type: 'event.upserted', version: ++version, event: { ...event, visibility: 'private' } } as Change);
    try {
      const early = wakeUp(id, { ApproximateReceiveCount: '5' });
      expect(await build()({ Records: [early] } as SQSEvent, context())).toEqual({ batchItemFailures: [{ itemIdentifier: early.messageId }] });
      expect({ visibility, wakeUps, posts }).toEqual({ visibility: [[early.receiptHandle, HIDDEN_RECHECK_SECONDS]], wakeUps: [], posts: [] });
      visibility = [];
      const worn = wakeUp(id, { ApproximateReceiveCount: String(PARKED_RENEW_RECEIVES) });
      expect(await build()({ Records: [worn] } as SQSEvent, context())).toEqual({ batchItemFailures: [] });
      expect({ visibility, wakeUps, posts }).toEqual({ visibility: [], wakeUps: [{ webhookId: id, dedupId: `${id}.parked.${worn.messageId}` }], posts: [] });
      // The renewal could not be sent: the worn message is kept, invisible for the next look (it has receives to spare).
      wakeUps = [];
      const kept = wakeUp(id, { ApproximateReceiveCount: String(PARKED_RENEW_RECEIVES + 1) });
      expect(await build({ failWakeUps: true })({ Records: [kept] } as SQSEvent, context())).toEqual({ batchItemFailures: [{ itemIdentifier: kept.messageId }] });
      expect(visibility).toEqual([[kept.receiptHandle, HIDDEN_RECHECK_SECONDS]]);
      expect(PARKED_RENEW_RECEIVES).toBeLessThan(WEBHOOKS.wakeUpMaxReceives);
    } finally {
      await new ChangeApplier(store.client, store.tableName, { clock }).apply({ type: 'event.upserted', version: ++version, event } as Change);
    }
  });
});
