/**
 * The one place that creates, lists and revokes API keys (PRODUCT P3). The web
 * product reaches it through the IAM-only key-management API
 * (lambdas/key-admin/); operators use `npm run keys`.
 *
 * - A key is `pk_` + 40 random base62 characters, shown once by `create`;
 *   only its SHA-256 hash is stored.
 * - At most 10 active keys per user, even under concurrent creates: a slot is
 *   reserved first with one conditional update of the user's counter item,
 *   which DynamoDB (and dynalite, which has no transactions) applies
 *   atomically; any later failure releases the slot.
 * - Revocation flips the authorizer's own item first (conditional, so it is
 *   irreversible and a second revoke is refused); the authorizer reads it
 *   strongly consistently, so the very next request is 401.
 * - In AWS each key also gets an API Gateway plan key (usage-plan.ts). The
 *   plan key exists before the key becomes usable and is deleted if the key's
 *   items cannot be written: no active key without its plan key, no orphan.
 * - `createOnce` adds an idempotency key: a request item, written first with a
 *   condition, records what was asked and the key id chosen; a retry with the
 *   same parameters gets that key id back (never the key again), a retry with
 *   other parameters is refused, and a failed create deletes it with the rest.
 * - A revoke interrupted half-way is finished by the next revoke of the same
 *   key: each step is conditional on the one before, so the slot is released
 *   once and a plan key that could not be deleted is tried again.
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { hashApiKey } from '../core/api-key.js';
import { systemClock, type Clock } from '../core/clock.js';
import { SCOPES, type Scope } from '../core/dataset.js';
import { USERNAME_PATTERN } from '../core/ids.js';
import type { ApiKeyItem, KeyPointerItem, KeyRecordItem, KeyRequestItem } from '../store/items.js';
import { KEY_RECORD_PREFIX, PK, SK, TTL_ATTRIBUTE, keys } from '../store/table.js';
import { isConditionFailure } from '../store/conditions.js';
import { findUserByName } from '../store/user-lookup.js';
import { randomBase62 } from './random.js';
import type { UsagePlanPort } from './usage-plan.js';

export const MAX_ACTIVE_KEYS = 10;

export const MAX_NAME_LENGTH = 100;
/** How long a create's idempotency key is remembered (the web product's retries fall well inside it). */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

export type KeyErrorCode =
  | 'UNKNOWN_USER'
  | 'LIMIT_REACHED'
  | 'UNKNOWN_KEY'
  | 'ALREADY_REVOKED'
  | 'BAD_SCOPE'
  | 'BAD_NAME'
  | 'IDEMPOTENCY_MISMATCH'
  | 'IN_PROGRESS';

/** The request field each refusal is about, for messages that name it. */
export const ERROR_FIELDS: Record<KeyErrorCode, string> = {
  UNKNOWN_USER: 'username',
  LIMIT_REACHED: 'username',
  UNKNOWN_KEY: 'keyId',
  ALREADY_REVOKED: 'keyId',
  BAD_SCOPE: 'scopes',
  BAD_NAME: 'name',
  IDEMPOTENCY_MISMATCH: 'idempotencyKey',
  IN_PROGRESS: 'idempotencyKey',
};

export class KeyManagementError extends Error {
  readonly field: string;
  constructor(
    readonly code: KeyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KeyManagementError';
    this.field = ERROR_FIELDS[code];
  }
}

/** What a create with an idempotency key answers: the key the first time, only its id on a retry. */
export type CreateOnceResult = { created: true; key: string; info: KeyInfo } | { created: false; info: KeyInfo };

/** What may be shown about a key: never the key, never its hash. */
export interface KeyInfo {
  keyId: string;
  name: string;
  scopes: Scope[];
  createdAt: string | null;
  revoked: boolean;
  revokedAt: string | null;
}

export interface KeyManagerOptions {
  /** The AWS side; absent for a local store. */
  usagePlan?: UsagePlanPort;
  clock?: Clock;
  maxActive?: number;
}

