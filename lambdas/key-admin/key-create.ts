/**
 * A key's create (PRODUCT P3), for the key manager (key-manager.ts), which
 * has checked the name and scopes and resolved the user:
 *
 * - nothing of a key is written before its slot; then its record, its plan
 *   key (created, recorded, attached: AWS only), and last the authorizer's
 *   item, so the key is usable only once everything else exists; any failure
 *   retires what was made, unless the key turned out usable after all (its
 *   last put landed and lost its answer: the create succeeded);
 * - `createOnce` adds an idempotency key, the user's own (the same one sent
 *   for two users is two requests): a request item, written first with a
 *   condition, records what was asked (the name only as a hash) and the key
 *   id chosen; a retry with the same parameters gets that key id back (never
 *   the key again), a retry with other parameters is refused, a create that
 *   made no key forgets it. A create that died is taken over by a retry once
 *   it is STALE_CREATE_MS old: its key is retired unless it became usable.
 */
import { createHash } from 'node:crypto';
import { hashApiKey } from '../core/api-key.js';
import type { Clock } from '../core/clock.js';
import type { Scope } from '../core/dataset.js';
import { STALE_CREATE_MS, type SlotLimits, type SlotRefusal } from '../core/key-rules.js';
import type { KeyRecordItem, KeyRequestItem, LiveApiKeyItem, UserItem } from '../store/table/items.js';
import { SlotsContended, type KeyStore } from '../store/keys/key-store.js';
import { KeyManagementError } from './key-errors.js';
import { infoOf, type CreateOnceResult, type KeyInfo } from './key-info.js';
import { timeBase62 } from './random.js';

/** How long a create's idempotency key is remembered (the web product's retries fall well inside it). */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

/** Thrown inside a create when someone retired its key first (a revoke, the user's deletion, a takeover). */
class RetiredFirst extends Error {}

export class KeyCreator {
  constructor(
    private readonly store: KeyStore,
    private readonly clock: Clock,
    private readonly random: (length: number) => string,
    private readonly limits: SlotLimits,
  ) {}

  newKeyId(at: Date): string {
    return `key_${timeBase62(at)}${this.random(12)}`;
  }

  /** A create at most once per idempotency key (file comment). */
  async createOnce(user: UserItem, name: string, scopes: Scope[], idempotencyKey: string): Promise<CreateOnceResult> {
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
      if (!(await this.store.putRequest(idempotencyKey, request, now))) {
        const stored = await this.store.request(user.user_id, idempotencyKey);
        // Deleted since (its create made no key): try again.
        if (!stored) continue;
        // Our own write, retried after a lost answer: it is ours to carry on.
        if (stored.key_id !== request.key_id) {
          const info = await this.seenBefore(idempotencyKey, stored, request, round === 0);
          if (info) return { created: false, info, userId: user.user_id };
          continue;
        }
      }
      const made = await this.make(user, name, scopes, request.key_id, idempotencyKey);
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
  async make(user: UserItem, name: string, scopes: Scope[], keyId: string, idempotencyKey?: string): Promise<{ key: string; info: KeyInfo }> {
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
        // The deletion it belongs to: a late close of an earlier deletion leaves it alone (key-rules.ts, madeBefore).
        user_version: user.version,
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
}
