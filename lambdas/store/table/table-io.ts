/**
 * The write side's DynamoDB calls, in one place: every read is consistent
 * (a change decides on what is stored now, never on a replica's past), every
 * conditional write answers true/false instead of throwing (a failed
 * condition means "someone else's word stands or must be read first"), and
 * every write is counted for the change's report and the bench.
 */
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { batchGetAll, itemKeyString, type BatchGetOptions } from './batch-get.js';
import { isConditionFailure } from './conditions.js';
import type { UserItem, UserRecord } from './items.js';
import { PK, SK, keys } from './table.js';

export type Key = Record<string, string>;
export type Item = Record<string, unknown>;

export class TableIO {
  /** Items written (puts and updates) since the last reset. */
  writes = 0;

  constructor(
    readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
    /** The BatchGetItems' attempts and backoff (batch-get.ts): tests inject the sleep. */
    readonly batchGet: BatchGetOptions = {},
  ) {}

  async get(key: Key): Promise<Item | undefined> {
    return (await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item;
  }

  async put(item: Item): Promise<void> {
    await this.client.send(new PutCommand({ TableName: this.tableName, Item: item }));
    this.writes++;
  }

  /** A conditional Put; false when the condition does not hold. */
  async putIf(item: Item, condition: string, values: Record<string, unknown> = {}, names: Record<string, string> = {}): Promise<boolean> {
    const out = await this.conditional(() =>
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: condition,
          ...attributeNames(condition, { '#pk': PK, '#version': 'version', ...names }),
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        }),
      ),
    );
    return out !== undefined;
  }

  /** A conditional UpdateItem; the item as it is after the update, or undefined when the condition does not hold. */
  async updateIf(key: Key, update: string, condition: string, values: Record<string, unknown> = {}, names: Record<string, string> = {}): Promise<Item | undefined> {
    const out = await this.conditional(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: update,
          ConditionExpression: condition,
          ...attributeNames(`${update} ${condition}`, { '#pk': PK, '#version': 'version', ...names }),
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return out === undefined ? undefined : (out.Attributes ?? {});
  }

  /** A conditional DeleteItem; false when the condition does not hold. */
  async deleteIf(key: Key, condition: string, values: Record<string, unknown> = {}, names: Record<string, string> = {}): Promise<boolean> {
    const out = await this.conditional(() =>
      this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: condition,
          ...attributeNames(condition, { '#pk': PK, ...names }),
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        }),
      ),
    );
    return out !== undefined;
  }

  /**
   * The conditional writes' one rule: a write that lands is counted and its
   * output answered; a failed condition is undefined, not an error (someone
   * else's word stands); any other failure is thrown.
   */
  private async conditional<T extends object>(write: () => Promise<T>): Promise<T | undefined> {
    try {
      const out = await write();
      this.writes++;
      return out;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  /** An unconditional UpdateItem; the item as it is after the update. */
  async update(key: Key, update: string, values: Record<string, unknown>, names: Record<string, string> = {}): Promise<Item> {
    const out = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: update,
        ...attributeNames(update, { '#type': 'type', ...names }),
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    this.writes++;
    return out.Attributes ?? {};
  }

  /** An unconditional counter: adds one to `attribute` and answers the new value. */
  async increment(key: Key, attribute: string, type: string): Promise<number> {
    const out = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'ADD #n :one SET #type = :type',
        ExpressionAttributeNames: { '#n': attribute, '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':type': type },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    this.writes++;
    return Number(out.Attributes?.[attribute]);
  }

  /** A partition (or the part of it after a prefix, or after a sort key, or between two sort keys inclusive), every page. */
  async queryAll(q: { pk: string; prefix?: string; after?: string; between?: { from: string; to: string } }): Promise<Item[]> {
    const names: Record<string, string> = { '#pk': PK };
    const values: Record<string, unknown> = { ':pk': q.pk };
    let condition = '#pk = :pk';
    if (q.between !== undefined) {
      condition += ' AND #sk BETWEEN :from AND :to';
      names['#sk'] = SK;
      values[':from'] = q.between.from;
      values[':to'] = q.between.to;
    } else if (q.after !== undefined && q.prefix !== undefined) {
      // The rest of a prefix after a sort key: BETWEEN is inclusive, so the key itself is dropped below.
      condition += ' AND #sk BETWEEN :after AND :end';
      names['#sk'] = SK;
      values[':after'] = q.after;
      values[':end'] = `${q.prefix}\uffff`;
    } else if (q.after !== undefined) {
      condition += ' AND #sk > :after';
      names['#sk'] = SK;
      values[':after'] = q.after;
    } else if (q.prefix !== undefined) {
      condition += ' AND begins_with(#sk, :prefix)';
      names['#sk'] = SK;
      values[':prefix'] = q.prefix;
    }
    const input: QueryCommandInput = { TableName: this.tableName, KeyConditionExpression: condition, ExpressionAttributeNames: names, ExpressionAttributeValues: values, ConsistentRead: true };
    const items: Item[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.client.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
    return q.after !== undefined ? items.filter((i) => String(i[SK]) !== q.after && (q.prefix === undefined || String(i[SK]).startsWith(q.prefix))) : items;
  }

  /**
   * Items by key (consistent BatchGetItem, 100 keys a call, all calls at
   * once), keyed by keyString; absent keys are absent. Keys left unprocessed
   * are sent again with backoff, a bounded number of times; then
   * UnprocessedKeysError, a throttle (throttling.ts): the change comes back
   * later, as for any throttle.
   */
  getMany(wanted: readonly Key[]): Promise<Map<string, Item>> {
    return batchGetAll(this.client, this.tableName, wanted, { ...this.batchGet, consistent: true });
  }

  /** Live users by id (getMany's read). */
  async users(ids: readonly string[]): Promise<Map<string, UserRecord>> {
    const found = new Map<string, UserRecord>();
    for (const item of (await this.getMany([...new Set(ids)].map((id) => keys.user(id) as Key))).values() as Iterable<UserItem>) {
      if (item.user && !item.deleted) found.set(item.user_id, item.user);
    }
    return found;
  }
}

export const keyString = itemKeyString;

/** The names an expression uses, or nothing: DynamoDB refuses unused names and an empty map. */
function attributeNames(expression: string, names: Record<string, string>): { ExpressionAttributeNames?: Record<string, string> } {
  const used = Object.entries(names).filter(([name]) => new RegExp(`${name}\\b`).test(expression));
  return used.length ? { ExpressionAttributeNames: Object.fromEntries(used) } : {};
}
