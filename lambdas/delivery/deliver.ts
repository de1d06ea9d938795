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
 *    same delivery again, never one further; that write counts the first
 *    attempt and holds only while the webhook is active and its key open,
 *    as every later attempt's write does (a revoke or a user's deletion
 *    closes it before answering: no send starts after that);
 * 3. signs (Standard Webhooks, every secret in use) and POSTs through the
 *    outbound guard, which asks once connected whether the webhook is still
 *    open with this delivery in flight (one consistent read: a revoke that
 *    answered while the address was resolved and the connection made stops
 *    the send before anything is written); the secrets are opened before the write that leases
 *    the attempt (a throttled KMS call never eats the lease), and a send
 *    whose deadline no longer fits in its lease is not made;
 * 4. a 2xx moves the cursor and the next page follows at once (changes that
 *    came meanwhile are in it, up to 100), read before the 2xx is recorded
 *    so that one write records both: the cursor moved and the next delivery
 *    in flight (a crash between sends the acknowledged one again, the same
 *    `webhook-id`, never skips it); 410 disables; anything else
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
import { DELIVERY_LEASE_MS, DELIVERY_TIMEOUT_MS, HIDDEN_RECHECK_SECONDS, failingTooLong, isAcknowledged, retryDelaySeconds, type DeliveryBody, type DeliveryFailure } from '../core/webhook-rules.js';
import { signDelivery } from '../core/webhook-signing.js';
import type { DeliveryState } from '../store/webhooks/delivery-state.js';
import type { SecretBox } from '../store/webhooks/secret-box.js';
import type { InFlight, WebhookItem } from '../store/webhooks/webhook-items.js';
import type { Logger } from '../http/logger.js';
import { DIMENSIONS, METRICS, type DeliveryResult, type MetricsSink } from '../http/metrics.js';
import type { PostOutcome, Poster } from './outbound.js';
import { FeedCache } from './feed-cache.js';
import { cursorMoved, deliveryId, readWebhookPage, type Change, type PageRead } from './webhook-page.js';
import { auditDisable } from './disable-audit.js';

export interface DeliveryDeps {
  state: DeliveryState;
  /**
   * The feeds' reads. A FeedCache (feed-cache.ts), made once per container and shared by its runs, reads a scope's
   * feed partition per container rather than per webhook; any other FeedReader is read at every page.
   */
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
  /** Caught up, or nothing to do (gone, disabled, closed). */
  | { kind: 'done' }
  /** The wake-up's bound reached with more to deliver: wake it again now. */
  | { kind: 'more' }
  /**
   * The delivery in flight failed: wake it again in `seconds`. `parked`: nothing failed, the scope is not shown now
   * (HIDDEN_RECHECK_SECONDS); the same wake-up later, which a test's world tells apart from a failure's.
   */
  | { kind: 'retry'; seconds: number; parked?: true };

export interface RunBudget {
  maxDeliveries: number;
  /** Whether a send may still start (the time left covers its deadline). */
  mayStart: () => boolean;
}

/** One delivery ready to send: its page read, in flight, its attempt counted (`counted`) or still to count. */
interface Ready {
  item: WebhookItem;
  inflight: InFlight;
  page: Extract<PageRead, { kind: 'page' }>;
  counted: boolean;
}

type Step = { kind: 'outcome'; outcome: RunOutcome } | { kind: 'item'; item: WebhookItem | undefined } | { kind: 'ready'; ready: Ready };

const DONE: Step = { kind: 'outcome', outcome: { kind: 'done' } };
/** Its scope not shown now: nothing to send, looked at again later (the write that shows it again wakes no webhook of it). */
const HIDDEN: Step = { kind: 'outcome', outcome: { kind: 'retry', seconds: HIDDEN_RECHECK_SECONDS, parked: true } };

/** Whether a page is a delivery: changes, or the end of a fresh start's members (a `reset` with nothing left in it). */
const sendable = (item: Pick<WebhookItem, 'reset'>, page: Extract<PageRead, { kind: 'page' }>): boolean => page.changes.length > 0 || (!!item.reset && page.endsStart);

export const USER_AGENT = 'PublicEventsAPI-Webhooks/1';

const failureOf = (outcome: Exclude<PostOutcome, { kind: 'answered'; status: 200 } | { kind: 'withdrawn' }>, at: Date): DeliveryFailure =>
  outcome.kind === 'answered' ? { at: at.toISOString(), status: outcome.status } : { at: at.toISOString(), errorClass: outcome.errorClass };

const resultOf = (outcome: Exclude<PostOutcome, { kind: 'withdrawn' }>): DeliveryResult =>
  outcome.kind === 'answered' ? (isAcknowledged(outcome.status) ? 'delivered' : 'rejected') : outcome.kind === 'refused' ? 'refused' : 'unanswered';

/** A run's view of the feeds: a container's cache from the run's start (feed-cache.ts), else the reader as given. */
const feedsOfRun = (feeds: FeedReader): FeedReader => (feeds instanceof FeedCache ? feeds.since(feeds.mark()) : feeds);

export async function runWebhook(deps: DeliveryDeps, webhookId: string, budget: RunBudget): Promise<RunOutcome> {
  const feeds = feedsOfRun(deps.feeds);
  return new Run(deps, feeds, webhookId, budget).go(await deps.state.webhook(webhookId));
}

/**
 * The runs of several webhooks at once (a batch of wake-ups, each webhook
 * its own message group): their items read in one BatchGetItem, then each
 * run on its own, as runWebhook's. The runs start their pages together, so
 * with a FeedCache their first page shares one read of the scope's entries
 * and one of its content. Each run's outcome is its own promise: a webhook
 * done is done whatever the others do (a slow endpoint holds only itself).
 */
export function runWebhooks(deps: DeliveryDeps, webhookIds: readonly string[], budget: RunBudget): Map<string, Promise<RunOutcome>> {
  const feeds = feedsOfRun(deps.feeds);
  const ids = [...new Set(webhookIds)];
  const items = deps.state.webhooks(ids);
  return new Map(ids.map((id) => [id, items.then((found) => new Run(deps, feeds, id, budget).go(found.get(id)))]));
}

class Run {
  private started = 0;
  /** Secrets opened in this run, by their sealed form: opened before the write that takes a lease, so a slow KMS call is never inside one. */
  private readonly opened = new Map<string, string>();

