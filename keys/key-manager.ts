/**
 * The one place that creates, lists and revokes API keys (PRODUCT P3). The web
 * product's settings area uses it as a library; operators use `npm run keys`.
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
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { hashApiKey } from '../lambdas/core/api-key.js';
import { systemClock, type Clock } from '../lambdas/core/clock.js';
import { SCOPES, type Scope } from '../lambdas/core/dataset.js';
import { USERNAME_PATTERN } from '../lambdas/core/ids.js';
import type { ApiKeyItem, KeyPointerItem, KeyRecordItem } from '../lambdas/store/items.js';
import { KEY_RECORD_PREFIX, PK, SK, keys } from '../lambdas/store/table.js';
import { isConditionFailure } from '../lambdas/store/conditions.js';
import { findUserByName } from '../lambdas/store/user-lookup.js';
import { randomBase62 } from './random.js';
import type { UsagePlanPort } from './usage-plan.js';

export const MAX_ACTIVE_KEYS = 10;

export type KeyErrorCode = 'UNKNOWN_USER' | 'LIMIT_REACHED' | 'UNKNOWN_KEY' | 'ALREADY_REVOKED' | 'BAD_SCOPE' | 'BAD_NAME';

export class KeyManagementError extends Error {
  constructor(
    readonly code: KeyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KeyManagementError';
  }
}

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
    const name = input.name.trim();
    if (name.length === 0 || name.length > 100) throw new KeyManagementError('BAD_NAME', 'A key needs a name of 1-100 characters');
    const scopes = KeyManager.checkScopes(input.scopes);
    const userId = await this.userId(input.username);
    await this.reserveSlot(userId);

    const key = `pk_${randomBase62(40)}`;
    const keyHash = hashApiKey(key);
    const keyId = `key_${randomBase62(20)}`;
    const createdAt = this.clock().toISOString();
    let plan: { planKeyId: string; usageIdentifier: string } | undefined;
    const written: Record<string, string>[] = [];
    try {
      if (this.opts.usagePlan) plan = await this.opts.usagePlan.provision(keyId);
      const record: KeyRecordItem = { type: 'KEY_RECORD', key_id: keyId, key_hash: keyHash, user_id: userId, name, scopes, created_at: createdAt, revoked: false, ...(plan ? { plan_key_id: plan.planKeyId } : {}) };
      const pointer: KeyPointerItem = { type: 'KEY_POINTER', key_id: keyId, user_id: userId };
      const apiKey: ApiKeyItem = { type: 'API_KEY', key_id: keyId, user_id: userId, name, scopes, revoked: false, ...(plan ? { usage_identifier: plan.usageIdentifier } : {}) };
      // The authorizer's item last: the key is usable only once everything else exists.
      for (const [k, item] of [
        [keys.keyRecord(userId, keyId), record],
        [keys.keyPointer(keyId), pointer],
        [keys.apiKey(keyHash), apiKey],
      ] as const) {
        await this.client.send(new PutCommand({ TableName: this.tableName, Item: { ...k, ...item }, ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }));
        written.push(k);
      }
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
      .map((r) => ({ keyId: r.key_id, name: r.name, scopes: r.scopes, createdAt: r.created_at, revoked: r.revoked, revokedAt: r.revoked_at ?? null }))
      .sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || a.keyId.localeCompare(b.keyId));
  }

  /** Revokes a key, immediately and irreversibly. */
  async revoke(keyId: string): Promise<KeyInfo & { planKeyRemoved: boolean }> {
    const pointer = (await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.keyPointer(keyId), ConsistentRead: true }))).Item as
      | KeyPointerItem
      | undefined;
    if (!pointer) throw new KeyManagementError('UNKNOWN_KEY', `Unknown key id "${keyId}"`);
    const record = (await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.keyRecord(pointer.user_id, keyId), ConsistentRead: true })))
      .Item as KeyRecordItem | undefined;
    if (!record) throw new KeyManagementError('UNKNOWN_KEY', `Unknown key id "${keyId}"`);
    const revokedAt = this.clock().toISOString();
    try {
      // This write is the revocation: the authorizer reads this item.
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.apiKey(record.key_hash),
          UpdateExpression: 'SET revoked = :true, revoked_at = :at',
          ConditionExpression: 'attribute_exists(#pk) AND revoked = :false',
          ExpressionAttributeNames: { '#pk': PK },
          ExpressionAttributeValues: { ':true': true, ':false': false, ':at': revokedAt },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw new KeyManagementError('ALREADY_REVOKED', `Key "${keyId}" is already revoked`);
      throw error;
    }
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.keyRecord(record.user_id, keyId),
        UpdateExpression: 'SET revoked = :true, revoked_at = :at',
        ExpressionAttributeValues: { ':true': true, ':at': revokedAt },
      }),
    );
    await this.releaseSlot(record.user_id).catch((error: unknown) => {
      if (!isConditionFailure(error)) throw error;
    });
    let planKeyRemoved = !record.plan_key_id;
    if (record.plan_key_id && this.opts.usagePlan) {
      // The key is already unusable; a failure here leaves only an unused plan key, reported to the caller.
      planKeyRemoved = await this.opts.usagePlan.remove(record.plan_key_id).then(
        () => true,
        () => false,
      );
    }
    return { keyId, name: record.name, scopes: record.scopes, createdAt: record.created_at, revoked: true, revokedAt, planKeyRemoved };
  }
}
