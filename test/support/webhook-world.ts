/**
 * Webhooks following a table while the write side changes it (PRODUCT P18),
 * for the feed properties and the schedule explorations: the real engine
 * (lambdas/delivery/: the fan-out, a webhook's deliveries; webhooks made and
 * resumed by the real WebhookManager) with what AWS provides played here,
 * each as an adversary:
 * - the table's stream: every write that lands on a feed head (`tap`, from
 *   the write side's own clients) makes its scope "moved", handed to the
 *   fan-out at the next `step`;
 * - the FIFO queue, one message group per webhook: a wake-up runs when due;
 *   'retry' comes back when due, 'more' at once, a run that dies after its
 *   visibility timeout; a wake-up may be delivered twice at once (`dup`: a
 *   visibility timeout passed while the first still ran), so the engine,
 *   not the queue, must keep one webhook's deliveries from overlapping;
 * - the delivery function dies right after any of its DynamoDB calls (the
 *   call landed), and right after a send before recording it;
 * - the receivers (webhook-receiver-model.ts: they answer 2xx, 5xx, 410,
 *   time out, drop the connection, take a request twice, are down for
 *   hours), with every rule checked at every send.
 * Time is the world's injected clock, moved to the next retry when nothing
 * is due (never slept).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { runWebhook, type DeliveryDeps } from '../../lambdas/delivery/deliver.js';
import { fanOut } from '../../lambdas/delivery/fan-out.js';
import { WebhookManager } from '../../lambdas/key-admin/webhook-manager.js';
import { DeliveryState } from '../../lambdas/store/webhooks/delivery-state.js';
import { localSecretBox } from '../../lambdas/store/webhooks/secret-box.js';
import { KeyStore } from '../../lambdas/store/keys/key-store.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { resolveScope, type WebhookScope } from '../../lambdas/core/webhook-rules.js';
import { catalogueChanges, guestChanges, hostChanges, placeChanges, type FeedPage } from '../../lambdas/core/feeds.js';
import { parseCursor } from '../../lambdas/core/feed-cursor.js';
import { findUserById } from '../../lambdas/store/table/user-lookup.js';
import { FEED_PARTITION_PREFIX, FEED_HEAD_PREFIX } from '../../lambdas/store/feeds/feed-layout.js';
import type { Logger } from '../../lambdas/http/logger.js';
import { noMetrics } from '../../lambdas/http/metrics.js';
import { feedContext, testKeyring } from './feed-keys.js';
import { FEED_SITE, type Follower } from './feed-consumer.js';
import { DeliveryCrash, ReceiverModel, type Behaviour, type Hook } from './webhook-receiver-model.js';
import { WebhookReplica, type DeliveredBody } from './webhook-replica.js';

export { BEHAVIOURS, type Behaviour, type Hook } from './webhook-receiver-model.js';

/** When a run that died is seen again: the delivery queue's visibility timeout (seconds). */
export const VISIBILITY_SECONDS = 60;

export interface WorldOptions {
  /**
   * The table the feeds are in, and how to make clients on its store: the world's own (the management API, the
   * fan-out, the referee: no fault reaches them) and one for each run of the delivery function (its crash points).
   */
  newClient: () => DynamoDBDocumentClient;
  table: string;
  /** Where the webhooks' own items are (default: the same table; a schedule exploration keeps them apart from its digests). */
  stateTable?: string;
  start: Date;
  /** How run `n` (0-based, every run of every webhook) dies: after its `crashAfter`-th DynamoDB call, or not at all (0). */
  runs?: readonly number[];
  /** Whether wake-up `n` is delivered twice at once (two runs of one webhook side by side). */
  dups?: readonly boolean[];
  /** Runs after call `call` of run `run` has landed (before it may die there): the write side going on meanwhile. */
  between?: (run: number, call: number) => Promise<void>;
}

const quiet: Logger = { info() {}, warn() {}, error() {}, debug() {} };

interface Group {
  /** When its next wake-up may run (ms of the world's clock). */
  due: number;
  /** Its last run found its scope not shown (a `parked` retry): it looks again when due, with nothing to deliver until then. */
  parked?: boolean;
  /** A wake-up came while it ran (the fan-out, a resume): it runs again. */
  again?: boolean;
}

