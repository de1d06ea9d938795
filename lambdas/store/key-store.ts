/**
 * Key management's items and the conditional writes that keep PRODUCT P3
 * whatever runs at the same time, crashes half-way, is retried or loses its
 * answer (docs/data-model.md, "Key management"). No transactions (dynalite
 * has none): each rule rests on one item's conditional write, and every step
 * is safe to repeat.
 *
 * - The user's slot record (the key counter item) names every key that is
 *   active or being made (key-rules.ts), changed only by a read and a Put
 *   conditional on the revision read (`rev`): the 10-key limit, the daily
 *   creates and the deletion's closing are one atomic decision, and a retried
 *   change finds its own effect (transitions are idempotent by key id).
 * - A key becomes usable last: slot, record, plan key (created, recorded,
 *   attached), then the authorizer's item, put only where none exists.
 * - Retiring a key (a revoke, a failed or abandoned create, a deletion)
 *   writes the authorizer's item as revoked first, whether or not it exists
 *   yet, so a create still in flight can never put it active afterwards; then
 *   the record, then the slot, then the plan key. A create's own clean-up
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
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { DEFAULT_LIMITS, adopt, close, release, reserve, staleHolders, type Reservation, type SlotLimits, type Slots } from '../core/key-rules.js';
import { isConditionFailure } from './conditions.js';
import type { ApiKeyItem, KeyCounterItem, KeyRecordItem, KeyRequestItem } from './items.js';
import { KEY_RECORD_PREFIX, PK, SK, TTL_ATTRIBUTE, keys } from './table.js';

/**
 * API Gateway's side of a key (AWS only): an API key whose value is the key's
 * usage identifier, tagged with the usage plan's id, in the usage plan.
 */
export interface PlanKeys {
  /** Creates the API key (not yet in the plan); answers its id. */
  create(keyId: string, usageIdentifier: string): Promise<string>;
  /** Adds it to the usage plan; one already there is no error. */
  attach(planKeyId: string): Promise<void>;
  /** Deletes it, which takes it out of the plan; one already gone is no error. */
  remove(planKeyId: string): Promise<void>;
}

/** Too many concurrent changes of one user's slots in a row; the caller retries (never seen under the stage throttle). */
export class SlotsContended extends Error {
  constructor(userId: string) {
    super(`the key slots of ${userId} kept changing under concurrent requests`);
    this.name = 'SlotsContended';
  }
}

/** A record that holds an API Gateway plan key, met where no API Gateway client was given. */
export class PlanKeyWithoutClient extends Error {
  constructor(keyId: string) {
    super(`key ${keyId} has an API Gateway plan key, and this run has no API Gateway client to delete it: run it with AWS access`);
    this.name = 'PlanKeyWithoutClient';
  }
}

export interface Retired {
  /** `usable`: a clean-up found the key usable after all and left it alone. */
  outcome: 'retired' | 'usable';
  /** Whether this call revoked the record (false: it was revoked already). */
  flipped: boolean;
  record: KeyRecordItem;
}

/** Who retired a key: what its audit line says. */
export type RetiredBy = 'revoke' | 'user deleted' | 'create taken over' | 'stale create reclaimed' | 'create failed';

/** A revoke that took effect, as its audit line names it. */
export interface RevokedKey {
  userId: string;
  keyId: string;
  revokedAt: string | null;
  by: RetiredBy;
}

/** Writes a revoke's audit line and counts it; called once per revoked key (a create's own failed clean-up is no revoke). */
export type RevokeAudit = (revoked: RevokedKey) => void;

export interface KeyStoreOptions {
  clock: Clock;
  planKeys?: PlanKeys;
  limits?: SlotLimits;
  /** Without one, revokes are left unclaimed, for a run that has one to write (the next retire or erase of the key). */
  audit?: RevokeAudit;
}

const MAX_SLOT_WRITES = 64;
/** When the slots of a counter written before slots were named are taken to have been reserved (long ago: worth checking). */
const LEGACY_RESERVED_AT = '1970-01-01T00:00:00.000Z';

type Key = Record<string, string>;

export class KeyStore {
  readonly clock: Clock;
  readonly limits: SlotLimits;
  readonly planKeys: PlanKeys | undefined;
  /** Settable: the key-management function installs its audit once its logger exists (handler.ts). */
  audit: RevokeAudit | undefined;

