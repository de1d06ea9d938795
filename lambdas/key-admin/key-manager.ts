/**
 * The one place that creates, lists and revokes API keys (PRODUCT P3). The web
 * product reaches it through the IAM-only key-management API (handler.ts);
 * operators use `npm run keys` (local/cli/keys.ts). The items and their
 * conditional writes are the store's (lambdas/store/keys/key-store.ts); the rules
 * are lambdas/core/key-rules.ts.
 *
 * - A key is `pk_` + 40 random base62 characters, shown once by `create`;
 *   only its SHA-256 hash is stored. Its id (`key_` + 20 base62 characters)
 *   begins with its creation time, so a user's keys list in creation order.
 * - At most 10 keys active or being made per user, and at most 10 creates
 *   per user per UTC day, even under concurrent creates; a slot whose create
 *   died is reclaimed before a create is refused for the limit.
 * - A create makes the key usable last (slot, record, plan key, then the
 *   authorizer's item). A revoke that answered writes the authorizer's item
 *   as revoked whether or not the create got that far, so a create still in
 *   flight fails instead of bringing the key back.
 * - A key belongs to a user id, never to a username (usernames change and
 *   are reused: two users can briefly share one while renames settle). Every
 *   operation names the user by id and reads and writes by it; a create for
 *   an id that is not a live user is refused (UNKNOWN_USER). A tool that
 *   takes a username resolves it first (`resolveUsername`).
 * - `createOnce` adds an idempotency key, the user's own (the same one sent
 *   for two users is two requests): a request item, written first with
 *   a condition, records what was asked (the name only as a hash) and the key
 *   id chosen; a retry with the same parameters gets that key id back (never
 *   the key again), a retry with other parameters is refused, a create that
 *   made no key forgets it. A create that died is taken over by a retry once
 *   it is STALE_CREATE_MS old: its key is retired unless it became usable.
 * - Every failure at any step leaves a state the next call (a retry, a later
 *   revoke, a create at the limit) finishes; none leaves a key usable that a
 *   caller was told is revoked.
 */
import { createHash } from 'node:crypto';
import { hashApiKey } from '../core/api-key.js';
import { systemClock, type Clock } from '../core/clock.js';
import { SCOPES, type Scope } from '../core/dataset.js';
import { USERNAME_PATTERN, USER_ID_PATTERN } from '../core/ids.js';
import { MAX_ACTIVE_KEYS, MAX_CREATES_PER_DAY, STALE_CREATE_MS, checkKeyName, type SlotLimits, type SlotRefusal } from '../core/key-rules.js';
import type { KeyRecordItem, KeyRequestItem, LiveApiKeyItem, UserItem } from '../store/table/items.js';
import { KeyStore, SlotsContended, type PlanKeys, type RevokeAudit } from '../store/keys/key-store.js';
import { KEY_RECORD_PREFIX } from '../store/table/table.js';
import { findUserById, findUsersByName } from '../store/table/user-lookup.js';
import type { WebhookAudit } from '../store/webhooks/key-webhooks.js';
import { randomBase62, timeBase62 } from './random.js';

export { MAX_ACTIVE_KEYS, MAX_CREATES_PER_DAY, MAX_NAME_LENGTH } from '../core/key-rules.js';
export type { PlanKeys, RevokeAudit, RevokedKey, RetiredBy } from '../store/keys/key-store.js';

/** How long a create's idempotency key is remembered (the web product's retries fall well inside it). */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/** One page of `list`. */
export const MAX_LIST_PAGE = 100;

export type KeyErrorCode =
  | 'UNKNOWN_USER'
  | 'LIMIT_REACHED'
  | 'CREATE_LIMIT'
  | 'UNKNOWN_KEY'
  | 'ALREADY_REVOKED'
  | 'REVOKED_WHILE_CREATING'
  | 'BAD_SCOPE'
  | 'BAD_NAME'
  | 'BAD_CURSOR'
  | 'IDEMPOTENCY_MISMATCH'
  | 'IN_PROGRESS'
  | 'BUSY'
  | 'AMBIGUOUS_USER';

/** The request field each refusal is about, for messages that name it. */
export const ERROR_FIELDS: Record<KeyErrorCode, string> = {
  UNKNOWN_USER: 'userId',
  LIMIT_REACHED: 'userId',
  CREATE_LIMIT: 'userId',
  UNKNOWN_KEY: 'keyId',
  ALREADY_REVOKED: 'keyId',
  REVOKED_WHILE_CREATING: 'keyId',
  BAD_SCOPE: 'scopes',
  BAD_NAME: 'name',
  BAD_CURSOR: 'cursor',
  IDEMPOTENCY_MISMATCH: 'idempotencyKey',
  IN_PROGRESS: 'idempotencyKey',
  BUSY: 'userId',
  AMBIGUOUS_USER: 'username',
};

