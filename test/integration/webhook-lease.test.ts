/**
 * A delivery's lease covers its whole send, however slow the calls before
 * it (lambdas/delivery/deliver.ts): the secrets are opened (in AWS a KMS
 * Decrypt, which a throttle can hold for seconds) before the write that
 * takes the lease, so no run of the same webhook can start a send while
 * this one's POST may still be open. Here every open of a secret takes 12 s
 * of the injected clock, longer than the lease's 5 s margin over the send's
 * 10 s deadline: every send still starts with the whole deadline inside its
 * lease, a fresh delivery's and a retry's alike.
 */
import { describe, expect, it } from '@jest/globals';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { DELIVERY_TIMEOUT_MS } from '../../lambdas/core/webhook-rules.js';
import { runWebhook, type DeliveryDeps } from '../../lambdas/delivery/deliver.js';
import type { PostOutcome } from '../../lambdas/delivery/outbound.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { noMetrics } from '../../lambdas/http/metrics.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { WebhookManager } from '../../lambdas/key-admin/webhook-manager.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { DeliveryState } from '../../lambdas/store/webhooks/delivery-state.js';
import { localSecretBox, type SecretBox } from '../../lambdas/store/webhooks/secret-box.js';
import { FEED_NOW, FEED_SITE } from '../support/feed-consumer.js';
import { testKeyring } from '../support/feed-keys.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });
const event = (title: string) => ({ id: 'evt_a', creator_id: 'usr_h', title, start_date: '2027-01-01T20:00:00.000Z', timezone: 'UTC', status: 'published' as const, visibility: 'public' as const, created_at: '2026-11-01T00:00:00.000Z' });
const D0: Dataset = { users: [{ id: 'usr_h', username: 'h' }, { id: 'usr_c', username: 'c' }], events: [event('A')], rsvps: [] };
const SLOW_OPEN_MS = 12_000;

describe("a delivery's lease and a slow secret", () => {
  it('every send, fresh or retried, starts with its whole deadline inside its lease', async () => {
    let now = FEED_NOW.getTime();
    const clock = () => new Date(now);
    const box = localSecretBox();
    const table = await store.loaded('lease', D0);
    const keys = new KeyManager(store.client, table, { clock });
    const repo = new DynamoRepository(store.client, table);
    const manager = new WebhookManager({ client: store.client, tableName: table, keys: keys.store, feeds: repo, events: repo, keyring: testKeyring, secrets: box, checkUrl: async () => ({ ok: true }), nudge: async () => {}, siteUrl: FEED_SITE, clock });
    const { info } = await keys.create({ userId: 'usr_c', name: 'lease' });
    const webhookId = (await manager.create('usr_c', info.keyId, { url: 'https://hooks.example.com/lease', scope: { type: 'catalogue' } })).info.webhookId;
    const applier = new ChangeApplier(store.client, table, { clock, fanOutConcurrency: 1 });
    await applier.apply({ type: 'event.upserted', version: 2, event: event('A, edited') });

    const state = new DeliveryState(store.client, table);
    const leftAtSends: number[] = [];
    const answers: PostOutcome[] = [{ kind: 'answered', status: 503 }, { kind: 'answered', status: 200 }];
    // Each run is a new container: its secrets opened afresh, each open as slow as a throttled KMS call.
    const slow = (): SecretBox => ({ seal: (s, id) => box.seal(s, id), open: async (s, id) => ((now += SLOW_OPEN_MS), box.open(s, id)) });
    const deps = (): DeliveryDeps => ({
      state,
      feeds: repo,
      events: repo,
      keyring: testKeyring,
      secrets: slow(),
      post: async () => {
        const inflight = (await state.webhook(webhookId))!.inflight!;
        leftAtSends.push(Date.parse(inflight.lease_until!) - now);
        return answers.shift()!;
      },
      siteUrl: FEED_SITE,
      clock,
      wallClock: clock,
      random: () => 0.5,
      logger: silentLogger,
      metrics: noMetrics,
    });
    const budget = { maxDeliveries: 20, mayStart: () => true };

    const first = await runWebhook(deps(), webhookId, budget);
    expect(first.kind).toBe('retry');
    now += (first as { seconds: number }).seconds * 1000;
    expect(await runWebhook(deps(), webhookId, budget)).toEqual({ kind: 'done' });
    expect(leftAtSends).toHaveLength(2);
    for (const left of leftAtSends) expect(left).toBeGreaterThanOrEqual(DELIVERY_TIMEOUT_MS);
    expect((await state.webhook(webhookId))!.inflight).toBeUndefined();
  });

  it('a last look that fails is an error of the run (the queue backs off), not a no that comes back at every lease', async () => {
    let now = FEED_NOW.getTime();
    const clock = () => new Date(now);
    const box = localSecretBox();
    const table = await store.loaded('look', D0);
    const keys = new KeyManager(store.client, table, { clock });
    const repo = new DynamoRepository(store.client, table);
    const manager = new WebhookManager({ client: store.client, tableName: table, keys: keys.store, feeds: repo, events: repo, keyring: testKeyring, secrets: box, checkUrl: async () => ({ ok: true }), nudge: async () => {}, siteUrl: FEED_SITE, clock });
    const { info } = await keys.create({ userId: 'usr_c', name: 'look' });
    const webhookId = (await manager.create('usr_c', info.keyId, { url: 'https://hooks.example.com/look', scope: { type: 'catalogue' } })).info.webhookId;
    await new ChangeApplier(store.client, table, { clock, fanOutConcurrency: 1 }).apply({ type: 'event.upserted', version: 2, event: event('A, looked at') });

    const throttle = Object.assign(new Error('Rate of requests exceeds the allowed throughput'), { name: 'ThrottlingException' });
    const real = new DeliveryState(store.client, table);
    let failLooks = 1;
    const state = Object.assign(Object.create(real) as DeliveryState, { maySend: (id: string, delivery: string) => (failLooks-- > 0 ? Promise.reject(throttle) : real.maySend(id, delivery)) });
    const sent: string[] = [];
    const deps = (): DeliveryDeps => ({
      state,
      feeds: repo,
      events: repo,
      keyring: testKeyring,
      secrets: box,
      // As the guard does: the look once connected, and nothing written on a no.
      post: async (req) => ((await req.beforeSend?.()) === false ? { kind: 'withdrawn' } : (sent.push(req.body), { kind: 'answered', status: 200 })),
      siteUrl: FEED_SITE,
      clock,
      wallClock: clock,
      random: () => 0.5,
      logger: silentLogger,
      metrics: noMetrics,
    });
    const budget = { maxDeliveries: 20, mayStart: () => true };
    await expect(runWebhook(deps(), webhookId, budget)).rejects.toBe(throttle);
    expect(sent).toEqual([]);
    // The queue brings it back later (after its backoff, past the lease): the same delivery is sent, and acknowledged.
    now += 60_000;
    expect(await runWebhook(deps(), webhookId, budget)).toEqual({ kind: 'done' });
    expect(sent).toHaveLength(1);
    expect((await real.webhook(webhookId))!.inflight).toBeUndefined();
  });
});
