/**
 * Webhooks' management (PRODUCT P18), beside the key manager and like it:
 * create, list, get, delete, rotate-secret and resume a key's webhooks, by
 * user id and key id. The items and writes are lambdas/store/webhooks/;
 * the rules lambdas/core/webhook-rules.ts. Every refusal names its field
 * and stores nothing; a create is usable last (its place, its scope entry,
 * then its item) and checks its key again after writing, so a revoke that
 * ran meanwhile wins (it closes every webhook holding a place, item or not).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { systemClock, type Clock } from '../core/clock.js';
import { CURSOR_LIFETIME_SECONDS, openCursor, parseCursor, sealCursor, type CursorKeyring } from '../core/feed-cursor.js';
import type { EventReader, FeedReader } from '../core/ports.js';
import { MAX_WEBHOOKS_PER_KEY, SECRET_OVERLAP_SECONDS, WEBHOOK_URL_MAX_LENGTH, resolveScope, type CreateWebhookInput, type DeliveryFailure, type WebhookScope, type WebhookStateName } from '../core/webhook-rules.js';
import { newWebhookSecret } from '../core/webhook-signing.js';
import type { KeyStore } from '../store/keys/key-store.js';
import { findUserById } from '../store/table/user-lookup.js';
import type { WebhookAudit } from '../store/webhooks/key-webhooks.js';
import type { SecretBox } from '../store/webhooks/secret-box.js';
import type { WebhookItem } from '../store/webhooks/webhook-items.js';
import { WebhookRecords } from '../store/webhooks/webhook-records.js';
import { readWebhookPage } from '../delivery/webhook-page.js';
import { randomBase62, timeBase62 } from './random.js';

export type WebhookErrorCode = 'UNKNOWN_USER' | 'UNKNOWN_KEY' | 'KEY_REVOKED' | 'LIMIT_REACHED' | 'BAD_URL' | 'BAD_SCOPE' | 'UNKNOWN_SCOPE' | 'BAD_CURSOR' | 'UNKNOWN_WEBHOOK' | 'NOT_DISABLED' | 'IDEMPOTENCY_MISMATCH';

const STATUS: Record<WebhookErrorCode, number> = {
  UNKNOWN_USER: 404,
  UNKNOWN_KEY: 404,
  KEY_REVOKED: 409,
  LIMIT_REACHED: 409,
  BAD_URL: 400,
  BAD_SCOPE: 400,
  UNKNOWN_SCOPE: 404,
  BAD_CURSOR: 400,
  UNKNOWN_WEBHOOK: 404,
  NOT_DISABLED: 409,
  IDEMPOTENCY_MISMATCH: 422,
};

export class WebhookError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: WebhookErrorCode,
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookError';
    this.statusCode = STATUS[code];
  }
}

/** What may be shown about a webhook: never its secret (shown once, at create and rotate), never a receiver's answer. */
export interface WebhookInfo {
  webhookId: string;
  keyId: string;
  scope: WebhookScope;
  url: string;
  state: WebhookStateName;
  createdAt: string;
  /** When the delivery in flight is tried again (retrying). */
  retryAt: string | null;
  disabledReason: string | null;
  disabledAt: string | null;
  lastFailure: DeliveryFailure | null;
  lastSuccessAt: string | null;
  /** After a rotation: until when deliveries carry the previous secret's signature too. */
  previousSecretValidUntil: string | null;
}

export function webhookInfo(item: WebhookItem): WebhookInfo {
  const state: WebhookStateName = item.state === 'disabled' ? 'disabled' : item.inflight?.next_at ? 'retrying' : 'active';
  return {
    webhookId: item.webhook_id,
    keyId: item.key_id,
    scope: item.scope,
    url: item.url,
    state,
    createdAt: item.created_at,
    retryAt: state === 'retrying' ? item.inflight!.next_at! : null,
    disabledReason: item.disabled_reason ?? null,
    disabledAt: item.disabled_at ?? null,
    lastFailure: item.last_failure ?? null,
    lastSuccessAt: item.last_success_at ?? null,
    previousSecretValidUntil: item.previous_until ?? null,
  };
}