export class WebhookWorld implements Follower {
  private now: number;
  readonly clock = () => new Date(this.now);
  readonly receivers: ReceiverModel;
  private readonly groups = new Map<string, Group>();
  private readonly moved = new Set<string>();
  private readonly client: DynamoDBDocumentClient;
  private readonly deps: DeliveryDeps;
  private readonly manager: WebhookManager;
  private readonly state: DeliveryState;
  private runs = 0;
  private wakeUps = 0;
  /** The DynamoDB calls each run made, by run number (an exploration's crash points). */
  readonly callsOfRun: number[] = [];
  /** Sends, runs, crashes and disables so far (printed by the suites that use it). */
  readonly counts = { runs: 0, crashes: 0, overlapsTried: 0, resumed: 0 };

  constructor(private readonly opts: WorldOptions) {
    this.now = opts.start.getTime();
    const client = (this.client = opts.newClient());
    const stateTable = opts.stateTable ?? opts.table;
    const repo = new DynamoRepository(client, opts.table);
    this.state = new DeliveryState(client, stateTable);
    const secrets = localSecretBox();
    this.receivers = new ReceiverModel(client, opts.table, this.clock, (ms) => void (this.now += ms));
    this.deps = {
      state: this.state,
      feeds: repo,
      events: repo,
      keyring: testKeyring,
      secrets,
      post: (req) => this.receivers.post(req),
      siteUrl: FEED_SITE,
      clock: this.clock,
      // webhook-timestamp is real time (as in AWS and the local server): the receivers' library checks it against theirs.
      random: () => 0.5,
      logger: quiet,
      metrics: noMetrics,
    };
    this.manager = new WebhookManager({
      client,
      tableName: stateTable,
      keys: new KeyStore(client, opts.table, { clock: this.clock }),
      feeds: repo,
      events: repo,
      keyring: testKeyring,
      secrets,
      checkUrl: async () => ({ ok: true }),
      nudge: async (id) => this.wake(id),
      siteUrl: FEED_SITE,
      clock: this.clock,
      maxPerKey: 50,
    });
  }

  /**
   * A webhook of the key, through the management API's own create; undefined when the scope is refused now (a guest
   * list of an event not public). Its start: `backfill` (the scope's present contents first); `pulled` (its receiver
   * read the scope from no cursor first and hands its cursor over: `start_cursor`); else the scope's next change, its
   * receiver having read the scope just before (a pull, then the default start: nothing changed in between here).
   */
  async create(userId: string, keyId: string, scope: WebhookScope, name: string, start: 'backfill' | 'pulled' | 'next', script: readonly Behaviour[] = []): Promise<Hook | undefined> {
    const url = `https://hooks.test/${this.receivers.hooks.size}`;
    const replica = new WebhookReplica();
    if (start !== 'backfill' && (await this.pull(scope, replica)) === undefined) return undefined;
    try {
      const made = await this.manager.create(userId, keyId, { url, scope, ...(start === 'backfill' ? { backfill: true } : start === 'pulled' ? { start_cursor: replica.cursor! } : {}) });
      if (!made.created) throw new Error('create answered no secret');
      return this.receivers.add({ id: made.info.webhookId, userId, keyId, scope, name, url, secret: made.secret, script }, replica);
    } catch (error) {
      if ((error as { code?: string }).code === 'UNKNOWN_SCOPE') return undefined;
      throw error;
    }
  }

