/**
 * The receivers of test/support/webhook-world.ts, in-process behind the
 * delivery's send (lambdas/delivery/outbound.ts, the outbound guard's
 * request and outcome: the guard itself turns sockets into these outcomes,
 * held by its own tests), each an adversary following a script of answers,
 * and a referee of every send. At each send, before it answers:
 * - the signature verifies (standardwebhooks, the receiver's library) with
 *   the webhook's secret, and the body names the webhook;
 * - no other send of the same webhook is still waiting for its answer (one
 *   delivery in flight at a time);
 * - no send starts once the webhook's key is closed (its revoke answered,
 *   its user's deletion applied);
 * - every change is what the read routes show now: an upsert's object is
 *   the scope's read model's, a `removed` id is not in it (so a retry never
 *   carries content the read routes no longer show), 1 to 100 changes (none
 *   only to end a fresh start). Where the write side wrote while the run
 *   went on (an exploration lands a change between the run's calls), what
 *   the read routes showed just before that write is also what the run may
 *   have read: nothing older;
 * Each receiver keeps two copies: one applying every delivery it takes, and
 * one as an idempotent consumer keeps it (Standard Webhooks' advice: a
 * `webhook-id` taken once is not applied again, its retries answered 2xx
 * unread), which must miss nothing either.
 */
import { isDeepStrictEqual } from 'node:util';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PostOutcome, PostRequest } from '../../lambdas/delivery/outbound.js';
import { DELIVERY_MAX_CHANGES, DELIVERY_TIMEOUT_MS, type WebhookScope } from '../../lambdas/core/webhook-rules.js';
import { expectedScopes, type Content } from './feed-consumer.js';
import { WebhookReplica, verifies, type DeliveredBody } from './webhook-replica.js';

/**
 * A receiver's answer to one send. `ok` 2xx (applied); `error` 503; `gone` 410 (the webhook is disabled; its owner
 * resumes it later); `timeout` no answer within the guard's deadline; `late` applied, but answered after the
 * deadline; `dropped` the connection dropped before the request was read; `lost` applied and answered 2xx, the
 * answer lost (a reset connection); `twice` the request arrived twice (retransmitted), both applied, 2xx; `crash`
 * applied and answered 2xx, and the delivery function died before recording it; `down` 503 to every send for that
 * many hours.
 */
export type Behaviour = 'ok' | 'error' | 'gone' | 'timeout' | 'late' | 'dropped' | 'lost' | 'twice' | 'crash' | { down: number };

export const BEHAVIOURS: readonly Behaviour[] = ['ok', 'error', 'gone', 'timeout', 'late', 'dropped', 'lost', 'twice', 'crash', { down: 1 }, { down: 5 }];

export interface Hook {
  id: string;
  userId: string;
  keyId: string;
  scope: WebhookScope;
  /** Its scope's name in expectedScopes (feed-consumer.ts): 'catalogue', 'host:{id}', 'guests:{id}', 'place:{name}'. */
  name: string;
  url: string;
  secret: string;
  script: readonly Behaviour[];
  replica: WebhookReplica;
  /** The idempotent consumer's copy: each `webhook-id` applied once, the first time it is taken. */
  firstOnly: WebhookReplica;
  taken: Set<string>;
  sends: number;
  /** Every send's webhook-id and the ids it carried, in order. */
  log: { id: string; ids: string[] }[];
  answering: boolean;
  downUntil: number;
  /** Answered 410: its owner resumes it at the world's next turn. */
  wantsResume: boolean;
  /** Its key is closed: no send may start. */
  dead: boolean;
  /** Runs of the delivery function on it now, and how many of them wait in a send (the world counts them). */
  runs: number;
  atSend: number;
}

/** A run of the delivery function that dies (not a failure the engine handles): after a call, or after a send before recording it. */
export class DeliveryCrash extends Error {
  constructor(where: string) {
    super(`delivery crashed ${where}`);
    this.name = 'DeliveryCrash';
  }
}

type Seen = { events: Set<string>; guests: Set<string>; places: Set<string> };