  constructor(
    private readonly deps: DeliveryDeps,
    private feeds: FeedReader,
    private readonly webhookId: string,
    private readonly budget: RunBudget,
  ) {}

  async go(first: WebhookItem | undefined): Promise<RunOutcome> {
    let step: Step = { kind: 'item', item: first };
    for (;;) {
      if (step.kind === 'outcome') return step.outcome;
      if (step.kind === 'item') {
        step = await this.prepare(step.item);
        continue;
      }
      step = await this.send(step.ready);
      this.started += 1;
    }
  }

  /** The secrets a delivery is signed with now: the current one, and the previous one within its overlap (P18: 24 hours). */
  private async signingSecrets(item: WebhookItem): Promise<string[]> {
    const open = async (sealed: string): Promise<string> => {
      const known = this.opened.get(sealed);
      if (known !== undefined) return known;
      const secret = await this.deps.secrets.open(sealed, this.webhookId);
      this.opened.set(sealed, secret);
      return secret;
    };
    const secrets = [await open(item.secret)];
    if (item.previous_secret && item.previous_until && Date.parse(item.previous_until) > this.deps.clock().getTime()) secrets.push(await open(item.previous_secret));
    return secrets;
  }

  private pageOf(item: WebhookItem, cursor: string | undefined, clip?: string): Promise<PageRead> {
    const { events, keyring, siteUrl, clock } = this.deps;
    return readWebhookPage({ feeds: this.feeds, events, keyring, siteUrl, now: clock() }, item.scope, cursor, clip);
  }

  private reread(): Promise<Step> {
    return this.deps.state.webhook(this.webhookId).then((item) => ({ kind: 'item', item }));
  }

  /** A delivery from `start` to the page's end, its first attempt now. */
  private fresh(start: string, page: Extract<PageRead, { kind: 'page' }>): InFlight {
    const now = this.deps.clock().toISOString();
    // The write that puts it in flight counts its first attempt, so it takes that attempt's lease too (see send).
    const lease_until = new Date(this.deps.clock().getTime() + DELIVERY_LEASE_MS).toISOString();
    return { id: deliveryId(this.webhookId, start), start, end: page.next, first_at: now, attempts: 1, last_at: now, lease_until };
  }