export class KeyManagementError extends Error {
  readonly field: string;
  constructor(
    readonly code: KeyErrorCode,
    message: string,
    /** The key the refusal is about, when there is one (for the audit line). */
    readonly keyId?: string,
  ) {
    super(message);
    this.name = 'KeyManagementError';
    this.field = ERROR_FIELDS[code];
  }
}

/** What a create with an idempotency key answers: the key the first time, only its id on a retry. */
export type CreateOnceResult = ({ created: true; key: string; info: KeyInfo } | { created: false; info: KeyInfo }) & {
  /** The user the key belongs to (for the audit line). */
  userId: string;
};

/** What may be shown about a key: never the key, never its hash. */
export interface KeyInfo {
  keyId: string;
  name: string;
  scopes: Scope[];
  createdAt: string | null;
  revoked: boolean;
  revokedAt: string | null;
}

export interface KeyPage {
  keys: KeyInfo[];
  /** Where the next page starts; null on the last. */
  cursor: string | null;
}

export interface KeyManagerOptions {
  /** The AWS side; absent for a local store. */
  planKeys?: PlanKeys;
  /** The audit line of every revoke that took effect (key-store.ts); the key-management function sets its own (handler.ts). */
  audit?: RevokeAudit;
  /** The audit line of each webhook a revoke closes (lambdas/store/webhooks/key-webhooks.ts); the function sets its own likewise. */
  webhookAudit?: WebhookAudit;
  clock?: Clock;
  maxActive?: number;
  maxCreatesPerDay?: number;
  /** Random base62 characters (the CSPRNG's unless a test makes them deterministic). */
  random?: (length: number) => string;
}

/** Thrown inside a create when someone retired its key first (a revoke, the user's deletion, a takeover). */
class RetiredFirst extends Error {}

export class KeyManager {
  readonly store: KeyStore;
  private readonly clock: Clock;
  private readonly random: (length: number) => string;
  private readonly limits: SlotLimits;

  constructor(client: KeyStore['client'], tableName: string, opts: KeyManagerOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? randomBase62;
    this.limits = { maxActive: opts.maxActive ?? MAX_ACTIVE_KEYS, maxCreatesPerDay: opts.maxCreatesPerDay ?? MAX_CREATES_PER_DAY };
    this.store = new KeyStore(client, tableName, { clock: this.clock, planKeys: opts.planKeys, limits: this.limits, audit: opts.audit, webhookAudit: opts.webhookAudit });
  }

  /** The live user with this id; refused (UNKNOWN_USER) for any other id, a deleted user's included. */
  private async user(userId: string): Promise<UserItem> {
    const user = USER_ID_PATTERN.test(userId) ? await findUserById(this.store.client, this.store.tableName, userId) : null;
    if (!user) throw new KeyManagementError('UNKNOWN_USER', `Unknown user id "${userId}": no live user has it`);
    return user;
  }

  /**
   * The one live user holding a username, for a tool that accepts one (the
   * operator CLI): refused as unknown when none does, and as ambiguous when
   * two do (while renames settle), rather than picking one.
   */
  async resolveUsername(username: string): Promise<string> {
    const users = USERNAME_PATTERN.test(username) ? await findUsersByName(this.store.client, this.store.tableName, username) : [];
    if (users.length === 0) throw new KeyManagementError('UNKNOWN_USER', `Unknown user "${username}": no live user has this username`);
    if (users.length > 1) {
      throw new KeyManagementError('AMBIGUOUS_USER', `Username "${username}" is ambiguous: ${users.map((u) => u.user_id).join(' and ')} both hold it (a rename is in flight); name the user by id (--user-id)`);
    }
    return users[0]!.user_id;
  }

  private static checkName(raw: string): string {
    const checked = checkKeyName(raw);
    if (!checked.ok) throw new KeyManagementError('BAD_NAME', checked.message);
    return checked.name;
  }

  private static checkScopes(scopes: readonly string[] | undefined): Scope[] {
    const chosen = [...new Set(scopes ?? SCOPES)];
    const bad = chosen.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (bad.length || chosen.length === 0) {
      throw new KeyManagementError('BAD_SCOPE', `Scopes must be one or more of ${SCOPES.join(', ')}${bad.length ? `; not ${bad.join(', ')}` : ''}`);
    }
    return chosen as Scope[];
  }

