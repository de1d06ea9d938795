/**
 * A key's items and their retirement (PRODUCT P3; docs/data-model.md, "Key
 * management"): the record, the authorizer's item, the plan key's id, and
 * the revoke with its audit line. Over key-slots.ts (a retire releases the
 * key's slot).
 *
 * - A key becomes usable last: slot, record, plan key (created, recorded,
 *   attached), then the authorizer's item, put only where none exists.
 * - Retiring a key (a revoke, a failed or abandoned create, a deletion)
 *   writes the authorizer's item as revoked first, whether or not it exists
 *   yet, so a create still in flight can never put it active afterwards; then
 *   the record, then what else the key holds (its webhooks: closeHoldings),
 *   then the slot, then the plan key. A create's own clean-up
 *   writes it only where none exists: if the key did become usable, it stays
 *   (the create succeeded after all), never half-revoked.
 * - The plan key's id is recorded before it is attached, so every retire
 *   after that deletes it, and an attach after that fails.
 * - Every revoke that took effect (the record flipped) gets one audit line
 *   (`audit`), whatever its caller then answers: right after the flip, and
 *   if that one died or failed first, by whoever meets the record revoked
 *   and not yet audited (the revoke's retry, a redelivered deletion, the
 *   erase). One writer only: the line is claimed on the record first
 *   (`audited`, conditional), then written.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { isConditionFailure } from '../table/conditions.js';
import type { ApiKeyItem, KeyRecordItem } from '../table/items.js';
import { KeySlots } from './key-slots.js';
import { PlanKeyWithoutClient, type RetiredBy } from './key-table.js';
import { PK, keys } from '../table/table.js';
import { closeKeyWebhooks } from '../webhooks/key-webhooks.js';
import { WebhookRecords } from '../webhooks/webhook-records.js';

export interface Retired {
  /** `usable`: a clean-up found the key usable after all and left it alone. */
  outcome: 'retired' | 'usable';
  /** Whether this call revoked the record (false: it was revoked already). */
  flipped: boolean;
  record: KeyRecordItem;
}

export class KeyRecords extends KeySlots {
  async putRecord(userId: string, record: KeyRecordItem): Promise<boolean> {
    if (await this.putIf({ ...keys.keyRecord(userId, record.key_id), ...record }, 'attribute_not_exists(#pk)')) return true;
    // Ours already (a retry after a lost answer) or someone's tombstone.
    const stored = await this.record(userId, record.key_id);
    return stored !== undefined && stored.key_hash === record.key_hash && !stored.revoked;
  }

  /** Records the plan key's id before it is attached; answers the record as it is now (revoked: do not attach). */
  async recordPlanKey(userId: string, keyId: string, planKeyId: string): Promise<KeyRecordItem> {
    const out = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.keyRecord(userId, keyId),
        UpdateExpression: 'SET plan_key_id = :id',
        ConditionExpression: 'attribute_exists(#pk)',
        ExpressionAttributeNames: { '#pk': PK },
        ExpressionAttributeValues: { ':id': planKeyId },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes as KeyRecordItem;
  }

  /** The authorizer's item, put only where none exists: true when it is this key's and active (a retry of ours included). */
  async putApiKey(keyHash: string, item: ApiKeyItem): Promise<boolean> {
    if (await this.putIf({ ...keys.apiKey(keyHash), ...item }, 'attribute_not_exists(#pk)')) return true;
    const stored = (await this.get(keys.apiKey(keyHash))) as ApiKeyItem | undefined;
    return stored?.key_id === item.key_id && !stored.revoked;
  }

  /** Marks a key as having become usable: reconcile need not look at it again. */
  async confirm(userId: string, keyId: string): Promise<void> {
    await this.updateIf(keys.keyRecord(userId, keyId), 'SET confirmed = :true', 'attribute_exists(#pk) AND revoked = :false', { ':true': true, ':false': false });
  }