export class ReceiverModel {
  readonly hooks = new Map<string, Hook>();
  private readonly byUrl = new Map<string, Hook>();
  /** Every rule broken, as a sentence (a suite expects none). */
  readonly violations: string[] = [];
  /** Ids each scope ever carried, as FeedConsumer.seen keeps them: for "never public, never shown". */
  readonly seen: Seen = { events: new Set(), guests: new Set(), places: new Set() };
  readonly answered = new Map<string, number>();
  private model?: Promise<Map<string, Map<string, Content>>>;
  /** The read model just before each write of the write side made while runs went on (cleared when none runs). */
  private earlier: Promise<Map<string, Map<string, Content>>>[] = [];
  /** Runs of the delivery function going on now (any webhook). */
  running = 0;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly clock: () => Date,
    private readonly passTime: (ms: number) => void,
  ) {}

  /** The referee's read, on the world's own client: no call of the run that sends, never a crash point. */
  private readModel(): Promise<Map<string, Map<string, Content>>> {
    return expectedScopes(this.client, this.table);
  }

  add(h: Pick<Hook, 'id' | 'userId' | 'keyId' | 'scope' | 'name' | 'url' | 'secret' | 'script'>, replica = new WebhookReplica()): Hook {
    const hook: Hook = { ...h, replica, firstOnly: replica.copy(), taken: new Set(), sends: 0, log: [], answering: false, downUntil: 0, wantsResume: false, dead: false, runs: 0, atSend: 0 };
    this.hooks.set(hook.id, hook);
    this.byUrl.set(hook.url, hook);
    return hook;
  }

  /** The write side may have moved since the last turn: the read model is read again at the next send. */
  newTurn(): void {
    this.model = undefined;
    this.earlier = [];
  }

  /** A run starts: with none going on, only what the read routes show from now on counts. */
  runStarts(): void {
    if (this.running++ === 0) this.earlier = [];
  }

  runEnds(): void {
    this.running--;
  }

  /** The write side is about to write while a run goes on: what the read routes show now stays admissible for it. */
  async writeSideMoves(): Promise<void> {
    this.earlier.push(this.model ?? this.readModel());
    await this.earlier.at(-1);
    this.model = undefined;
  }

  private violate(hook: Hook, rule: string): void {
    this.violations.push(`${hook.name} (${hook.id}), send ${hook.sends}: ${rule}`);
  }

  async post(req: PostRequest): Promise<PostOutcome> {
    const hook = this.byUrl.get(req.url);
    if (!hook) return { kind: 'refused', errorClass: 'address' };
    // The guard's last look once connected (guard/post.ts, beforeSend): no, and nothing is written. A failure to say
    // is a no too, except our own death there (the delivery function dying after that read), which goes on up.
    if (req.beforeSend) {
      const ok = await req.beforeSend().catch((error: Error) => {
        if (error.name === 'DeliveryCrash') throw error;
        return false;
      });
      if (!ok) return { kind: 'withdrawn' };
    }
    hook.sends++;
    const body = JSON.parse(req.body) as DeliveredBody;
    const deliveryId = req.headers['webhook-id']!;
    if (!verifies([hook.secret], req.body, { ...req.headers })) this.violate(hook, 'the signature does not verify');
    if (body.webhook_id !== hook.id) this.violate(hook, `the body names ${body.webhook_id}`);
    if (hook.dead) this.violate(hook, 'a send started after its key was closed');
    if (hook.answering) this.violate(hook, 'a send started while another of the same webhook waited for its answer');
    await this.checkContent(hook, body);
    hook.log.push({ id: deliveryId, ids: body.changes.map((c) => `${c.change === 'removed' ? '-' : '+'}${c.id}`) });
    hook.answering = true;
    hook.atSend++;
    try {
      // A receiver slow to answer: another run of the same webhook (a wake-up delivered twice) goes on meanwhile, as
      // far as it will before it too waits in a send or ends; it must not have sent.
      for (let spins = 0; hook.runs > hook.atSend && spins < 10_000; spins++) await new Promise((r) => setImmediate(r));
      return this.answer(hook, body, deliveryId);
    } finally {
      hook.answering = false;
      hook.atSend--;
    }
  }

  private behaviour(hook: Hook): Exclude<Behaviour, { down: number }> {
    if (this.clock().getTime() < hook.downUntil) return 'error';
    const b = hook.script[hook.sends - 1] ?? 'ok';
    if (typeof b === 'object') hook.downUntil = this.clock().getTime() + b.down * 3_600_000;
    return typeof b === 'object' ? 'error' : b;
  }

  private answer(hook: Hook, body: DeliveredBody, deliveryId: string): PostOutcome {
    const b = this.behaviour(hook);
    this.answered.set(b, (this.answered.get(b) ?? 0) + 1);
    const take = () => {
      hook.replica.apply(body);
      if (!hook.taken.has(deliveryId)) hook.firstOnly.apply(body);
      hook.taken.add(deliveryId);
    };
    if (b === 'ok' || b === 'late' || b === 'lost' || b === 'twice' || b === 'crash') take();
    if (b === 'twice') take();
    switch (b) {
      case 'ok':
      case 'twice':
        return { kind: 'answered', status: 204 };
      case 'error':
        return { kind: 'answered', status: 503 };
      case 'gone':
        hook.wantsResume = true;
        return { kind: 'answered', status: 410 };
      case 'timeout':
      case 'late':
        this.passTime(DELIVERY_TIMEOUT_MS);
        return { kind: 'failed', errorClass: 'timeout' };
      case 'dropped':
      case 'lost':
        return { kind: 'failed', errorClass: 'protocol' };
      case 'crash':
        throw new DeliveryCrash('after sending, before recording');
      default:
        throw new Error(`no behaviour ${JSON.stringify(b)}`);
    }
  }

  /** Every change as the read routes show it now (the scope's read model, read once a turn). */
  private async checkContent(hook: Hook, body: DeliveredBody): Promise<void> {
    if (body.changes.length > DELIVERY_MAX_CHANGES) this.violate(hook, `${body.changes.length} changes`);
    if (!body.changes.length && !body.reset) this.violate(hook, 'a delivery with no change');
    this.model ??= this.readModel();
    const models = [await this.model, ...(await Promise.all(this.earlier))].map((m) => m.get(hook.name) ?? new Map<string, Content>());
    const shown = models[0]!;
    for (const c of body.changes) {
      if (c.change === 'removed') {
        if (Object.keys(c).sort().join() !== 'change,id') this.violate(hook, `removed ${c.id} carries more than its id`);
        if (models.every((m) => m.has(c.id))) this.violate(hook, `removed ${c.id}, which the read route shows`);
      } else {
        const json = (m: Map<string, Content>) => (m.has(c.id) ? JSON.parse(JSON.stringify(m.get(c.id))) : undefined);
        if (!models.some((m) => isDeepStrictEqual(c.event ?? c.guest, json(m)))) this.violate(hook, `upserted ${c.id} as ${JSON.stringify(c.event ?? c.guest)}, where the read route shows ${JSON.stringify(shown.get(c.id))}`);
      }
      if (hook.scope.type === 'guests') this.seen.guests.add(`${hook.scope.eventId}\u0000${c.id}`);
      else this.seen.events.add(c.id);
      if (hook.scope.type === 'place') this.seen.places.add(`${hook.name}\u0000${c.id}`);
    }
  }
}
