/**
 * A webhook's deliveries (PRODUCT P18), one at a time, in feed order: what
 * one wake-up of a webhook does (in AWS one message of its FIFO message
 * group, so no two run at once; locally the same, lambdas/delivery/ is run
 * by local/webhooks.ts). Each delivery:
 *
 * 1. reads the webhook (consistent) and its next page after its cursor
 *    (webhook-page.ts: the page a pull would get, content as shown now);
 * 2. records it in flight (its id, start and end) before the first send,
 *    conditional on the cursor read, so a crash after sending sends the
 *    same delivery again, never one further;
 * 3. before each send, counts the attempt in a write that holds only while
 *    the webhook is active and its key open (a revoke or a user's deletion
 *    closes it before answering: no send starts after that) and no other
 *    attempt of it is being sent (a lease of the send's deadline: a wake-up
 *    run twice at once never sends twice at once);
 * 4. signs (Standard Webhooks, every secret in use) and POSTs through the
 *    outbound guard;
 * 5. a 2xx moves the cursor and the next page follows at once (changes that
 *    came meanwhile are in it, up to 100); 410 disables; anything else
 *    (another status, no answer within 10 s, a refused address, a crash)
 *    is retried with backoff and jitter, the same delivery re-read so that
 *    its content is what the read routes show when it is sent, and 3 days
 *    without a 2xx disable.
 *
 * Bounded per wake-up (ARCHITECTURE rule 14): at most `maxDeliveries`
 * deliveries and none started without the time for its send; what is left
 * is the next wake-up's ('more').
 */
import { systemClock, type Clock } from '../core/clock.js';
import type { CursorKeyring } from '../core/feed-cursor.js';
import type { EventReader, FeedReader } from '../core/ports.js';
import { DELIVERY_LEASE_MS, failingTooLong, isAcknowledged, retryDelaySeconds, type DeliveryBody, type DeliveryFailure } from '../core/webhook-rules.js';
import { signDelivery } from '../core/webhook-signing.js';
import type { DeliveryState } from '../store/webhooks/delivery-state.js';
import type { SecretBox } from '../store/webhooks/secret-box.js';
import type { InFlight, WebhookItem } from '../store/webhooks/webhook-items.js';
import type { Logger } from '../http/logger.js';
import { DIMENSIONS, METRICS, type DeliveryResult, type MetricsSink } from '../http/metrics.js';
import type { PostOutcome, Poster } from './outbound.js';
import { deliveryId, readWebhookPage, type Change, type PageRead } from './webhook-page.js';

export interface DeliveryDeps {
  state: DeliveryState;
  feeds: FeedReader;
  events: EventReader;
  keyring: CursorKeyring;
  secrets: SecretBox;
  post: Poster;
  siteUrl: string;
  /** The data's clock: the retry schedule and the 3 days (the local server's movable clock). */
  clock: Clock;
  /** `webhook-timestamp`: the real time, whatever the data's clock says (a receiver checks it against its own). */
  wallClock?: Clock;
  random?: () => number;
  logger: Logger;
  metrics: MetricsSink;
}

export type RunOutcome =
  /** Caught up, or nothing to do (gone, disabled, closed, a guest feed's event hidden). */
  | { kind: 'done' }
  /** The wake-up's bound reached with more to deliver: wake it again now. */
  | { kind: 'more' }
  /** The delivery in flight failed: wake it again in `seconds`. */
  | { kind: 'retry'; seconds: number };

export interface RunBudget {
  maxDeliveries: number;
  /** Whether a send may still start (the time left covers its deadline). */
  mayStart: () => boolean;
}

export const USER_AGENT = 'PublicEventsAPI-Webhooks/1';

const failureOf = (outcome: Exclude<PostOutcome, { kind: 'answered'; status: 200 }>, at: Date): DeliveryFailure =>
  outcome.kind === 'answered' ? { at: at.toISOString(), status: outcome.status } : { at: at.toISOString(), errorClass: outcome.errorClass };

const resultOf = (outcome: PostOutcome): DeliveryResult =>
  outcome.kind === 'answered' ? (isAcknowledged(outcome.status) ? 'delivered' : 'rejected') : outcome.kind === 'refused' ? 'refused' : 'unanswered';