  constructor(
    readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
    opts: KeyStoreOptions,
  ) {
    this.clock = opts.clock;
    this.limits = opts.limits ?? DEFAULT_LIMITS;
    this.planKeys = opts.planKeys;
    this.audit = opts.audit;
  }

  // ---- the slot record -------------------------------------------------------------------------------------------

  /** The user's slots as stored, with what a conditional write of them needs. */
  async readSlots(userId: string): Promise<{ slots: Slots; rev: number | undefined; exists: boolean }> {
    const item = (await this.get(keys.keyCounter(userId))) as KeyCounterItem | undefined;
    if (!item) return { slots: { holders: {} }, rev: undefined, exists: false };
    // A counter written before slots were named: its holders are the keys whose records are not revoked.
    const holders = item.holders ?? Object.fromEntries((await this.records(userId)).filter((r) => !r.revoked).map((r) => [r.key_id, LEGACY_RESERVED_AT]));
    return {
      slots: { holders, day: item.day, created: item.created, closedVersion: item.closed_version },
      rev: item.rev,
      exists: true,
    };
  }

  /**
   * Applies `step` to the slots read, and writes its result conditional on
   * nothing having changed since; on a conflict, reads and decides again (a
   * write of ours that landed but lost its answer reads as done: the step is
   * idempotent).
   */
  async changeSlots<T>(userId: string, step: (s: Slots) => { next: Slots | null; result: T }): Promise<T> {
    for (let attempt = 0; attempt < MAX_SLOT_WRITES; attempt++) {
      const read = await this.readSlots(userId);
      const { next, result } = step(read.slots);
      if (!next) return result;
      const rev = (read.rev ?? 0) + 1;
      const item: KeyCounterItem = {
        type: 'KEY_COUNTER',
        user_id: userId,
        active: Object.keys(next.holders).length,
        holders: next.holders,
        rev,
        ...(next.day !== undefined ? { day: next.day, created: next.created ?? 0 } : {}),
        ...(next.closedVersion !== undefined ? { closed_version: next.closedVersion } : {}),
      };
      const revision = !read.exists ? 'attribute_not_exists(#pk)' : read.rev === undefined ? 'attribute_exists(#pk) AND attribute_not_exists(#rev)' : '#rev = :rev';
      // The stored day only moves forward, whatever a step decided: the rules say so (key-rules.ts, `reserve`), and the
      // write refuses a day older than the stored one (or dropping it) even if a step or an older writer forgot.
      const forward = next.day === undefined ? 'attribute_not_exists(#day)' : '(attribute_not_exists(#day) OR #day <= :day)';
      const values = { ...(read.rev === undefined ? {} : { ':rev': read.rev }), ...(next.day === undefined ? {} : { ':day': next.day }) };
      if (await this.putIf({ ...keys.keyCounter(userId), ...item }, `(${revision}) AND ${forward}`, values, { '#rev': 'rev', '#day': 'day' })) return result;
    }
    throw new SlotsContended(userId);
  }

  reserve(userId: string, keyId: string, at: Date, userVersion: number): Promise<Reservation> {
    return this.changeSlots(userId, (s) => {
      const r = reserve(s, keyId, at, userVersion, this.limits);
      return { next: 'slots' in r ? r.slots : null, result: r };
    });
  }

  releaseSlot(userId: string, keyId: string): Promise<void> {
    return this.changeSlots(userId, (s) => ({ next: release(s, keyId), result: undefined }));
  }

  /** Closes the user's slots at a deletion's version; answers the keys holding one. */
  closeSlots(userId: string, version: number): Promise<string[]> {
    return this.changeSlots(userId, (s) => ({ next: close(s, version), result: Object.keys(s.holders) }));
  }

  /** Reopens a user a resync brought back (a resync keeps a user's version, so the deletion's version does not tell). */
  reopenSlots(userId: string): Promise<void> {
    return this.changeSlots(userId, (s) => {
      if (s.closedVersion === undefined) return { next: null, result: undefined };
      const { closedVersion: _closed, ...open } = s;
      return { next: open, result: undefined };
    });
  }

  /** Slots for keys seeded from a dataset (they count against the limit, and are not creates). */
  adoptSlots(userId: string, keyIds: readonly string[]): Promise<void> {
    return this.changeSlots(userId, (s) => ({ next: adopt(s, keyIds, this.clock()), result: undefined }));
  }

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

  // ---- the key's items -------------------------------------------------------------------------------------------