/** The URL's check: the outbound guard's checkUrl (syntax, then every address the host resolves to), as a sentence when refused. */
export type UrlChecker = (raw: string) => Promise<{ ok: true } | { ok: false; message: string }>;

export interface WebhookManagerDeps {
  client: DynamoDBDocumentClient;
  tableName: string;
  keys: KeyStore;
  feeds: FeedReader;
  events: EventReader;
  keyring: CursorKeyring;
  secrets: SecretBox;
  checkUrl: UrlChecker;
  /** Wakes the webhook now (its FIFO message group in AWS): a backfill, a start cursor, a resume has something to deliver. */
  nudge: (webhookId: string) => Promise<void>;
  siteUrl: string;
  audit?: WebhookAudit;
  clock?: Clock;
  maxPerKey?: number;
}

export type CreatedWebhook = { created: true; secret: string; info: WebhookInfo } | { created: false; info: WebhookInfo };

export class WebhookManager {
  readonly records: WebhookRecords;
  /** Settable: the key-management function installs its own, naming the request's caller (handler.ts). */
  audit: WebhookAudit | undefined;
  private readonly clock: Clock;
  constructor(private readonly deps: WebhookManagerDeps) {
    this.records = new WebhookRecords(deps.client, deps.tableName);
    this.clock = deps.clock ?? systemClock;
    this.audit = deps.audit;
  }

  /** The user is live and the key is theirs and usable; else the refusal naming userId or keyId. */
  private async usableKey(userId: string, keyId: string) {
    const [user, record] = await Promise.all([findUserById(this.deps.client, this.deps.tableName, userId), this.deps.keys.record(userId, keyId)]);
    if (!user) throw new WebhookError('UNKNOWN_USER', 'userId', `No user ${userId}`);
    if (!record || record.erased) throw new WebhookError('UNKNOWN_KEY', 'keyId', `User ${userId} has no key ${keyId}`);
    if (record.revoked || !record.confirmed) throw new WebhookError('KEY_REVOKED', 'keyId', `Key ${keyId} is revoked: its webhooks died with it`);
    return record;
  }

  /** The webhook, if it is this key's (else 404 naming webhookId); one whose delete took effect only for that delete's retry. */
  private async owned(userId: string, keyId: string, webhookId: string, opts: { deleting?: boolean } = {}): Promise<WebhookItem> {
    const item = await this.records.webhook(webhookId);
    if (!item || item.user_id !== userId || item.key_id !== keyId || item.key_closed || (item.deleted_at && !opts.deleting)) throw new WebhookError('UNKNOWN_WEBHOOK', 'webhookId', `Key ${keyId} has no webhook ${webhookId}`);
    return item;
  }