export class KeyManager {
  private readonly clock: Clock;
  private readonly maxActive: number;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly opts: KeyManagerOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.maxActive = opts.maxActive ?? MAX_ACTIVE_KEYS;
  }

  private async userId(username: string): Promise<string> {
    if (!USERNAME_PATTERN.test(username)) throw new KeyManagementError('UNKNOWN_USER', `Unknown user "${username}"`);
    const user = await findUserByName(this.client, this.tableName, username);
    if (!user) throw new KeyManagementError('UNKNOWN_USER', `Unknown user "${username}"`);
    return user.user_id;
  }

  private static checkName(raw: string): string {
    const name = raw.trim();
    if (name.length === 0 || name.length > MAX_NAME_LENGTH) throw new KeyManagementError('BAD_NAME', `A key needs a name of 1-${MAX_NAME_LENGTH} characters`);
    return name;
  }

  private static checkScopes(scopes: readonly string[] | undefined): Scope[] {
    const chosen = [...new Set(scopes ?? SCOPES)];
    const bad = chosen.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (bad.length || chosen.length === 0) {
      throw new KeyManagementError('BAD_SCOPE', `Scopes must be one or more of ${SCOPES.join(', ')}${bad.length ? `; not ${bad.join(', ')}` : ''}`);
    }
    return chosen as Scope[];
  }

  /** Reserves one of the user's active-key slots, atomically. */
  private async reserveSlot(userId: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.keyCounter(userId),
          UpdateExpression: 'SET #active = if_not_exists(#active, :zero) + :one, #type = :type, user_id = :user',
          ConditionExpression: 'attribute_not_exists(#active) OR #active < :max',
          ExpressionAttributeNames: { '#active': 'active', '#type': 'type' },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': this.maxActive, ':type': 'KEY_COUNTER', ':user': userId },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new KeyManagementError('LIMIT_REACHED', `This user already has ${this.maxActive} active keys; revoke one before creating another`);
      }
      throw error;
    }
  }

  private async releaseSlot(userId: string): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.keyCounter(userId),
        UpdateExpression: 'SET #active = #active - :one',
        ConditionExpression: '#active > :zero',
        ExpressionAttributeNames: { '#active': 'active' },
        ExpressionAttributeValues: { ':one': 1, ':zero': 0 },
      }),
    );
  }

  /** Creates a key. The returned `key` is the only time its value exists outside the caller. */
  async create(input: { username: string; name: string; scopes?: readonly string[] }): Promise<{ key: string; info: KeyInfo }> {
    const name = KeyManager.checkName(input.name);
    const scopes = KeyManager.checkScopes(input.scopes);
    const userId = await this.userId(input.username);
    return this.make(userId, name, scopes, newKeyId());
  }

  /**
   * Creates a key at most once per idempotency key. The first call answers the
   * key; a retry with the same user, name and scopes answers the same key id
   * without the key (it exists only in the first answer); a retry while the
   * first is still running, or with other parameters, is refused.
   */
  async createOnce(input: { idempotencyKey: string; username: string; name: string; scopes?: readonly string[] }): Promise<CreateOnceResult> {
    const name = KeyManager.checkName(input.name);
    const scopes = [...KeyManager.checkScopes(input.scopes)].sort();
    const userId = await this.userId(input.username);
    const now = this.clock();
    const request: KeyRequestItem = {
      type: 'KEY_REQUEST',
      user_id: userId,
      name,
      scopes,
      key_id: newKeyId(),
      state: 'pending',
      requested_at: now.toISOString(),
      expires_at: Math.floor(now.getTime() / 1000) + IDEMPOTENCY_WINDOW_SECONDS,
    };
    const requestKey = keys.keyRequest(input.idempotencyKey);
    try {
      // An expired request is gone for good even if DynamoDB's TTL has not deleted it yet.
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...requestKey, ...request },
          ConditionExpression: 'attribute_not_exists(#pk) OR #ttl < :now',
          ExpressionAttributeNames: { '#pk': PK, '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return { created: false, info: await this.replay(requestKey, request, input.username) };
    }
    try {
      const made = await this.make(userId, name, scopes, request.key_id, () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: requestKey,
            UpdateExpression: 'SET #state = :done',
            ConditionExpression: 'key_id = :keyId',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':done': 'done', ':keyId': request.key_id },
          }),
        ),
      );
      return { created: true, ...made };
    } catch (error) {
      // Nothing was made: forget the request, so a retry tries again (after a revoke, say).
      await this.client
        .send(new DeleteCommand({ TableName: this.tableName, Key: requestKey, ConditionExpression: 'key_id = :keyId', ExpressionAttributeValues: { ':keyId': request.key_id } }))
        .catch(() => undefined);
      throw error;
    }
  }

  /** A create request seen before: the same parameters get its key id back; others are refused, naming the field. */
  private async replay(requestKey: Record<string, string>, asked: KeyRequestItem, username: string): Promise<KeyInfo> {
    const stored = (await this.client.send(new GetCommand({ TableName: this.tableName, Key: requestKey, ConsistentRead: true }))).Item as KeyRequestItem | undefined;
    // Deleted since (its create failed): the caller retries and finds the way free.
    if (!stored) throw new KeyManagementError('IN_PROGRESS', 'A create with this idempotencyKey just failed; retry it');
    const differs =
      stored.user_id !== asked.user_id ? `username (it was made for another user than "${username}")` : stored.name !== asked.name ? 'name' : stored.scopes.join(',') !== asked.scopes.join(',') ? 'scopes' : null;
    if (differs) throw new KeyManagementError('IDEMPOTENCY_MISMATCH', `This idempotencyKey was used for a create with a different ${differs}; use a new idempotencyKey for a new key`);
    if (stored.state !== 'done') throw new KeyManagementError('IN_PROGRESS', 'A create with this idempotencyKey is still in progress; retry it in a moment');
    const record = (await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.keyRecord(stored.user_id, stored.key_id), ConsistentRead: true })))
      .Item as KeyRecordItem | undefined;
    if (!record) throw new KeyManagementError('UNKNOWN_KEY', `The key this idempotencyKey made (${stored.key_id}) no longer exists`);
    return infoOf(record);
  }

  /**
   * Makes a key for a resolved user: slot, plan key, then the items, the
   * authorizer's last; `beforeUsable` runs just before it, inside the same
   * compensation, so whatever it records is undone with the rest.
   */
  private async make(userId: string, name: string, scopes: Scope[], keyId: string, beforeUsable?: () => Promise<unknown>): Promise<{ key: string; info: KeyInfo }> {
    await this.reserveSlot(userId);
    const key = `pk_${randomBase62(40)}`;
    const keyHash = hashApiKey(key);
    const createdAt = this.clock().toISOString();
    let plan: { planKeyId: string; usageIdentifier: string } | undefined;
    const written: Record<string, string>[] = [];
    try {
      if (this.opts.usagePlan) plan = await this.opts.usagePlan.provision(keyId);
      const record: KeyRecordItem = { type: 'KEY_RECORD', key_id: keyId, key_hash: keyHash, user_id: userId, name, scopes, created_at: createdAt, revoked: false, ...(plan ? { plan_key_id: plan.planKeyId } : {}) };
      const pointer: KeyPointerItem = { type: 'KEY_POINTER', key_id: keyId, user_id: userId };
      const apiKey: ApiKeyItem = { type: 'API_KEY', key_id: keyId, user_id: userId, name, scopes, revoked: false, ...(plan ? { usage_identifier: plan.usageIdentifier } : {}) };
      const put = async (k: Record<string, string>, item: object) => {
        await this.client.send(new PutCommand({ TableName: this.tableName, Item: { ...k, ...item }, ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }));
        written.push(k);
      };
      await put(keys.keyRecord(userId, keyId), record);
      await put(keys.keyPointer(keyId), pointer);
      if (beforeUsable) await beforeUsable();
      // The authorizer's item last: the key is usable only once everything else exists.
      await put(keys.apiKey(keyHash), apiKey);
    } catch (error) {
      // Compensate in reverse: nothing half-made stays behind.
      for (const k of written.reverse()) await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: k })).catch(() => undefined);
      if (plan) await this.opts.usagePlan!.remove(plan.planKeyId).catch(() => undefined);
      await this.releaseSlot(userId).catch(() => undefined);
      throw error;
    }
    return { key, info: { keyId, name, scopes, createdAt, revoked: false, revokedAt: null } };
  }

  async list(username: string): Promise<KeyInfo[]> {
    const userId = await this.userId(username);
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': keys.keyCounter(userId)[PK], ':prefix': KEY_RECORD_PREFIX },
        ConsistentRead: true,
      }),
    );
    return ((out.Items ?? []) as KeyRecordItem[])
      .map(infoOf)
      .sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || a.keyId.localeCompare(b.keyId));
  }

  /**
   * Revokes a key, immediately and irreversibly. A key already revoked is
   * refused (ALREADY_REVOKED), after finishing whatever an interrupted revoke
   * of it left undone.
   */
  async revoke(keyId: string): Promise<KeyInfo & { planKeyRemoved: boolean }> {
    const pointer = (await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.keyPointer(keyId), ConsistentRead: true }))).Item as
      | KeyPointerItem
      | undefined;
    if (!pointer) throw new KeyManagementError('UNKNOWN_KEY', `Unknown key id "${keyId}"`);
    const record = (await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.keyRecord(pointer.user_id, keyId), ConsistentRead: true })))
      .Item as KeyRecordItem | undefined;
    if (!record) throw new KeyManagementError('UNKNOWN_KEY', `Unknown key id "${keyId}"`);
    const now = this.clock().toISOString();
    // This write is the revocation: the authorizer reads this item.
    const revokedNow = await this.flip(keys.apiKey(record.key_hash), now, 'attribute_exists(#pk) AND revoked = :false');
    // The record's flip is the one step that releases the slot, so the slot is released exactly once.
    const recordFlipped = await this.flip(keys.keyRecord(record.user_id, keyId), now, 'attribute_exists(#pk) AND (attribute_not_exists(revoked) OR revoked = :false)');
    if (recordFlipped) {
      await this.releaseSlot(record.user_id).catch((error: unknown) => {
        if (!isConditionFailure(error)) throw error;
      });
    }
    let planKeyRemoved = !record.plan_key_id;
    if (record.plan_key_id && this.opts.usagePlan) {
      // The key is already unusable; a failure here leaves only an unused plan key, reported and tried again by the next revoke.
      planKeyRemoved = await this.opts.usagePlan.remove(record.plan_key_id).then(
        () => true,
        () => false,
      );
      if (planKeyRemoved) {
        await this.client.send(
          new UpdateCommand({ TableName: this.tableName, Key: keys.keyRecord(record.user_id, keyId), UpdateExpression: 'REMOVE plan_key_id', ConditionExpression: 'attribute_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }),
        );
      }
    }
    if (!revokedNow && !recordFlipped) throw new KeyManagementError('ALREADY_REVOKED', `Key "${keyId}" is already revoked${record.revoked_at ? ` (since ${record.revoked_at})` : ''}`);
    const revokedAt = revokedNow || recordFlipped ? now : (record.revoked_at ?? now);
    return { ...infoOf(record), revoked: true, revokedAt, planKeyRemoved };
  }

  /** Marks an item revoked if the condition holds; false if it did not (already revoked). */
  private async flip(key: Record<string, string>, at: string, condition: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET revoked = :true, revoked_at = :at',
          ConditionExpression: condition,
          ExpressionAttributeNames: { '#pk': PK },
          ExpressionAttributeValues: { ':true': true, ':false': false, ':at': at },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

function newKeyId(): string {
  return `key_${randomBase62(20)}`;
}

function infoOf(r: KeyRecordItem): KeyInfo {
  return { keyId: r.key_id, name: r.name, scopes: r.scopes, createdAt: r.created_at, revoked: r.revoked, revokedAt: r.revoked_at ?? null };
}