  record(userId: string, keyId: string): Promise<KeyRecordItem | undefined> {
    return this.get(keys.keyRecord(userId, keyId)) as Promise<KeyRecordItem | undefined>;
  }

  /** Every record of the user, page after page (DynamoDB answers at most 1 MB a Query). */
  async records(userId: string): Promise<KeyRecordItem[]> {
    const out: KeyRecordItem[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.recordPage(userId, { limit: 1000, after: cursor });
      out.push(...page.records);
      cursor = page.last;
    } while (cursor);
    return out;
  }

  /**
   * Up to `limit` records of the user after the sort key `after`, in key id
   * order (ids begin with their creation time), erased ones skipped; `last`
   * is where the next page starts, absent at the end.
   */
  async recordPage(userId: string, opts: { limit: number; after?: string }): Promise<{ records: KeyRecordItem[]; last?: string }> {
    const records: KeyRecordItem[] = [];
    let start: Record<string, unknown> | undefined = opts.after ? { [PK]: keys.keyCounter(userId)[PK], [SK]: opts.after } : undefined;
    for (;;) {
      const out = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':pk': keys.keyCounter(userId)[PK], ':prefix': KEY_RECORD_PREFIX },
          ConsistentRead: true,
          Limit: opts.limit - records.length,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of (out.Items ?? []) as (KeyRecordItem & { sk: string })[]) if (!item.erased) records.push(item);
      start = out.LastEvaluatedKey;
      if (!start) return { records };
      if (records.length >= opts.limit) return { records, last: String(start[SK]) };
    }
  }

  /** The record, written only where none exists: false when one does and is not this key's (someone retired it first). */
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
    await this.releaseSlot(userId, keyId);
    record = await this.removePlanKey(userId, record);
    return { outcome: 'retired', flipped, record };
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
  async erase(userId: string, keyId: string, by: RetiredBy): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const record = await this.record(userId, keyId);
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

  // ---- create requests (idempotency keys) ------------------------------------------------------------------------

  /** Writes a create request unless a live one has this idempotency key; false when one does. */
  putRequest(idempotencyKey: string, request: KeyRequestItem, now: Date): Promise<boolean> {
    // An expired request is gone for good even if DynamoDB's TTL has not deleted it yet.
    return this.putIf({ ...keys.keyRequest(idempotencyKey), ...request }, 'attribute_not_exists(#pk) OR #ttl < :now', { ':now': Math.floor(now.getTime() / 1000) }, { '#ttl': TTL_ATTRIBUTE });
  }

  request(idempotencyKey: string): Promise<KeyRequestItem | undefined> {
    return this.get(keys.keyRequest(idempotencyKey)) as Promise<KeyRequestItem | undefined>;
  }

  markRequestDone(idempotencyKey: string, keyId: string): Promise<boolean> {
    return this.updateIf(keys.keyRequest(idempotencyKey), 'SET #state = :done', 'key_id = :keyId', { ':done': 'done', ':keyId': keyId }, { '#state': 'state' });
  }

  /** Forgets a request that made no key, so a retry starts afresh; only if it is still that key's. */
  async forgetRequest(idempotencyKey: string, keyId: string): Promise<void> {
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: keys.keyRequest(idempotencyKey), ConditionExpression: 'key_id = :keyId', ExpressionAttributeValues: { ':keyId': keyId } }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  // ---- DynamoDB --------------------------------------------------------------------------------------------------

  private async get(key: Key): Promise<Record<string, unknown> | undefined> {
    return (await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item;
  }

  private async putIf(item: Record<string, unknown>, condition: string, values: Record<string, unknown> = {}, names: Record<string, string> = {}): Promise<boolean> {
    try {
      const expressionNames = usedNames(condition, { '#pk': PK, ...names });
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: condition,
          ...(Object.keys(expressionNames).length ? { ExpressionAttributeNames: expressionNames } : {}),
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return false;
    }
  }

  private async updateIf(key: Key, update: string, condition: string, values: Record<string, unknown>, names: Record<string, string> = {}): Promise<boolean> {
    try {
      const expressionNames = usedNames(`${update} ${condition}`, { '#pk': PK, ...names });
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: update,
          ConditionExpression: condition,
          ...(Object.keys(expressionNames).length ? { ExpressionAttributeNames: expressionNames } : {}),
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return false;
    }
  }
}

/** DynamoDB refuses attribute names an expression does not use. */
function usedNames(expression: string, names: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(names).filter(([n]) => expression.includes(n)));
}