  async create(userId: string, keyId: string, input: CreateWebhookInput): Promise<CreatedWebhook> {
    const now = this.clock();
    const record = await this.usableKey(userId, keyId);
    const resolved = resolveScope(input.scope as WebhookScope);
    if (!(record.scopes ?? ['events:read', 'guests:read']).includes(resolved.needs)) throw new WebhookError('BAD_SCOPE', 'scope', `Key ${keyId} lacks ${resolved.needs}, which this scope's feed needs`);
    if (input.url.length > WEBHOOK_URL_MAX_LENGTH) throw new WebhookError('BAD_URL', 'url', `url is at most ${WEBHOOK_URL_MAX_LENGTH} characters`);
    await this.scopeExists(resolved.scope);
    const checked = await this.deps.checkUrl(input.url);
    if (!checked.ok) throw new WebhookError('BAD_URL', 'url', checked.message);
    const requestHash = createHash('sha256').update(JSON.stringify([input.url, resolved.feed, input.start_cursor ?? null, input.backfill ?? false])).digest('base64url');
    const webhookId = input.idempotencyKey ? `wh_${idempotentId(userId, keyId, input.idempotencyKey)}` : `wh_${timeBase62(now)}${randomBase62(12)}`;
    if (input.idempotencyKey) {
      const existing = await this.records.webhook(webhookId);
      if (existing?.key_closed) throw new WebhookError('KEY_REVOKED', 'keyId', `Key ${keyId} is revoked: its webhooks died with it`);
      if (existing) {
        if (existing.request_hash !== requestHash) throw new WebhookError('IDEMPOTENCY_MISMATCH', 'idempotencyKey', 'This idempotencyKey created a webhook with other parameters');
        await this.records.putScopeEntry(existing.feed, webhookId, existing.state === 'disabled' ? 'disabled' : 'active');
        return { created: false, info: webhookInfo(existing) };
      }
    }
    const cursor = await this.startCursor(resolved.scope, resolved.feed, input, now);
    const place = await this.records.reserve(userId, keyId, webhookId, now, this.deps.maxPerKey ?? MAX_WEBHOOKS_PER_KEY);
    if (place === 'closed') throw new WebhookError('KEY_REVOKED', 'keyId', `Key ${keyId} is revoked: its webhooks died with it`);
    if (place === 'full') throw new WebhookError('LIMIT_REACHED', 'keyId', `Key ${keyId} has ${this.deps.maxPerKey ?? MAX_WEBHOOKS_PER_KEY} webhooks, the most a key may have: delete one first`);
    const secret = newWebhookSecret();
    const item: WebhookItem = {
      type: 'WEBHOOK',
      webhook_id: webhookId,
      user_id: userId,
      key_id: keyId,
      scope: resolved.scope,
      feed: resolved.feed,
      url: input.url,
      secret: await this.deps.secrets.seal(secret, webhookId),
      state: 'active',
      cursor,
      created_at: now.toISOString(),
      ...(input.idempotencyKey ? { request_hash: requestHash } : {}),
    };
    await this.records.putScopeEntry(resolved.feed, webhookId, 'active');
    const put = await this.records.putWebhook(item);
    const after = put ? await this.deps.keys.record(userId, keyId) : undefined;
    if (!put || !after || after.revoked) {
      // A revoke or the user's deletion closed the key meanwhile: it wins, nothing of this create stays.
      await this.records.deleteScopeEntry(resolved.feed, webhookId);
      if (put) await this.records.closeWebhook(webhookId, now);
      throw new WebhookError('KEY_REVOKED', 'keyId', `Key ${keyId} was revoked: its webhooks died with it`);
    }
    this.audit?.({ event: 'created', userId, keyId, webhookId });
    if (input.backfill || input.start_cursor) await this.deps.nudge(webhookId);
    return { created: true, secret, info: webhookInfo(item) };
  }

  /** A host must be a live user, a guest feed's event public (as its feed route answers 404 otherwise). */
  private async scopeExists(scope: WebhookScope): Promise<void> {
    if (scope.type === 'host' && !(await findUserById(this.deps.client, this.deps.tableName, scope.userId))) throw new WebhookError('UNKNOWN_SCOPE', 'scope.userId', `No user ${scope.userId}`);
    if (scope.type === 'guests' && !(await this.deps.events.getPublicEvent(scope.eventId))) throw new WebhookError('UNKNOWN_SCOPE', 'scope.eventId', `No public event ${scope.eventId}`);
  }

  /** Where deliveries start: after the consumer's cursor, with the present contents (a start from no cursor), or at the scope's next change. */
  private async startCursor(scope: WebhookScope, feed: string, input: CreateWebhookInput, now: Date): Promise<string> {
    const keyring = this.deps.keyring;
    if (input.start_cursor !== undefined) {
      const sealed = parseCursor(input.start_cursor);
      const refuse = (why: string) => new WebhookError('BAD_CURSOR', 'start_cursor', why);
      if (!sealed || sealed.cursor.scope !== feed) throw refuse('start_cursor must be a next_cursor of this scope\'s feed');
      if (Math.floor(now.getTime() / 1000) - sealed.cursor.asOf > CURSOR_LIFETIME_SECONDS) throw refuse('start_cursor has expired: create the webhook with backfill instead');
      if (!(await openCursor(sealed, keyring))) throw refuse('start_cursor must be a next_cursor of this scope\'s feed');
      return input.start_cursor;
    }
    if (input.backfill) {
      const start = await readWebhookPage({ feeds: this.deps.feeds, events: this.deps.events, keyring, siteUrl: this.deps.siteUrl, now }, scope, undefined);
      if (start.kind !== 'page') throw new WebhookError('UNKNOWN_SCOPE', 'scope', 'The scope\'s feed cannot be read now');
      return start.next;
    }
    const position = await this.deps.feeds.feedHead(feed);
    return sealCursor({ scope: feed, mode: 'entries', position, after: '', asOf: Math.floor(now.getTime() / 1000) }, keyring);
  }

