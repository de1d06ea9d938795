/**
 * Key management's items and the conditional writes that keep PRODUCT P3
 * whatever runs at the same time, crashes half-way, is retried or loses its
 * answer (docs/data-model.md, "Key management"). No transactions (dynalite
 * has none): each rule rests on one item's conditional write, and every step
 * is safe to repeat. The store is layered, each file importing only those
 * below it: key-table.ts (options, reads, conditional writes), key-slots.ts
 * (slots and the daily bound), key-records.ts (a key's items, revokes and
 * their audit), this file (reconciling stale slots; create requests); a
 * user's deletion is user-keys.ts.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { staleHolders } from '../../core/key-rules.js';
import { isConditionFailure } from '../table/conditions.js';
import type { KeyRequestItem } from '../table/items.js';
import { KeyRecords } from './key-records.js';
import { TTL_ATTRIBUTE, keys } from '../table/table.js';

export { SlotsContended } from './key-slots.js';
export type { Retired } from './key-records.js';
export { PlanKeyWithoutClient, parsePlanKeyName, planKeyName, type KeyStoreOptions, type PlanKeyEntry, type PlanKeys, type RetiredBy, type RevokeAudit, type RevokedKey } from './key-table.js';

export class KeyStore extends KeyRecords {
  /**
   * Checks the holders whose create may have died (key-rules.ts,
   * STALE_CREATE_MS): a key that is usable keeps its slot (and is marked
   * so), any other is retired. What a refused create runs before refusing.
   */
  async reconcile(userId: string): Promise<void> {
    const { slots } = await this.readSlots(userId);
    for (const keyId of staleHolders(slots, this.clock())) {
      const record = await this.record(userId, keyId);
      if (record && !record.revoked && record.confirmed) continue;
      const retired = await this.retire(userId, keyId, { unlessUsable: true, by: 'stale create reclaimed' });
      if (retired.outcome === 'usable') await this.confirm(userId, keyId);
      // A create that died before its key was usable: never shown to anyone, so nothing of it is kept but its id.
      else if (retired.flipped) await this.erase(userId, keyId, 'stale create reclaimed');
    }
  }

  // ---- create requests (idempotency keys) ------------------------------------------------------------------------

  // Each is the user's own (keys.keyRequest): the user id is part of the item's key, so no answer is about another user's.

  /** Writes a create request unless a live one of the user's has this idempotency key; false when one does. */
  putRequest(idempotencyKey: string, request: KeyRequestItem, now: Date): Promise<boolean> {
    // An expired request is gone for good even if DynamoDB's TTL has not deleted it yet.
    return this.putIf({ ...keys.keyRequest(request.user_id, idempotencyKey), ...request }, 'attribute_not_exists(#pk) OR #ttl < :now', { ':now': Math.floor(now.getTime() / 1000) }, { '#ttl': TTL_ATTRIBUTE });
  }

  request(userId: string, idempotencyKey: string): Promise<KeyRequestItem | undefined> {
    return this.get(keys.keyRequest(userId, idempotencyKey)) as Promise<KeyRequestItem | undefined>;
  }

  markRequestDone(userId: string, idempotencyKey: string, keyId: string): Promise<boolean> {
    return this.updateIf(keys.keyRequest(userId, idempotencyKey), 'SET #state = :done', 'key_id = :keyId', { ':done': 'done', ':keyId': keyId }, { '#state': 'state' });
  }

  /** Forgets a request that made no key, so a retry starts afresh; only if it is still that key's. */
  async forgetRequest(userId: string, idempotencyKey: string, keyId: string): Promise<void> {
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: keys.keyRequest(userId, idempotencyKey), ConditionExpression: 'key_id = :keyId', ExpressionAttributeValues: { ':keyId': keyId } }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