  /**
   * The stream's view of one call of the write side that landed: a write to a feed's head moves that scope (what
   * DynamoDB Streams hands the fan-out, filtered to head writes). Undelivered writes never call this.
   */
  tap(input: Record<string, unknown>): void {
    this.writes++;
    const keys: Record<string, unknown>[] = [];
    const key = (input.Key ?? input.Item) as Record<string, unknown> | undefined;
    if (key) keys.push(key);
    for (const requests of Object.values((input.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Record<string, unknown> }; DeleteRequest?: { Key: Record<string, unknown> } }[]>)) {
      if (Array.isArray(requests)) for (const r of requests) keys.push((r.PutRequest?.Item ?? r.DeleteRequest?.Key)!);
    }
    for (const k of keys) {
      const pk = String(k?.pk ?? '');
      if (pk.startsWith(FEED_PARTITION_PREFIX) && String(k.sk ?? '').startsWith(FEED_HEAD_PREFIX)) this.moved.add(pk.slice(FEED_PARTITION_PREFIX.length));
    }
  }

  /** A client of the write side whose landed writes the stream carries (the world taps it); answers the client. */
  watch(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
    client.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        this.tap((args as { input: Record<string, unknown> }).input);
        return out;
      },
      { step: 'initialize', name: 'webhook-stream' },
    );
    return client;
  }

  /** The key's webhooks die with it: from now on (its revoke answered, its user's deletion applied) no send of theirs may start. */
  keyClosed(userId: string, keyId?: string): void {
    for (const hook of this.receivers.hooks.values()) if (hook.userId === userId && (keyId === undefined || hook.keyId === keyId)) hook.dead = true;
  }

  private wake(webhookId: string): void {
    const g = this.groups.get(webhookId);
    if (!g) this.groups.set(webhookId, { due: this.now });
    else {
      g.due = Math.min(g.due, this.now);
      g.again = true;
    }
  }

  /** A turn, whenever the consumer beside it reads (feed-consumer.ts, Follower). */
  poll(): Promise<boolean> {
    return this.step();
  }

  /**
   * One turn of the world: the fan-out of every scope that moved, then every wake-up due now (each once; a disabled
   * webhook its owner resumes). Answers whether anything ran.
   */
  step(): Promise<boolean> {
    // One turn at a time: the consumer reads from inside the write side's concurrent calls (its waves), and the queue
    // hands each message group out once; a duplicated wake-up is the adversary's (`dups`), never the harness's.
    const turn = this.turn.then(() => this.turnOnce());
    this.turn = turn.catch(() => undefined);
    return turn;
  }

  private turn: Promise<unknown> = Promise.resolve();
  /** Write-side calls that landed (the stream's taps), and their count when parked webhooks last looked again. */
  private writes = 0;
  private parkedLookedAt = -1;

  private async turnOnce(): Promise<boolean> {
    this.receivers.newTurn();
    let any = false;
    for (const feed of [...this.moved]) {
      this.moved.delete(feed);
      let task: { feed: string; token: string; after?: string } | undefined = { feed, token: String(this.wakeUps) };
      while (task) {
        const current: { feed: string; token: string; after?: string } = task;
        task = undefined;
        await fanOut({ state: this.state, nudge: async (n) => n.forEach((x) => this.wake(x.webhookId)), continueLater: async (t) => void (task = t) }, current);
      }
      any = true;
    }
    for (const hook of this.receivers.hooks.values()) {
      if (hook.wantsResume && !hook.dead) {
        hook.wantsResume = false;
        this.counts.resumed++;
        await this.manager.resume(hook.userId, hook.keyId, hook.id).catch((error: { code?: string }) => {
          // Resumed already, or its key closed meanwhile: nothing to resume.
          if (error.code !== 'NOT_DISABLED' && error.code !== 'KEY_REVOKED' && error.code !== 'UNKNOWN_WEBHOOK' && error.code !== 'UNKNOWN_KEY' && error.code !== 'UNKNOWN_USER') throw error;
        });
        any = true;
      }
    }
    for (const [id, g] of [...this.groups].sort(([a], [b]) => a.localeCompare(b))) {
      if (g.due > this.now) continue;
      const dup = this.opts.dups?.[this.wakeUps++] ?? false;
      if (dup) this.counts.overlapsTried++;
      g.again = false;
      const outcomes = await Promise.all((dup ? [0, 1] : [0]).map(() => this.runOnce(id)));
      // What comes back to the group: a retry when due, 'more' at once, a run that died after the visibility timeout.
      const dues = outcomes.flatMap((o) => (o === 'crash' ? [this.now + VISIBILITY_SECONDS * 1000] : o.kind === 'retry' ? [this.now + o.seconds * 1000] : o.kind === 'more' ? [this.now] : []));
      g.parked = !g.again && outcomes.every((o) => o !== 'crash' && o.kind === 'retry' && o.parked === true);
      const next = Math.min(...dues, g.again ? this.now : Infinity);
      if (Number.isFinite(next)) g.due = next;
      else this.groups.delete(id);
      any = true;
    }
    return any;
  }

  private async runOnce(id: string): Promise<Awaited<ReturnType<typeof runWebhook>> | 'crash'> {
    const run = this.runs++;
    const crashAfter = this.opts.runs?.[run] ?? 0;
    this.counts.runs++;
    const hook = this.receivers.hooks.get(id);
    if (hook) hook.runs++;
    this.receivers.runStarts();
    const context = { calls: 0, lastLook: false };
    // The run's own client: it dies right after its `crashAfter`-th call (the call landed), the write side going on between its calls.
    const client = this.opts.newClient();
    client.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        context.calls++;
        // Between the guard's last look and the send there is only the write to a connected socket: the write side
        // lands nothing there (it may before the look, which the look then sees).
        if (!context.lastLook) await this.opts.between?.(run, context.calls);
        if (context.calls === crashAfter) throw new DeliveryCrash(`after its call ${context.calls}`);
        return out;
      },
      { step: 'initialize', name: 'delivery-crash' },
    );
    const repo = new DynamoRepository(client, this.opts.table);
    const post: DeliveryDeps['post'] = (req) => {
      const look = req.beforeSend;
      const marked = look
        ? async () => {
            context.lastLook = true;
            try {
              return await look();
            } finally {
              context.lastLook = false;
            }
          }
        : undefined;
      return this.receivers.post({ ...req, ...(marked ? { beforeSend: marked } : {}) });
    };
    const deps: DeliveryDeps = { ...this.deps, state: new DeliveryState(client, this.opts.stateTable ?? this.opts.table), feeds: repo, events: repo, post };
    try {
      return await runWebhook(deps, id, { maxDeliveries: 20, mayStart: () => true });
    } catch (error) {
      // By name: a client may hand an error thrown in its middleware back as another class of the same name.
      if ((error as Error).name !== 'DeliveryCrash') throw error;
      this.counts.crashes++;
      return 'crash';
    } finally {
      if (hook) hook.runs--;
      this.receivers.runEnds();
      this.callsOfRun[run] = context.calls;
      client.destroy();
    }
  }

  /**
   * The receiver's cursor taken to the pull feed (PRODUCT P18: push and pull hand over exactly): its copy of the
   * scope with every page from that cursor applied, read until `has_more` is false, and how many changes the pull
   * gave. Undefined when there is nothing to hand over: no delivery yet, or the feed's route answers 404 or 400 now
   * (a host deleted, a guest list of an event not public), as it would to a pull consumer.
   */
  async handover(hook: Hook): Promise<{ members: Map<string, unknown>; pulled: number } | undefined> {
    if (hook.replica.cursor === undefined) return undefined;
    const copy = hook.replica.copy();
    const pulled = await this.pull(hook.scope, copy);
    return pulled === undefined ? undefined : { members: copy.members, pulled };
  }

  /** Applies the scope's pages from the replica's cursor (none: from no cursor) until `has_more` is false; the changes given, or undefined when the route refuses. */
  private async pull(scope: WebhookScope, replica: WebhookReplica): Promise<number | undefined> {
    const repo = new DynamoRepository(this.client, this.opts.table);
    const ctx = feedContext(repo, this.clock());
    let username = '';
    if (scope.type === 'host') {
      const user = await findUserById(this.client, this.opts.table, scope.userId);
      if (!user?.user) return undefined;
      username = user.user.username;
    }
    let pulled = 0;
    for (let pages = 0, more = true; more; pages++) {
      if (pages > 100) throw new Error(`${JSON.stringify(scope)}: the pull has no end`);
      const req = { ...(replica.cursor !== undefined ? { cursor: parseCursor(replica.cursor)! } : {}), limit: 100 };
      let page: FeedPage<DeliveredBody['changes'][number]>;
      try {
        page =
          scope.type === 'catalogue'
            ? await catalogueChanges(ctx, req, FEED_SITE)
            : scope.type === 'host'
              ? await hostChanges(ctx, { ...req, username, variant: 'dated' }, FEED_SITE)
              : scope.type === 'place'
                ? await placeChanges(ctx, { ...req, place: resolveScope(scope).place! }, FEED_SITE)
                : await guestChanges(ctx, repo, { ...req, eventId: scope.eventId });
      } catch (error) {
        if (scope.type === 'guests' && (error as { statusCode?: number }).statusCode === 404) return undefined;
        throw error;
      }
      replica.apply({ webhook_id: '', scope, changes: page.changes, cursor: page.next_cursor });
      pulled += page.changes.length;
      more = page.has_more;
    }
    return pulled;
  }

  close(): void {
    this.client.destroy();
  }

  /**
   * Until nothing is left to do: steps, and when nothing is due now, the clock moved to the next wake-up (retries over
   * hours of an endpoint down). Answers the clock's time then.
   */
  async drain(maxTurns = 3000): Promise<Date> {
    for (let turn = 0; turn < maxTurns; turn++) {
      if (await this.step()) continue;
      const next = Math.min(...[...this.groups.values()].filter((g) => !g.parked).map((g) => g.due));
      if (Number.isFinite(next)) {
        this.now = Math.max(this.now, next);
        continue;
      }
      // Only webhooks whose scope was not shown are left: time passes until each looks again, once for every time the
      // write side has written since they last did (a scope shown again is delivered then); else all is delivered.
      const parked = [...this.groups.values()].filter((g) => g.parked);
      if (!parked.length || this.parkedLookedAt === this.writes) return this.clock();
      this.parkedLookedAt = this.writes;
      this.now = Math.max(this.now, ...parked.map((g) => g.due));
    }
    throw new Error(`webhooks: still delivering after ${maxTurns} turns`);
  }
}