  private newKeyId(at: Date): string {
    return `key_${timeBase62(at)}${this.random(12)}`;
  }

  /** Creates a key. The returned `key` is the only time its value exists outside the caller. */
  async create(input: { userId: string; name: string; scopes?: readonly string[] }): Promise<{ key: string; info: KeyInfo }> {
    const name = KeyManager.checkName(input.name);
    const scopes = KeyManager.checkScopes(input.scopes);
    const user = await this.user(input.userId);
    return this.make(user, name, scopes, this.newKeyId(this.clock()));
  }

  /**
   * Creates a key at most once per idempotency key. The first call answers the
   * key; a retry with the same user, name and scopes answers the same key id
   * without the key (it exists only in the first answer); a retry while the
   * first is still running, or with other parameters, is refused. A retry
   * after the first died takes it over (file comment).
   */
  async createOnce(input: { idempotencyKey: string; userId: string; name: string; scopes?: readonly string[] }): Promise<CreateOnceResult> {
    const name = KeyManager.checkName(input.name);
    const scopes = [...KeyManager.checkScopes(input.scopes)].sort();
    const user = await this.user(input.userId);
    const nameHash = createHash('sha256').update(name, 'utf8').digest('hex');
    // At most: a request found deleted under us, a takeover, then our own.
    for (let round = 0; round < 3; round++) {
      const now = this.clock();
      const request: KeyRequestItem = {
        type: 'KEY_REQUEST',
        user_id: user.user_id,
        name_hash: nameHash,
        scopes,
        key_id: this.newKeyId(now),
        state: 'pending',
        requested_at: now.toISOString(),
        expires_at: Math.floor(now.getTime() / 1000) + IDEMPOTENCY_WINDOW_SECONDS,
      };
      if (!(await this.store.putRequest(input.idempotencyKey, request, now))) {
        const stored = await this.store.request(user.user_id, input.idempotencyKey);
        // Deleted since (its create made no key): try again.
        if (!stored) continue;
        // Our own write, retried after a lost answer: it is ours to carry on.
        if (stored.key_id !== request.key_id) {
          const info = await this.seenBefore(input.idempotencyKey, stored, request, round === 0);
          if (info) return { created: false, info, userId: user.user_id };
          continue;
        }
      }
      const made = await this.make(user, name, scopes, request.key_id, input.idempotencyKey);
      return { created: true, ...made, userId: user.user_id };
    }
    throw new KeyManagementError('IN_PROGRESS', 'A create with this idempotencyKey is still in progress; retry it in a moment');
  }

  /**
   * A create request seen before: the same parameters get its key id back;
   * others are refused, naming the field. One still pending is refused as in
   * progress, or taken over when its create has presumably died (null: the
   * caller writes its own request then).
   */
  private async seenBefore(idempotencyKey: string, stored: KeyRequestItem, asked: KeyRequestItem, mayTakeOver: boolean): Promise<KeyInfo | null> {
    // `name`: requests written before names were hashed. The request is the user's own (its item's key holds the user
    // id), so what differs is never the user: nothing here tells of another user's request.
    const storedNameHash = stored.name_hash ?? createHash('sha256').update((stored as { name?: string }).name ?? '', 'utf8').digest('hex');
    const differs = storedNameHash !== asked.name_hash ? 'name' : stored.scopes.join(',') !== asked.scopes.join(',') ? 'scopes' : null;
    if (differs) throw new KeyManagementError('IDEMPOTENCY_MISMATCH', `This idempotencyKey was used for a create with a different ${differs}; use a new idempotencyKey for a new key`);
    if (stored.state === 'pending') {
      const age = this.clock().getTime() - Date.parse(stored.requested_at);
      if (age < STALE_CREATE_MS || !mayTakeOver) throw new KeyManagementError('IN_PROGRESS', 'A create with this idempotencyKey is still in progress; retry it in a moment');
      // Its create died: keep its key if it became usable; if someone revoked it, say so; else retire it and make the key afresh.
      const retired = await this.store.retire(stored.user_id, stored.key_id, { unlessUsable: true, by: 'create taken over' });
      if (retired.outcome === 'retired' && retired.flipped) {
        await this.store.erase(stored.user_id, stored.key_id, 'create taken over');
        await this.store.forgetRequest(stored.user_id, idempotencyKey, stored.key_id);
        return null;
      }
      if (retired.outcome === 'usable') await this.store.confirm(stored.user_id, stored.key_id);
      await this.store.markRequestDone(stored.user_id, idempotencyKey, stored.key_id);
    }
    const record = await this.store.record(stored.user_id, stored.key_id);
    if (!record || record.erased) throw new KeyManagementError('UNKNOWN_KEY', `The key this idempotencyKey made (${stored.key_id}) no longer exists`, stored.key_id);
    return infoOf(record);
  }