  async list(userId: string, keyId: string): Promise<WebhookInfo[]> {
    await this.usableKey(userId, keyId);
    const places = await this.records.keyHooks(userId, keyId);
    const items = await Promise.all(Object.keys(places?.hooks ?? {}).sort().map((id) => this.records.webhook(id)));
    return items.filter((i): i is WebhookItem => !!i && !i.key_closed && !i.deleted_at).map(webhookInfo);
  }

  async get(userId: string, keyId: string, webhookId: string): Promise<WebhookInfo> {
    await this.usableKey(userId, keyId);
    return webhookInfo(await this.owned(userId, keyId, webhookId));
  }

  /**
   * The delete takes effect first (markDeleted: no delivery starts or moves it from then on, no read shows it) and
   * is on the audit trail at once (its line claimed on the item, so a delete cut off after that write has it written
   * by its retry, and two deletes at once write one); then its scope entry (no more wake-ups), its item, its place.
   * A retry finishes a delete cut off anywhere.
   */
  async delete(userId: string, keyId: string, webhookId: string): Promise<void> {
    await this.usableKey(userId, keyId);
    const item = await this.owned(userId, keyId, webhookId, { deleting: true });
    const marked = await this.records.markDeleted(webhookId, this.clock());
    // Gone meanwhile (a concurrent delete finished it), or its key closed it first: the key's revoke wins.
    if (!marked) throw new WebhookError('UNKNOWN_WEBHOOK', 'webhookId', `Key ${keyId} has no webhook ${webhookId}`);
    if (this.audit && (await this.records.claimDeleted(webhookId, randomUUID()))) this.audit({ event: 'deleted', userId, keyId, webhookId });
    await this.records.deleteScopeEntry(item.feed, webhookId);
    await this.records.deleteWebhook(webhookId);
    await this.records.release(userId, keyId, webhookId);
  }

  async rotate(userId: string, keyId: string, webhookId: string): Promise<{ secret: string; info: WebhookInfo }> {
    await this.usableKey(userId, keyId);
    await this.owned(userId, keyId, webhookId);
    const now = this.clock();
    const secret = newWebhookSecret();
    const item = await this.records.rotate(webhookId, await this.deps.secrets.seal(secret, webhookId), now, new Date(now.getTime() + SECRET_OVERLAP_SECONDS * 1000));
    if (!item) throw new WebhookError('UNKNOWN_WEBHOOK', 'webhookId', `Key ${keyId} has no webhook ${webhookId}`);
    this.audit?.({ event: 'rotated', userId, keyId, webhookId });
    return { secret, info: webhookInfo(item) };
  }

  async resume(userId: string, keyId: string, webhookId: string): Promise<WebhookInfo> {
    await this.usableKey(userId, keyId);
    const before = await this.owned(userId, keyId, webhookId);
    const item = await this.records.resume(webhookId, this.clock());
    if (!item) throw new WebhookError('NOT_DISABLED', 'webhookId', `Webhook ${webhookId} is ${webhookInfo(before).state}, not disabled`);
    await this.records.putScopeEntry(item.feed, webhookId, 'active');
    this.audit?.({ event: 'resumed', userId, keyId, webhookId });
    await this.deps.nudge(webhookId);
    return webhookInfo(item);
  }
}

/** 20 base62 characters of the create's identity: the same user, key and idempotency key give the same webhook id. */
function idempotentId(userId: string, keyId: string, idempotencyKey: string): string {
  const digest = createHash('sha256').update(`${userId}\n${keyId}\n${idempotencyKey}`).digest();
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let out = '';
  for (let i = 0; i < 20; i++) out += alphabet[digest[i]! % 62];
  return out;
}