  /**
   * Retires a key so that it never authenticates again, and gives back what
   * it held: the authorizer's item is written revoked (existing or not), then
   * the record (a tombstone if there is none yet: a create still to write it
   * then fails), then the slot, then the plan key. Every step is safe to
   * repeat; a retire that dies half-way is finished by the next one.
   *
   * `unlessUsable` (a create's own clean-up, an abandoned create): the
   * authorizer's item is written only where none exists, so a key that did
   * become usable is left alone (`outcome: 'usable'`).
   */
  async retire(userId: string, keyId: string, opts: { unlessUsable: boolean; by: RetiredBy }): Promise<Retired> {
    const at = this.clock().toISOString();
    const revokeId = randomUUID();
    let record = await this.record(userId, keyId);
    let flipped = false;
    if (!record) {
      const tombstone: KeyRecordItem = { type: 'KEY_RECORD', key_id: keyId, revoked: true, revoked_at: at, revoke_id: revokeId, revoked_by: opts.by };
      if (await this.putIf({ ...keys.keyRecord(userId, keyId), ...tombstone }, 'attribute_not_exists(#pk)')) {
        record = tombstone;
        flipped = true;
      } else {
        record = (await this.record(userId, keyId))!;
        flipped = record.revoke_id === revokeId;
      }
    }
    // Erased records and tombstones hold no hash: their key never had (or no longer has) an authorizer item to revoke.
    if (record.key_hash) {
      if (opts.unlessUsable) {
        if (!(await this.putIf({ ...keys.apiKey(record.key_hash), type: 'API_KEY', key_id: keyId, revoked: true, revoked_at: at }, 'attribute_not_exists(#pk)'))) {
          const stored = (await this.get(keys.apiKey(record.key_hash))) as ApiKeyItem | undefined;
          if (stored && !stored.revoked) return { outcome: 'usable', flipped: false, record };
        }
      } else {
        // The revocation: from this write on the authorizer answers 401, and no create can put the item active again.
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keys.apiKey(record.key_hash),
            UpdateExpression: 'SET revoked = :true, revoked_at = if_not_exists(revoked_at, :at), #type = :type, key_id = :keyId',
            ExpressionAttributeNames: { '#type': 'type' },
            ExpressionAttributeValues: { ':true': true, ':at': at, ':type': 'API_KEY', ':keyId': keyId },
          }),
        );
      }
    }
    if (!record.revoked) {
      const out = await this.flipRecord(userId, keyId, at, revokeId, opts.by);
      flipped = out.flipped;
      record = out.record;
    }
    // Before anything else can fail (the slot, the plan key): the revoke took effect, so it is on the record now.
    record = await this.auditRevoke(userId, record);
    // PRODUCT P18: the key's webhooks die with it, before the revoke (or the user's deletion) answers.
    await this.closeHoldings(userId, keyId, opts.by);
    await this.releaseSlot(userId, keyId);
    record = await this.removePlanKey(userId, record);
    return { outcome: 'retired', flipped, record };
  }

  /**
   * What else a key holds, closed once the key is refused: its webhooks
   * (lambdas/store/webhooks/key-webhooks.ts). Every retire runs it, and so
   * does a deletion's close for a key it finds revoked already (user-keys.ts,
   * which then skips the retire): the one per-key step any other clean-up of
   * a key joins. Safe to repeat (a key whose webhooks are closed: one read).
   */
  async closeHoldings(userId: string, keyId: string, by: RetiredBy): Promise<void> {
    await closeKeyWebhooks(new WebhookRecords(this.client, this.tableName), userId, keyId, by, this.webhookAudit, this.clock);
  }

  private async flipRecord(userId: string, keyId: string, at: string, revokeId: string, by: RetiredBy): Promise<{ flipped: boolean; record: KeyRecordItem }> {
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.keyRecord(userId, keyId),
          UpdateExpression: 'SET revoked = :true, revoked_at = :at, revoke_id = :id, revoked_by = :by',
          ConditionExpression: 'attribute_exists(#pk) AND revoked = :false',
          ExpressionAttributeNames: { '#pk': PK },
          ExpressionAttributeValues: { ':true': true, ':false': false, ':at': at, ':id': revokeId, ':by': by },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { flipped: true, record: out.Attributes as KeyRecordItem };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Revoked already: by someone else, or by this very call (a retry after a lost answer).
      const record = (await this.record(userId, keyId))!;
      return { flipped: record.revoke_id === revokeId, record };
    }
  }

  /**
   * Writes the audit line of a revoked key once: claims it on the record
   * (`audited`, only where none is), then writes it. Nothing to write for a
   * tombstone (no key was ever made under it), a create's own failed
   * clean-up (never usable, never shown), an erased record, or without an
   * audit (a later run with one writes it). Answers the record as now.
   */
  private async auditRevoke(userId: string, record: KeyRecordItem): Promise<KeyRecordItem> {
    if (!this.audit || !record.revoked || record.audited || record.erased || !record.key_hash || record.revoked_by === 'create failed') return record;
    const claim = randomUUID();
    const key = keys.keyRecord(userId, record.key_id);
    if (!(await this.updateIf(key, 'SET audited = :claim', 'attribute_exists(#pk) AND revoked = :true AND attribute_not_exists(audited)', { ':claim': claim, ':true': true }))) {
      // Claimed already: by someone else, or by this very call (a retry of its update after a lost answer).
      const stored = await this.record(userId, record.key_id);
      if (stored?.audited !== claim) return stored ?? record;
    }
    // Records revoked before revoked_by was written were revoked by a revoke or a deletion; the caller's reason is the best known.
    this.audit({ userId, keyId: record.key_id, revokedAt: record.revoked_at ?? null, by: (record.revoked_by as RetiredBy | undefined) ?? 'revoke' });
    return { ...record, audited: claim };
  }

  /** Deletes the plan key a retired record still names, then forgets it. */
  private async removePlanKey(userId: string, record: KeyRecordItem): Promise<KeyRecordItem> {
    const planKeyId = record.plan_key_id;
    if (!planKeyId) return record;
    if (!this.planKeys) throw new PlanKeyWithoutClient(record.key_id);
    await this.planKeys.remove(planKeyId);
    await this.updateIf(keys.keyRecord(userId, record.key_id), 'REMOVE plan_key_id', 'plan_key_id = :id', { ':id': planKeyId });
    const { plan_key_id: _removed, ...rest } = record;
    return rest;
  }

  /**
   * Keeps nothing of a retired key but its id and that it is revoked: the
   * record and the authorizer's item lose name, scopes, owner, hash and
   * times (the authorizer's item stays, revoked, so no create can put it
   * back). A record that names a plan key is retired again first.
   */
  async erase(userId: string, keyId: string, by: RetiredBy, read?: KeyRecordItem): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      // `read`: the record as the caller just read it consistently (a page of the user's records); the writes below are
      // conditional or idempotent, so a record changed since is met by the next attempt, which reads it again.
      const record = attempt === 0 && read ? read : await this.record(userId, keyId);
      if (!record || record.erased) return;
      if (record.plan_key_id || !record.revoked) {
        await this.retire(userId, keyId, { unlessUsable: false, by });
        continue;
      }
      // A revoke that died between its flip and its line: the line is written before the record forgets the key.
      await this.auditRevoke(userId, record);
      if (record.key_hash) await this.client.send(new PutCommand({ TableName: this.tableName, Item: { ...keys.apiKey(record.key_hash), type: 'API_KEY', key_id: keyId, revoked: true } }));
      // Only if no create recorded a plan key since (it deletes that one itself, with the record's help).
      const erased: KeyRecordItem = { type: 'KEY_RECORD', key_id: keyId, revoked: true, erased: true };
      if (await this.putIf({ ...keys.keyRecord(userId, keyId), ...erased }, 'attribute_not_exists(plan_key_id)')) return;
    }
    throw new Error(`key ${keyId} kept changing while it was being erased`);
  }
}