  /**
   * Makes a key for a resolved user: slot, record, plan key (created,
   * recorded, attached), then the authorizer's item. Any failure retires
   * what was made, unless the key turned out usable after all.
   */
  private async make(user: UserItem, name: string, scopes: Scope[], keyId: string, idempotencyKey?: string): Promise<{ key: string; info: KeyInfo }> {
    const userId = user.user_id;
    const at = this.clock();
    const refused = await this.takeSlot(user, keyId, at);
    if (refused) {
      if (idempotencyKey) await this.store.forgetRequest(userId, idempotencyKey, keyId);
      throw refused;
    }
    const key = `pk_${this.random(40)}`;
    const keyHash = hashApiKey(key);
    const createdAt = at.toISOString();
    const usageIdentifier = this.store.planKeys ? `ui_${this.random(32)}` : undefined;
    /** The plan key this create made while its id is not recorded yet (a retire deletes a recorded one). */
    let unrecordedPlanKey: string | undefined;
    try {
      const record: KeyRecordItem = {
        type: 'KEY_RECORD',
        key_id: keyId,
        key_hash: keyHash,
        user_id: userId,
        name,
        scopes,
        created_at: createdAt,
        revoked: false,
        ...(usageIdentifier ? { usage_identifier: usageIdentifier } : {}),
      };
      if (!(await this.store.putRecord(userId, record))) throw new RetiredFirst();
      const plan = this.store.planKeys;
      if (plan && usageIdentifier) {
        const planKeyId = await plan.create(keyId, usageIdentifier, userId);
        unrecordedPlanKey = planKeyId;
        const recorded = await this.store.recordPlanKey(userId, keyId, planKeyId);
        unrecordedPlanKey = undefined;
        if (recorded.revoked) throw new RetiredFirst();
        await plan.attach(planKeyId);
      }
      const item: LiveApiKeyItem = { type: 'API_KEY', key_id: keyId, user_id: userId, name, scopes, revoked: false, ...(usageIdentifier ? { usage_identifier: usageIdentifier } : {}) };
      // The authorizer's item last: the key is usable only once everything else exists.
      if (!(await this.store.putApiKey(keyHash, item))) throw new RetiredFirst();
    } catch (error) {
      const retired = await this.store.retire(userId, keyId, { unlessUsable: true, by: 'create failed' }).catch(() => undefined);
      if (!retired) {
        // Someone revoked it first, and finishes their own clean-up (their retry, the deletion's redelivery). The request
        // says so if it can (else a retry takes it over, finds the key revoked, and answers so).
        if (error instanceof RetiredFirst) {
          if (idempotencyKey) await this.store.markRequestDone(userId, idempotencyKey, keyId).catch(() => undefined);
          throw this.revokedWhileCreating(keyId);
        }
        // The clean-up failed too: the request stays pending, and a retry takes it over once it is stale.
        throw error;
      }
      if (retired.outcome === 'retired') {
        // A plan key whose id could not be recorded is this create's to delete (the retire deleted any recorded one).
        if (unrecordedPlanKey) await this.store.planKeys!.remove(unrecordedPlanKey).catch(() => undefined);
        if (retired.flipped && !(error instanceof RetiredFirst)) {
          // Never usable and never shown to anyone: nothing of it is kept but its id (it is not listed).
          await this.store.erase(userId, keyId, 'create failed').catch(() => undefined);
          if (idempotencyKey) await this.store.forgetRequest(userId, idempotencyKey, keyId);
          throw error;
        }
        // Someone revoked it first (a revoke of the listed key, the user's deletion, a takeover).
        if (idempotencyKey) await this.store.markRequestDone(userId, idempotencyKey, keyId);
        throw this.revokedWhileCreating(keyId);
      }
      // Usable after all (the authorizer's item landed although its answer was lost): the create succeeded.
    }
    await this.store.confirm(userId, keyId);
    if (idempotencyKey) await this.store.markRequestDone(userId, idempotencyKey, keyId);
    return { key, info: { keyId, name, scopes, createdAt, revoked: false, revokedAt: null } };
  }