  /** What to do with the webhook as read: a delivery to send, an outcome, or the item again after a write. */
  private async prepare(item: WebhookItem | undefined): Promise<Step> {
    const { state, clock } = this.deps;
    const id = this.webhookId;
    if (!item || item.state !== 'active' || item.key_closed) {
      await auditDisable(this.deps, item);
      return DONE;
    }
    if (item.inflight) {
      // Due at its retry time, and not while another run's attempt holds it (its lease; after a crash, until it passes).
      const due = Math.max(...[item.inflight.next_at, item.inflight.lease_until].map((t) => (t ? Date.parse(t) : 0))) - clock().getTime();
      if (due > 0) return { kind: 'outcome', outcome: { kind: 'retry', seconds: Math.ceil(due / 1000) } };
      const inflight = item.inflight;
      const page = await this.pageOf(item, inflight.start, inflight.end);
      if (page.kind === 'hidden') return HIDDEN;
      if (page.kind === 'expired') return this.restart(item);
      // A retry whose members have all left since: nothing to send again, the cursor moves on.
      if (!sendable(item, page)) return { kind: 'item', item: (await state.ack(id, inflight.id, page.next, clock(), page.endsStart)) ?? (await state.webhook(id)) };
      return { kind: 'ready', ready: { item, inflight, page, counted: false } };
    }
    if (this.started >= this.budget.maxDeliveries || !this.budget.mayStart()) return { kind: 'outcome', outcome: { kind: 'more' } };
    const page = await this.pageOf(item, item.cursor);
    if (page.kind === 'hidden') return HIDDEN;
    if (page.kind === 'expired') return this.restart(item);
    if (!sendable(item, page)) {
      // Nothing to send: a start's position, members no longer shown, or nothing new. The cursor moves on without a delivery
      // (and without a write when it would not move: an empty wake-up). A page that moves nothing yet has more is left to
      // the next wake-up rather than read again here.
      if (!cursorMoved(item.cursor, page.next)) return page.hasMore ? { kind: 'outcome', outcome: { kind: 'more' } } : DONE;
      const moved = (await state.advance(id, item.cursor, page.next, page.endsStart)) ?? (await state.webhook(id));
      return page.hasMore ? { kind: 'item', item: moved } : DONE;
    }
    await this.signingSecrets(item);
    const begun = await state.begin(id, item.cursor, this.fresh(item.cursor, page));
    if (!begun) return this.reread();
    return { kind: 'ready', ready: { item: begun, inflight: begun.inflight!, page, counted: true } };
  }

  /** P16's retention passed the position (a webhook down or disabled for weeks): the scope's present contents, `reset: true`. */
  private async restart(item: WebhookItem): Promise<Step> {
    const fresh = await this.pageOf(item, undefined);
    if (fresh.kind === 'hidden') return HIDDEN;
    if (fresh.kind !== 'page') return DONE;
    return { kind: 'item', item: (await this.deps.state.restart(this.webhookId, item.cursor, fresh.next)) ?? (await this.deps.state.webhook(this.webhookId)) };
  }

