/**
 * A webhook's run (lambdas/delivery/deliver.ts) failed at each of its calls
 * in turn, exhaustively (FAULT_POINTS: every call on dynalite, the first of
 * each kind and the last on DynamoDB Local, test/support/fault-points.ts): the writes that put a delivery in flight, that
 * record a 2xx and the next delivery's start in one, that acknowledge, and
 * every read between, each once failing without landing and once landing
 * and then losing its answer (the function crashed after it), and each
 * POST once answered but its answer lost (a timeout after the receiver took
 * it); then the webhook is woken again (a redelivery, its retry due) until
 * it is done, a change having landed meanwhile. The run delivers a backfill
 * (the catalogue's present members) and then the changes after it, two
 * deliveries with the 2xx of the first and the start of the second one
 * write. Through a container's feed cache
 * (the same one after the failure, or another container's) and through the
 * store's reader alone. Held at every point:
 * - each delivery's content is what the read routes show when it is sent
 *   (upserts equal to the read model then, `removed` only for what it does
 *   not show);
 * - a delivery sent again carries its `webhook-id` and no change its first
 *   send did not (the same delivery, never one further);
 * - the receiver, applying every delivery it took, ends equal to the
 *   catalogue's read model, and the webhook has nothing left in flight.
 */
import { describe, expect, it } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../../lambdas/core/changes.js';
import type { Clock } from '../../lambdas/core/clock.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import type { FeedReader } from '../../lambdas/core/ports.js';
import { runWebhook, type DeliveryDeps } from '../../lambdas/delivery/deliver.js';
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
import { FEED_NOW, FEED_SITE, expectedScopes } from '../support/feed-consumer.js';
import { testKeyring } from '../support/feed-keys.js';
import { callKind, faultPoints, faultPointsLine } from '../support/fault-points.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });
const secrets = localSecretBox();

const event = (id: string, title: string, visibility: 'public' | 'private' = 'public') => ({ id, creator_id: 'usr_h', title, start_date: '2027-01-01T20:00:00.000Z', timezone: 'UTC', status: 'published' as const, visibility, created_at: '2026-11-01T00:00:00.000Z' });
const D0: Dataset = { users: [{ id: 'usr_h', username: 'h' }], events: [event('evt_a', 'A'), event('evt_b', 'B'), event('evt_c', 'C'), event('evt_p', 'P', 'private')], rsvps: [] };
const CHANGES: Change[] = [
  { type: 'event.upserted', version: 2, event: event('evt_a', 'A, edited') },
  { type: 'event.upserted', version: 3, event: event('evt_b', 'B, hidden', 'private') },
  { type: 'event.upserted', version: 4, event: event('evt_p', 'P, shown') },
];

type Fault = { kind: 'none' } | { kind: 'fail' | 'crash'; call: number } | { kind: 'lost'; post: number };
type Feeds = 'same container' | 'another container' | 'no cache';

/** A client that counts its calls and, at `fault`, fails one without landing or lands it and throws (a crash after it). */
function faulty(fault: Fault) {
  const client = store.newClient();
  let calls = 0;
  const kinds: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      calls++;
      kinds.push(callKind(String(context.commandName), args.input as Record<string, unknown>));
      if (fault.kind === 'fail' && calls === fault.call) throw Object.assign(new Error('failed without landing'), { name: 'InternalServerError' });
      const out = await next(args);
      if (fault.kind === 'crash' && calls === fault.call) throw new Error('crash after the call landed');
      return out;
    },
    { step: 'initialize', name: 'fault' },
  );
  return { client, calls: () => calls, kinds };
}

/** The webhook's world: its table, its webhook (a backfill of the catalogue), the changes after it. */
async function world(): Promise<{ table: string; webhookId: string }> {
  const table = await store.loaded('points', D0);
  const clock = () => FEED_NOW;
  const keys = new KeyManager(store.client, table, { clock });
  const { info } = await keys.create({ userId: 'usr_h', name: 'points' });
  const repo = new DynamoRepository(store.client, table);
  const manager = new WebhookManager({ client: store.client, tableName: table, keys: keys.store, feeds: repo, events: repo, keyring: testKeyring, secrets, checkUrl: async () => ({ ok: true }), nudge: async () => {}, siteUrl: FEED_SITE, clock });
  const made = await manager.create('usr_h', info.keyId, { url: 'https://hooks.example.com/points', scope: { type: 'catalogue' }, backfill: true });
  const applier = new ChangeApplier(store.client, table, { clock });
  for (const change of CHANGES) await applier.apply(change);
  return { table, webhookId: made.info.webhookId };
}