  private revokedWhileCreating(keyId: string): KeyManagementError {
    return new KeyManagementError('REVOKED_WHILE_CREATING', `Key "${keyId}" was revoked while it was being created (by a revoke, or its user's deletion); create another`, keyId);
  }

  /** Takes a slot; refused at the limit only once the stale holders are checked. */
  private async takeSlot(user: UserItem, keyId: string, at: Date): Promise<KeyManagementError | null> {
    let reservation;
    try {
      reservation = await this.store.reserve(user.user_id, keyId, at, user.version);
      if ('refused' in reservation && reservation.refused === 'LIMIT_REACHED') {
        await this.store.reconcile(user.user_id);
        reservation = await this.store.reserve(user.user_id, keyId, at, user.version);
      }
    } catch (error) {
      if (error instanceof SlotsContended) return new KeyManagementError('BUSY', 'Too many key changes for this user at once; retry in a moment');
      throw error;
    }
    return 'refused' in reservation ? this.refusal(reservation.refused) : null;
  }

  private refusal(reason: SlotRefusal): KeyManagementError {
    switch (reason) {
      case 'LIMIT_REACHED':
        return new KeyManagementError('LIMIT_REACHED', `This user already has ${this.limits.maxActive} active keys; revoke one before creating another`);
      case 'CREATE_LIMIT':
        return new KeyManagementError('CREATE_LIMIT', `This user has created ${this.limits.maxCreatesPerDay} keys today (UTC); creating another is possible from 00:00 UTC`);
      case 'USER_GONE':
        return new KeyManagementError('UNKNOWN_USER', 'Unknown user: deleted');
    }
  }

  /** One page of the user's keys, revoked ones included, oldest first. */
  async list(userId: string, page: { cursor?: string | null; limit?: number } = {}): Promise<KeyPage> {
    const limit = Math.min(Math.max(1, Math.floor(page.limit ?? MAX_LIST_PAGE)), MAX_LIST_PAGE);
    const after = page.cursor ? decodeCursor(page.cursor) : undefined;
    const user = await this.user(userId);
    const { records, last } = await this.store.recordPage(user.user_id, { limit, after });
    return { keys: records.map(infoOf), cursor: last ? encodeCursor(last) : null };
  }

  /** Every key of the user, page after page. */
  async listAll(userId: string): Promise<KeyInfo[]> {
    const out: KeyInfo[] = [];
    let cursor: string | null = null;
    do {
      const page: KeyPage = await this.list(userId, { cursor });
      out.push(...page.keys);
      cursor = page.cursor;
    } while (cursor);
    return out;
  }

  /**
   * Revokes a user's key, immediately and irreversibly: from the moment this
   * answers, the key authenticates nothing, whatever else was in flight. A
   * key already revoked is refused (ALREADY_REVOKED), after finishing
   * whatever an interrupted revoke of it left undone.
   */
  async revoke(userId: string, keyId: string): Promise<KeyInfo> {
    const user = await this.user(userId);
    const record = await this.store.record(user.user_id, keyId);
    if (!record || record.erased) throw new KeyManagementError('UNKNOWN_KEY', `User "${userId}" has no key "${keyId}"`, keyId);
    let retired;
    try {
      retired = await this.store.retire(user.user_id, keyId, { unlessUsable: false, by: 'revoke' });
    } catch (error) {
      if (error instanceof SlotsContended) throw new KeyManagementError('BUSY', 'Too many key changes for this user at once; retry in a moment', keyId);
      throw error;
    }
    const info = infoOf(retired.record);
    if (!retired.flipped) throw new KeyManagementError('ALREADY_REVOKED', `Key "${keyId}" is already revoked${info.revokedAt ? ` (since ${info.revokedAt})` : ''}`, keyId);
    return info;
  }
}

function encodeCursor(sortKey: string): string {
  return Buffer.from(sortKey.slice(KEY_RECORD_PREFIX.length), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const keyId = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!/^key_[0-9A-Za-z]{1,64}$/.test(keyId)) throw new KeyManagementError('BAD_CURSOR', 'cursor must be a cursor from an earlier answer');
  return `${KEY_RECORD_PREFIX}${keyId}`;
}

function infoOf(r: KeyRecordItem): KeyInfo {
  return { keyId: r.key_id, name: r.name ?? '', scopes: r.scopes ?? [], createdAt: r.created_at ?? null, revoked: r.revoked, revokedAt: r.revoked_at ?? null };
}