export async function runWebhook(deps: DeliveryDeps, webhookId: string, budget: RunBudget): Promise<RunOutcome> {
  const pageOf = (item: WebhookItem, cursor: string | undefined, clip?: string): Promise<PageRead> =>
    readWebhookPage({ feeds: deps.feeds, events: deps.events, keyring: deps.keyring, siteUrl: deps.siteUrl, now: deps.clock() }, item.scope, cursor, clip);
  let item = await deps.state.webhook(webhookId);
  let started = 0;
  for (;;) {
    if (!item || item.state !== 'active' || item.key_closed) return { kind: 'done' };
    let inflight: InFlight;
    let page: PageRead;
    if (item.inflight) {
      // Due at its retry time, and not while another run's attempt holds it (its lease; after a crash, until it passes).
      const due = Math.max(...[item.inflight.next_at, item.inflight.lease_until].map((t) => (t ? Date.parse(t) : 0))) - deps.clock().getTime();
      if (due > 0) return { kind: 'retry', seconds: Math.ceil(due / 1000) };
      inflight = item.inflight;
      page = await pageOf(item, inflight.start, inflight.end);
    } else {
      if (started >= budget.maxDeliveries || !budget.mayStart()) return { kind: 'more' };
      page = await pageOf(item, item.cursor);
      if (page.kind === 'page' && !page.changes.length && !(item.reset && page.endsStart)) {
        // Nothing to send: a start's position, members no longer shown. The cursor moves on without a delivery.
        if (page.next !== item.cursor) item = (await deps.state.advance(webhookId, item.cursor, page.next, page.endsStart)) ?? (await deps.state.webhook(webhookId));
        if (page.hasMore) continue;
        return { kind: 'done' };
      }
      if (page.kind !== 'page') {
        inflight = { id: '', start: item.cursor, end: item.cursor, first_at: '', attempts: 0 };
      } else {
        const begun = await deps.state.begin(webhookId, item.cursor, { id: deliveryId(webhookId, item.cursor), start: item.cursor, end: page.next, first_at: deps.clock().toISOString(), attempts: 0 });
        if (!begun) {
          item = await deps.state.webhook(webhookId);
          continue;
        }
        item = begun;
        inflight = begun.inflight!;
      }
    }
    if (page.kind === 'hidden') return { kind: 'done' };
    if (page.kind === 'expired') {
      // P16's retention passed the position (a webhook down or disabled for weeks): the scope's present contents, `reset: true`.
      const fresh = await pageOf(item, undefined);
      if (fresh.kind !== 'page') return { kind: 'done' };
      item = (await deps.state.restart(webhookId, item.cursor, fresh.next)) ?? (await deps.state.webhook(webhookId));
      continue;
    }
    if (!page.changes.length && !(item.reset && page.endsStart)) {
      // A retry whose members have all left since: nothing to send again, the cursor moves on.
      item = (await deps.state.ack(webhookId, inflight.id, page.next, deps.clock(), page.endsStart)) ?? (await deps.state.webhook(webhookId));
      continue;
    }
    const sent = await send(deps, item, inflight, page);
    started += 1;
    if (sent.kind === 'next') item = sent.item;
    else return sent.outcome;
  }
}

type Sent = { kind: 'next'; item: WebhookItem | undefined } | { kind: 'stop'; outcome: RunOutcome };

async function send(deps: DeliveryDeps, item: WebhookItem, inflight: InFlight, page: Extract<PageRead, { kind: 'page' }>): Promise<Sent> {
  const webhookId = item.webhook_id;
  const ids = { userId: item.user_id, keyId: item.key_id, webhookId };
  const body: DeliveryBody<Change> = { webhook_id: webhookId, scope: item.scope, changes: page.changes, cursor: page.next, ...(item.reset ? { reset: true as const } : {}) };
  const text = JSON.stringify(body);
  // Opened before the attempt's write, so that only the send itself lies between that write and the POST.
  const secrets = [await deps.secrets.open(item.secret, webhookId)];
  if (item.previous_secret && item.previous_until && Date.parse(item.previous_until) > deps.clock().getTime()) secrets.push(await deps.secrets.open(item.previous_secret, webhookId));
  const attemptAt = deps.clock();
  // The key's state, checked by the write itself: a revoke or deletion that closed it first makes this fail, and nothing is sent.
  const open = await deps.state.attempt(webhookId, inflight.id, attemptAt, new Date(attemptAt.getTime() + DELIVERY_LEASE_MS));
  if (!open) return { kind: 'next', item: await deps.state.webhook(webhookId) };
  const headers = { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...signDelivery(secrets, inflight.id, (deps.wallClock ?? systemClock)(), text) };
  const outcome = await deps.post({ url: item.url, body: text, headers });
  const now = deps.clock();
  deps.metrics.publish({ [DIMENSIONS.result]: resultOf(outcome) }, [{ name: METRICS.webhookDeliveries, unit: 'Count', value: 1 }]);
  if (outcome.kind === 'answered' && isAcknowledged(outcome.status)) {
    const lag = Math.max(0, (now.getTime() - Date.parse(inflight.first_at)) / 1000);
    deps.metrics.publish({}, [{ name: METRICS.webhookDeliveryLag, unit: 'Seconds', value: lag }]);
    const acked = await deps.state.ack(webhookId, inflight.id, page.next, now, page.endsStart);
    // Woken by every change again (before the next page is read, so a change the fan-out skipped meanwhile is in it).
    if (acked && (item.failing_since || inflight.attempts > 0)) await deps.state.setScopeState(item.feed, webhookId, 'active');
    return { kind: 'next', item: acked ?? (await deps.state.webhook(webhookId)) };
  }
  const failure = failureOf(outcome as Exclude<PostOutcome, { kind: 'answered'; status: 200 }>, now);
  const gone = outcome.kind === 'answered' && outcome.status === 410;
  if (gone || failingTooLong(item.failing_since ?? inflight.first_at, now)) {
    const reason = gone ? 'gone' : 'failing';
    const disabled = await deps.state.disable(webhookId, reason, now, failure);
    if (disabled) {
      await deps.state.setScopeState(item.feed, webhookId, 'disabled');
      deps.metrics.publish({ [DIMENSIONS.result]: reason }, [{ name: METRICS.webhooksDisabled, unit: 'Count', value: 1 }]);
      deps.logger.warn('Webhook disabled', { ...ids, reason, lastFailure: failure });
    }
    return { kind: 'stop', outcome: { kind: 'done' } };
  }
  const seconds = retryDelaySeconds(inflight.attempts + 1, deps.random);
  await deps.state.failed(webhookId, inflight.id, failure, new Date(now.getTime() + seconds * 1000));
  if (!item.failing_since && inflight.attempts === 0) await deps.state.setScopeState(item.feed, webhookId, 'retrying');
  deps.logger.info('Webhook delivery failed; retried later', { ...ids, deliveryId: inflight.id, ...(failure.status !== undefined ? { status: failure.status } : { errorClass: failure.errorClass }), retryInSeconds: seconds });
  return { kind: 'stop', outcome: { kind: 'retry', seconds } };
}