/** A receiver that checks each delivery against the read model as it is sent, and applies those it answers 2xx to. */
function receiver(admin: DynamoDBDocumentClient, table: string, fault: Fault) {
  const replica = new Map<string, unknown>();
  const first = new Map<string, string[]>();
  const sent: string[] = [];
  let posts = 0;
  const post = async (req: PostRequest): Promise<PostOutcome> => {
    posts++;
    const body = JSON.parse(req.body) as { changes: { id: string; change: string; event?: unknown }[] };
    const shown = (await expectedScopes(admin, table)).get('catalogue') ?? new Map();
    for (const c of body.changes) expect({ id: c.id, sent: c.change === 'upserted' ? c.event : 'removed' }).toEqual({ id: c.id, sent: shown.has(c.id) ? shown.get(c.id) : 'removed' });
    const id = req.headers['webhook-id']!;
    sent.push(id);
    const ids = body.changes.map((c) => c.id);
    if (first.has(id)) for (const again of ids) expect({ id, again, first: first.get(id)!.includes(again) }).toEqual({ id, again, first: true });
    else first.set(id, ids);
    for (const c of body.changes) (c.change === 'removed' ? replica.delete(c.id) : replica.set(c.id, c.event));
    return fault.kind === 'lost' && posts === fault.post ? { kind: 'failed', errorClass: 'timeout' } : { kind: 'answered', status: 204 };
  };
  return { post, replica, posts: () => posts, deliveries: first, sent };
}

function deps(client: DynamoDBDocumentClient, table: string, feeds: FeedReader, post: DeliveryDeps['post'], clock: Clock): DeliveryDeps {
  const repo = new DynamoRepository(client, table);
  return { state: new DeliveryState(client, table), feeds, events: repo, keyring: testKeyring, secrets, post, siteUrl: FEED_SITE, clock, wallClock: clock, random: () => 0.5, logger: silentLogger, metrics: noMetrics };
}

const BUDGET = { maxDeliveries: 20, mayStart: () => true };

/** One run failing as `fault` says, then wake-ups (the retry due: the clock two hours on each time) until it is done. */
async function scenario(fault: Fault, how: Feeds): Promise<{ kinds: string[]; posts: number; deliveries: number; sent: string[] }> {
  const { table, webhookId } = await world();
  const r = receiver(store.client, table, fault);
  let now = FEED_NOW.getTime();
  const clock = () => new Date(now);
  const reader = (client: DynamoDBDocumentClient) => new DynamoRepository(client, table);
  const bad = faulty(fault);
  const good = store.newClient();
  try {
    const cache = how === 'no cache' ? undefined : new FeedCache(reader(bad.client), { refreshIntervalMs: 0 });
    await runWebhook(deps(bad.client, table, cache ?? reader(bad.client), r.post, clock), webhookId, BUDGET).catch((e: Error) => {
      if (!/crash|without landing/.test(e.message)) throw e;
    });
    const kinds = [...bad.kinds];
    // A change lands while the function is down: a delivery sent again must not take it in; the next one does.
    await new ChangeApplier(store.client, table, { clock }).apply({ type: 'event.upserted', version: 5, event: event('evt_c', 'C, edited while down') });
    const feeds = how === 'same container' ? cache! : how === 'another container' ? new FeedCache(reader(good), { refreshIntervalMs: 0 }) : reader(good);
    for (let wake = 0; ; wake++) {
      expect(wake).toBeLessThan(10);
      now += 2 * 3_600_000;
      const outcome = await runWebhook(deps(good, table, feeds, r.post, clock), webhookId, BUDGET);
      if (outcome.kind === 'done') break;
    }
    expect(Object.fromEntries(r.replica)).toEqual(Object.fromEntries((await expectedScopes(store.client, table)).get('catalogue') ?? new Map()));
    const item = await new DeliveryState(store.client, table).webhook(webhookId);
    expect({ state: item?.state, inflight: item?.inflight }).toEqual({ state: 'active', inflight: undefined });
    return { kinds, posts: r.posts(), deliveries: r.deliveries.size, sent: r.sent };
  } finally {
    bad.client.destroy();
    good.destroy();
  }
}

describe('a webhook\'s run failed at each of its calls, then woken again (exhaustive)', () => {
  it.each<Feeds>(['same container', 'another container', 'no cache'])('through %s: content as shown when sent, a resend the same delivery, the receiver = the read model', async (how) => {
    const clean = await scenario({ kind: 'none' }, how);
    // The backfill, then the changes after it: two deliveries, the second started by the first's 2xx's own write;
    // then the change made while it was down.
    expect({ posts: clean.posts, deliveries: clean.deliveries }).toEqual({ posts: 3, deliveries: 3 });
    const points = faultPoints(clean.kinds);
    process.stdout.write(faultPointsLine(`a run through ${how}`, 'calls', clean.kinds, points));
    for (const call of points) for (const kind of ['fail', 'crash'] as const) await scenario({ kind, call }, how);
    for (let post = 1; post <= 2; post++) {
      // The delivery whose answer was lost is sent again, with its webhook-id.
      const lost = await scenario({ kind: 'lost', post }, how);
      expect(lost.sent.filter((id) => id === lost.sent[post - 1]).length).toBeGreaterThanOrEqual(2);
    }
  }, 120_000);
});
