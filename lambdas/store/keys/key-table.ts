/**
 * The bottom of the key store (key-store.ts): its options, the types its
 * callers share, and what every layer above reads and writes through: a key
 * record by its user id and key id, a user's records in key id order, and
 * the conditional Put and Update the protocol rests on. Layers, each
 * importing only the ones below it: key-table.ts, key-slots.ts (slots and the
 * daily bound), key-records.ts (records, revokes and their audit),
 * key-store.ts (reconciling stale slots, create requests); a user's deletion
 * is user-keys.ts.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../../core/clock.js';
import { DEFAULT_LIMITS, type SlotLimits } from '../../core/key-rules.js';
import { isConditionFailure } from '../table/conditions.js';
import type { KeyRecordItem } from '../table/items.js';
import { KEY_RECORD_PREFIX, PK, SK, keys } from '../table/table.js';
import type { WebhookAudit } from '../webhooks/key-webhooks.js';

/**
 * API Gateway's side of a key (AWS only): an API key whose value is the key's
 * usage identifier, tagged with the usage plan's id, in the usage plan.
 */
export interface PlanKeys {
  /** Creates the API key (not yet in the plan), named for its owner and key (`planKeyName`); answers its id. */
  create(keyId: string, usageIdentifier: string, userId: string): Promise<string>;
  /** Adds it to the usage plan; one already there is no error. */
  attach(planKeyId: string): Promise<void>;
  /** Deletes it, which takes it out of the plan; one already gone is no error. */
  remove(planKeyId: string): Promise<void>;
  /**
   * One page of the account's API keys from `position` (GetApiKeys, 500 a
   * page), those of the usage plan's tag, for the sweep (plan-key-sweep.ts);
   * `position` of the next page, absent on the last. A port without it
   * cannot sweep.
   */
  listPage?(position?: string): Promise<PlanKeyPage>;
}

export interface PlanKeyPage {
  entries: PlanKeyEntry[];
  position?: string;
}

/** An API key of the plan as the sweep sees it. */
export interface PlanKeyEntry {
  id: string;
  name: string;
  createdAt: Date;
}

/**
 * The name of a key's API key: its owner and its id, so the sweep finds the
 * record that should name it from the API key alone (`parsePlanKeyName`).
 */
export const planKeyName = (userId: string, keyId: string): string => `${userId}/${keyId}`;
export function parsePlanKeyName(name: string): { userId: string; keyId: string } | null {
  const m = /^(usr_[^/]+)\/(key_[0-9A-Za-z]+)$/.exec(name);
  return m ? { userId: m[1]!, keyId: m[2]! } : null;
}

/** A record that holds an API Gateway plan key, met where no API Gateway client was given. */
export class PlanKeyWithoutClient extends Error {
  constructor(keyId: string) {
    super(`key ${keyId} has an API Gateway plan key, and this run has no API Gateway client to delete it: run it with AWS access`);
    this.name = 'PlanKeyWithoutClient';
  }
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
  /** The audit line of each webhook a retire closes (lambdas/store/webhooks/key-webhooks.ts); without one, left unclaimed likewise. */
  webhookAudit?: WebhookAudit;
}

export type Key = Record<string, string>;

export class KeyTable {
  readonly clock: Clock;
  readonly limits: SlotLimits;
  readonly planKeys: PlanKeys | undefined;
  /** Settable: the key-management function installs its audit once its logger exists (handler.ts). */
  audit: RevokeAudit | undefined;
  /** Settable likewise: the closing of a key's webhooks (key-records.ts, retire). */
  webhookAudit: WebhookAudit | undefined;

  constructor(
    readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
    opts: KeyStoreOptions,
  ) {
    this.clock = opts.clock;
    this.limits = opts.limits ?? DEFAULT_LIMITS;
    this.planKeys = opts.planKeys;
    this.audit = opts.audit;
    this.webhookAudit = opts.webhookAudit;
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


  // ---- DynamoDB --------------------------------------------------------------------------------------------------

  protected async get(key: Key): Promise<Record<string, unknown> | undefined> {
    return (await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item;
  }

  protected async putIf(item: Record<string, unknown>, condition: string, values: Record<string, unknown> = {}, names: Record<string, string> = {}): Promise<boolean> {
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

  protected async updateIf(key: Key, update: string, condition: string, values: Record<string, unknown>, names: Record<string, string> = {}): Promise<boolean> {
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