  private async send({ item, inflight, page, counted }: Ready): Promise<Step> {
    const deps = this.deps;
    const webhookId = this.webhookId;
    const ids = { userId: item.user_id, keyId: item.key_id, webhookId };
    // The attempts before this one (a fresh delivery's write counted this one already).
    const prior = counted ? inflight.attempts - 1 : inflight.attempts;
    let leaseEnd = Date.parse(inflight.lease_until ?? '') || 0;
    if (!counted) {
      await this.signingSecrets(item);
      // The key's state, checked by the write itself: a revoke or deletion that closed it first makes this fail, and nothing is sent.
      const at = deps.clock();
      leaseEnd = at.getTime() + DELIVERY_LEASE_MS;
      const open = await deps.state.attempt(webhookId, inflight.id, at, new Date(leaseEnd));
      if (!open) return this.reread();
    }
    const body: DeliveryBody<Change> = { webhook_id: webhookId, scope: item.scope, changes: page.changes, cursor: page.next, ...(item.reset ? { reset: true as const } : {}) };
    const text = JSON.stringify(body);
    // Opened already unless a rotation landed between the read and the leasing write.
    const secrets = await this.signingSecrets(item);
    const left = leaseEnd - deps.clock().getTime();
    if (left < DELIVERY_TIMEOUT_MS) {
      // The send's deadline no longer fits in the lease (a slow call since it was taken): another run may start once it
      // passes, so this one sends nothing and the delivery is tried again after the lease, never two sends at once.
      deps.logger.info('Webhook delivery not sent: its lease was too short for the send', { ...ids, deliveryId: inflight.id, leaseLeftMs: left });
      return { kind: 'outcome', outcome: { kind: 'retry', seconds: Math.max(1, Math.ceil(left / 1000)) } };
    }
    const headers = { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...signDelivery(secrets, inflight.id, (deps.wallClock ?? systemClock)(), text) };
    // The last look, once connected (the guard resolves and connects first, which can take seconds): a revoke, a user's
    // deletion or a delete that closed the webhook meanwhile has answered by now, and nothing is written.
    // A look that fails (a throttle, the table down) is an error of the run, not a "no": it goes up to the queue,
    // which backs off as for any failed call, rather than coming back at each lease (15 s) for as long as it lasts.
    let lookFailed: { error: unknown } | undefined;
    const beforeSend = () =>
      deps.state.maySend(webhookId, inflight.id).catch((error: unknown) => {
        lookFailed = { error };
        return false;
      });
    const outcome = await deps.post({ url: item.url, body: text, headers, beforeSend });
    if (outcome.kind === 'withdrawn') {
      if (lookFailed) throw lookFailed.error;
      return this.reread();
    }
    const now = deps.clock();
    deps.metrics.publish({ [DIMENSIONS.result]: resultOf(outcome) }, [{ name: METRICS.webhookDeliveries, unit: 'Count', value: 1 }]);
    if (outcome.kind === 'answered' && isAcknowledged(outcome.status)) {
      const lag = Math.max(0, (now.getTime() - Date.parse(inflight.first_at)) / 1000);
      deps.metrics.publish({}, [{ name: METRICS.webhookDeliveryLag, unit: 'Seconds', value: lag }]);
      return this.acknowledged(item, inflight, page, now, !!item.failing_since || prior > 0);
    }
    const failure = failureOf(outcome as Exclude<PostOutcome, { kind: 'answered'; status: 200 } | { kind: 'withdrawn' }>, now);
    const gone = outcome.kind === 'answered' && outcome.status === 410;
    if (gone || failingTooLong(item.failing_since ?? inflight.first_at, now)) {
      const disabled = await deps.state.disable(webhookId, gone ? 'gone' : 'failing', now, failure);
      // Its audit line (once), its count, and no more wake-ups: disable-audit.ts.
      await auditDisable(deps, disabled ?? (await deps.state.webhook(webhookId)));
      return DONE;
    }
    const seconds = retryDelaySeconds(prior + 1, deps.random);
    await deps.state.failed(webhookId, inflight.id, failure, new Date(now.getTime() + seconds * 1000));
    if (!item.failing_since && prior === 0) await deps.state.setScopeState(item.feed, webhookId, 'retrying');
    deps.logger.info('Webhook delivery failed; retried later', { ...ids, deliveryId: inflight.id, ...(failure.status !== undefined ? { status: failure.status } : { errorClass: failure.errorClass }), retryInSeconds: seconds });
    return { kind: 'outcome', outcome: { kind: 'retry', seconds } };
  }

  /**
   * A 2xx. The next page is read first (when the wake-up may start another
   * delivery), so that one write moves the cursor and puts that delivery in
   * flight; a next page with nothing to send is passed by the same write
   * that records the 2xx, and one that ends the feed ends the run.
   */
  private async acknowledged(item: WebhookItem, inflight: InFlight, page: Extract<PageRead, { kind: 'page' }>, now: Date, recovered: boolean): Promise<Step> {
    const { state } = this.deps;
    const webhookId = this.webhookId;
    if (recovered) {
      // Woken by every change again, before the next page is read: a change the fan-out skipped while this was retrying
      // is in it (a cache answers "nothing more" only from a read after this).
      await state.setScopeState(item.feed, webhookId, 'active');
      this.feeds = feedsOfRun(this.deps.feeds);
    }
    // The webhook once this delivery is recorded: at its end, `reset` kept only while a fresh start's members go on.
    const moved = { ...item, cursor: page.next, reset: item.reset && !page.endsStart ? (true as const) : undefined };
    const mayGoOn = this.started + 1 < this.budget.maxDeliveries && this.budget.mayStart();
    const next = mayGoOn ? await this.pageOf(moved, page.next) : undefined;
    let step: Step | undefined;
    if (next?.kind === 'page' && sendable(moved, next)) {
      await this.signingSecrets(moved);
      const both = await state.ackAndBegin(webhookId, inflight.id, page.next, now, page.endsStart, this.fresh(page.next, next));
      if (both) step = { kind: 'ready', ready: { item: both, inflight: both.inflight!, page: next, counted: true } };
    }
    if (!step) {
      const pass = next?.kind === 'page' && !sendable(moved, next) ? next : undefined;
      const acked = await state.ack(webhookId, inflight.id, pass ? pass.next : page.next, now, page.endsStart || !!pass?.endsStart);
      step = pass && !pass.hasMore ? DONE : { kind: 'item', item: acked ?? (await state.webhook(webhookId)) };
    }
    return step;
  }
}
