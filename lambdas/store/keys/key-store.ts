/**
 * Key management's items and the conditional writes that keep PRODUCT P3
 * whatever runs at the same time, crashes half-way, is retried or loses its
 * answer (docs/data-model.md, "Key management"). No transactions (dynalite
 * has none): each rule rests on one item's conditional write, and every step
 * is safe to repeat. The store is layered, each file importing only those
 * below it: key-table.ts (options, reads, conditional writes), key-slots.ts
 * (slots and the daily bound), key-records.ts (a key's items, revokes and
 * their audit), this file (reconciling stale slots; create requests; what
 * the plan-key sweep reads and where its pass has got to); a user's
 * deletion is user-keys.ts.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll, itemKeyString } from '../table/batch-get.js';
import { staleHolders } from '../../core/key-rules.js';
import { isConditionFailure } from '../table/conditions.js';
import type { KeyRecordItem, KeyRequestItem } from '../table/items.js';
import { KeyRecords } from './key-records.js';
import { TTL_ATTRIBUTE, keys } from '../table/table.js';

export { SlotsContended } from './key-slots.js';

/** Where the sweep's pass has got to: GetApiKeys' position of the next page (none: a new pass starts), and the revision written. */
export interface SweepProgress {
  position?: string;
  rev: number;
}
export type { Retired } from './key-records.js';
export { PlanKeyWithoutClient, parsePlanKeyName, planKeyName, type KeyStoreOptions, type PlanKeyEntry, type PlanKeyPage, type PlanKeys, type RetiredBy, type RevokeAudit, type RevokedKey } from './key-table.js';

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

  // ---- a deletion's close between its calls (user-keys.ts) --------------------------------------------------------

  /** The sort key of the last record the close at `version` walked past, if a call of it stopped before the end. */
  async closeProgress(userId: string, version: number): Promise<string | undefined> {
    const item = await this.get(keys.keyClose(userId));
    return item?.version === version && typeof item.after === 'string' ? item.after : undefined;
  }

  /** Moves the close's position forward only (a slower concurrent call of it never moves it back); false: it was further. */
  saveCloseProgress(userId: string, version: number, after: string): Promise<boolean> {
    return this.putIf({ ...keys.keyClose(userId), type: 'KEY_CLOSE', version, after }, 'attribute_not_exists(#pk) OR #v < :v OR (#v = :v AND #after < :after)', { ':v': version, ':after': after }, { '#v': 'version', '#after': 'after' });
  }

  /** Once the close at `version` is done: nothing of it stays (a newer deletion's progress is left alone). */
  async forgetCloseProgress(userId: string, version: number): Promise<void> {
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: keys.keyClose(userId), ConditionExpression: '#v <= :v', ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':v': version } }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  // ---- the plan-key sweep (plan-key-sweep.ts) ---------------------------------------------------------------------

  /** The records of many keys at once, consistently (BatchGetItem, 100 a call), by `userId/keyId`; absent ones absent. */
  async recordsOf(owners: readonly { userId: string; keyId: string }[]): Promise<Map<string, KeyRecordItem>> {
    const found = await batchGetAll(this.client, this.tableName, owners.map((o) => keys.keyRecord(o.userId, o.keyId)), { consistent: true });
    const out = new Map<string, KeyRecordItem>();
    for (const o of owners) {
      const record = found.get(itemKeyString(keys.keyRecord(o.userId, o.keyId)));
      if (record) out.set(`${o.userId}/${o.keyId}`, record as unknown as KeyRecordItem);
    }
    return out;
  }

  async sweepProgress(): Promise<SweepProgress | undefined> {
    const item = await this.get(keys.keySweep());
    return item ? { ...(typeof item.position === 'string' ? { position: item.position } : {}), rev: Number(item.rev ?? 0) } : undefined;
  }

  /** Moves the pass on from what `read` found; false when another sweep moved it first (this one stops). */
  saveSweepProgress(read: SweepProgress | undefined, position: string | undefined): Promise<boolean> {
    const item = { ...keys.keySweep(), type: 'KEY_SWEEP', rev: (read?.rev ?? 0) + 1, updated_at: this.clock().toISOString(), ...(position ? { position } : {}) };
    return read ? this.putIf(item, '#rev = :rev', { ':rev': read.rev }, { '#rev': 'rev' }) : this.putIf(item, 'attribute_not_exists(#pk)');
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
