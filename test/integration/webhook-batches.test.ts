/**
 * A batch of wake-ups in one container (runWebhooks, lambdas/delivery/deliver.ts,
 * with the container's FeedCache), as the delivery function receives a FIFO
 * batch of up to 10 webhooks' messages:
 * - ten webhooks of one scope woken by one change read their ten items in
 *   one BatchGetItem, the scope's entries in one Query and the page's
 *   content in one BatchGetItem, and each reads its item once more before
 *   its send (the guard's last look, once connected) and writes twice (its
 *   delivery in flight, its 2xx): what docs/performance.md's webhooks table
 *   counts;
 *   woken again with nothing new, they write nothing;
 * - a webhook whose endpoint does not answer holds only itself: the
 *   others' runs end, and say so, while its POST is still open.
 */
import { describe, expect, it } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { runWebhooks, type DeliveryDeps, type RunOutcome } from '../../lambdas/delivery/deliver.js';
import { FeedCache } from '../../lambdas/delivery/feed-cache.js';
import type { PostOutcome, PostRequest } from '../../lambdas/delivery/outbound.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { noMetrics } from '../../lambdas/http/metrics.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { WebhookManager } from '../../lambdas/key-admin/webhook-manager.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { DeliveryState } from '../../lambdas/store/webhooks/delivery-state.js';
import { localSecretBox } from '../../lambdas/store/webhooks/secret-box.js';
import { FEED_NOW, FEED_SITE } from '../support/feed-consumer.js';
import { testKeyring } from '../support/feed-keys.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });
const secrets = localSecretBox();
const clock = () => FEED_NOW;
const event = (title: string) => ({ id: 'evt_a', creator_id: 'usr_h', title, start_date: '2027-01-01T20:00:00.000Z', timezone: 'UTC', status: 'published' as const, visibility: 'public' as const, created_at: '2026-11-01T00:00:00.000Z' });
const D0: Dataset = { users: [{ id: 'usr_h', username: 'h' }, ...Array.from({ length: 2 }, (_, i) => ({ id: `usr_c${i}`, username: `c${i}` }))], events: [event('A')], rsvps: [] };

/** `n` catalogue webhooks (5 a key, keys of two users), then an edit of the event. */
async function scope(n: number): Promise<{ table: string; ids: string[] }> {
  const table = await store.loaded('batches', D0);
  const keys = new KeyManager(store.client, table, { clock });
  const repo = new DynamoRepository(store.client, table);
  const manager = new WebhookManager({ client: store.client, tableName: table, keys: keys.store, feeds: repo, events: repo, keyring: testKeyring, secrets, checkUrl: async () => ({ ok: true }), nudge: async () => {}, siteUrl: FEED_SITE, clock });
  const ids: string[] = [];
  for (let i = 0; i < n; i += 5) {
    const { info } = await keys.create({ userId: `usr_c${(i / 5) % 2}`, name: `batch ${i}` });
    for (let j = i; j < Math.min(n, i + 5); j++) ids.push((await manager.create(`usr_c${(i / 5) % 2}`, info.keyId, { url: `https://hooks.example.com/${j}`, scope: { type: 'catalogue' } })).info.webhookId);
  }
  await new ChangeApplier(store.client, table, { clock, fanOutConcurrency: 1 }).apply({ type: 'event.upserted', version: 2, event: event('A, edited') });
  return { table, ids };
}

function deps(client: DynamoDBDocumentClient, table: string, post: (req: PostRequest) => Promise<PostOutcome>, at: () => Date = clock): DeliveryDeps {
  const repo = new DynamoRepository(client, table);
  // As the guard does once connected: the last look first (guard/post.ts, beforeSend), then the receiver.
  const guarded = async (req: PostRequest): Promise<PostOutcome> => ((await req.beforeSend?.()) === false ? { kind: 'withdrawn' } : post(req));
  return { state: new DeliveryState(client, table), feeds: new FeedCache(repo, { refreshIntervalMs: 0 }), events: repo, keyring: testKeyring, secrets, post: guarded, siteUrl: FEED_SITE, clock: at, wallClock: at, logger: silentLogger, metrics: noMetrics };
}

const BUDGET = { maxDeliveries: 20, mayStart: () => true };

describe('a batch of wake-ups in one container', () => {
  it('ten webhooks of one change: one read of their items, one of the scope\'s entries, one of the content; a last look and two writes each', async () => {
    const { table, ids } = await scope(10);
    const calls: string[] = [];
    const client = store.newClient();
    client.middlewareStack.add((next, context) => async (args) => (calls.push(String(context.commandName).replace(/Command$/, '').replace(/Item$/, '')), next(args)), { step: 'initialize', name: 'count' });
    const bodies: string[] = [];
    const outcomes = await Promise.all(runWebhooks(deps(client, table, async (req) => (bodies.push(JSON.stringify({ ...(JSON.parse(req.body) as object), webhook_id: undefined })), { kind: 'answered', status: 200 })), ids, BUDGET).values());
    client.destroy();
    expect(outcomes).toEqual(ids.map(() => ({ kind: 'done' })));
    const tally = Object.fromEntries([...new Set(calls)].map((c) => [c, calls.filter((x) => x === c).length]));
    expect(tally).toEqual({ BatchGet: 2, Query: 1, Get: 10, Update: 20 });
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!)).toMatchObject({ changes: [{ id: 'evt_a', change: 'upserted', event: { title: 'A, edited' } }] });
    // Woken again an hour later with nothing new (a duplicate wake-up): the items and a refresh read, nothing written,
    // nothing sent. The page's cursor differs from the stored one by its asOf only, which is no reason for a write.
    calls.length = 0;
    const sent = bodies.length;
    const later = () => new Date(FEED_NOW.getTime() + 3_600_000);
    const again = store.newClient();
    again.middlewareStack.add((next, context) => async (args) => (calls.push(String(context.commandName).replace(/Command$/, '').replace(/Item$/, '')), next(args)), { step: 'initialize', name: 'count' });
    expect(await Promise.all(runWebhooks(deps(again, table, async (req) => (bodies.push(req.body), { kind: 'answered', status: 200 }), later), ids, BUDGET).values())).toEqual(ids.map(() => ({ kind: 'done' })));
    again.destroy();
    expect(calls.sort()).toEqual(['BatchGet', 'Query']);
    expect(bodies.length).toBe(sent);
  });

  it('an endpoint that does not answer holds only its own webhook: the others are done while its POST is open', async () => {
    const { table, ids } = await scope(3);
    const [slow, ...others] = ids as [string, ...string[]];
    let release: (o: PostOutcome) => void = () => {};
    const held = new Promise<PostOutcome>((resolve) => (release = resolve));
    const client = store.newClient();
    const runs = runWebhooks(
      deps(client, table, (req) => (req.url.endsWith('/0') ? held : Promise.resolve({ kind: 'answered', status: 200 }))),
      ids,
      BUDGET,
    );
    const settled = new Map<string, RunOutcome>();
    for (const [id, run] of runs) void run.then((o) => settled.set(id, o));
    await Promise.all(others.map((id) => runs.get(id)!));
    expect(Object.fromEntries(settled)).toEqual(Object.fromEntries(others.map((id) => [id, { kind: 'done' }])));
    expect(settled.has(slow)).toBe(false);
    release({ kind: 'failed', errorClass: 'timeout' });
    expect(await runs.get(slow)!).toMatchObject({ kind: 'retry' });
    client.destroy();
  });
});
