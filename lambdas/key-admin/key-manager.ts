/**
 * The one place that creates, lists and revokes API keys (PRODUCT P3). The web
 * product reaches it through the IAM-only key-management API (handler.ts);
 * operators use `npm run keys` (local/cli/keys.ts). The items and their
 * conditional writes are the store's (lambdas/store/keys/key-store.ts); the rules
 * are lambdas/core/key-rules.ts. Beside this file: the create protocol
 * (key-create.ts), the refusals (key-errors.ts), what is shown of a key and
 * the list's cursor (key-info.ts).
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
 * - Every failure at any step leaves a state the next call (a retry, a later
 *   revoke, a create at the limit) finishes; none leaves a key usable that a
 *   caller was told is revoked.
 */
import { systemClock, type Clock } from '../core/clock.js';
import { SCOPES, type Scope } from '../core/dataset.js';
import { USERNAME_PATTERN, USER_ID_PATTERN } from '../core/ids.js';
import { MAX_ACTIVE_KEYS, MAX_CREATES_PER_DAY, checkKeyName, type SlotLimits } from '../core/key-rules.js';
import type { UserItem } from '../store/table/items.js';
import { KeyStore, SlotsContended, type PlanKeys, type RevokeAudit } from '../store/keys/key-store.js';
import { findUserById, findUserIdsByName } from '../store/table/user-lookup.js';
import { KeyCreator } from './key-create.js';
import { KeyManagementError } from './key-errors.js';
import { decodeCursor, encodeCursor, infoOf, type CreateOnceResult, type KeyInfo, type KeyPage } from './key-info.js';
import { randomBase62 } from './random.js';
import type { WebhookAudit } from '../store/webhooks/key-webhooks.js';

export { MAX_ACTIVE_KEYS, MAX_CREATES_PER_DAY, MAX_NAME_LENGTH } from '../core/key-rules.js';
export type { PlanKeys, RevokeAudit, RevokedKey, RetiredBy } from '../store/keys/key-store.js';
export { ERROR_FIELDS, KeyManagementError, type KeyErrorCode } from './key-errors.js';
export type { CreateOnceResult, KeyInfo, KeyPage } from './key-info.js';
export { IDEMPOTENCY_WINDOW_SECONDS } from './key-create.js';

/** One page of `list`. */
export const MAX_LIST_PAGE = 100;

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

export class KeyManager {
  readonly store: KeyStore;
  private readonly clock: Clock;
  private readonly creator: KeyCreator;

  constructor(client: KeyStore['client'], tableName: string, opts: KeyManagerOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    const limits: SlotLimits = { maxActive: opts.maxActive ?? MAX_ACTIVE_KEYS, maxCreatesPerDay: opts.maxCreatesPerDay ?? MAX_CREATES_PER_DAY };
    this.store = new KeyStore(client, tableName, { clock: this.clock, planKeys: opts.planKeys, limits, audit: opts.audit, webhookAudit: opts.webhookAudit });
    this.creator = new KeyCreator(this.store, this.clock, opts.random ?? randomBase62, limits);
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
    const users = USERNAME_PATTERN.test(username) ? await findUserIdsByName(this.store.client, this.store.tableName, username) : [];
    if (users.length === 0) throw new KeyManagementError('UNKNOWN_USER', `Unknown user "${username}": no live user has this username`);
    if (users.length > 1) {
      throw new KeyManagementError('AMBIGUOUS_USER', `Username "${username}" is ambiguous: ${users.join(' and ')} both hold it (a rename is in flight); name the user by id (--user-id)`);
    }
    return users[0]!;
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

  /** Creates a key. The returned `key` is the only time its value exists outside the caller. */
  async create(input: { userId: string; name: string; scopes?: readonly string[] }): Promise<{ key: string; info: KeyInfo }> {
    const name = KeyManager.checkName(input.name);
    const scopes = KeyManager.checkScopes(input.scopes);
    const user = await this.user(input.userId);
    return this.creator.make(user, name, scopes, this.creator.newKeyId(this.clock()));
  }

  /**
   * Creates a key at most once per idempotency key. The first call answers the
   * key; a retry with the same user, name and scopes answers the same key id
   * without the key (it exists only in the first answer); a retry while the
   * first is still running, or with other parameters, is refused. A retry
   * after the first died takes it over (key-create.ts).
   */
  async createOnce(input: { idempotencyKey: string; userId: string; name: string; scopes?: readonly string[] }): Promise<CreateOnceResult> {
    const name = KeyManager.checkName(input.name);
    const scopes = [...KeyManager.checkScopes(input.scopes)].sort();
    const user = await this.user(input.userId);
    return this.creator.createOnce(user, name, scopes, input.idempotencyKey);
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
   *
   * A deleted user's key can be revoked too, while its record is there: the
   * deletion's close may still be under way (throttled, or a bounded close of
   * thousands of keys), and revoking by hand must not be refused meanwhile.
   * (It answers 401 already: the authorizer refuses a key whose user is not
   * live.) Once the close has erased it, it is ALREADY_REVOKED; a deleted
   * user with no such record is UNKNOWN_USER, as an unknown one is.
   */
  async revoke(userId: string, keyId: string): Promise<KeyInfo> {
    const live = USER_ID_PATTERN.test(userId) ? await findUserById(this.store.client, this.store.tableName, userId) : null;
    const record = USER_ID_PATTERN.test(userId) ? await this.store.record(userId, keyId) : undefined;
    if (!live && !record) await this.user(userId);
    if (!record || (record.erased && live)) throw new KeyManagementError('UNKNOWN_KEY', `User "${userId}" has no key "${keyId}"`, keyId);
    if (record.erased) throw new KeyManagementError('ALREADY_REVOKED', `Key "${keyId}" is already revoked (its user was deleted)`, keyId);
    let retired;
    try {
      retired = await this.store.retire(userId, keyId, { unlessUsable: false, by: 'revoke' });
    } catch (error) {
      if (error instanceof SlotsContended) throw new KeyManagementError('BUSY', 'Too many key changes for this user at once; retry in a moment', keyId);
      throw error;
    }
    const info = infoOf(retired.record);
    if (!retired.flipped) throw new KeyManagementError('ALREADY_REVOKED', `Key "${keyId}" is already revoked${info.revokedAt ? ` (since ${info.revokedAt})` : ''}`, keyId);
    return info;
  }
}
