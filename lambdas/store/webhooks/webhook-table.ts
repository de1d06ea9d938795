/**
 * The webhooks' reads and conditional writes: every rule of theirs rests on
 * one item's conditional write (no transactions, as the rest of the store),
 * and a write whose condition did not hold answers `undefined` ("someone
 * else got there first"), never throws.
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../table/conditions.js';

export type ItemKey = Record<string, string>;
type Values = Record<string, unknown>;

/** The attribute names an expression uses, of those given (DynamoDB refuses unused ones). */
const namesIn = (expression: string, names: Record<string, string>) => Object.fromEntries(Object.entries(names).filter(([n]) => expression.includes(n)));

export class WebhookTable {
  constructor(
    readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async get<T>(key: ItemKey): Promise<T | undefined> {
    return (await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item as T | undefined;
  }

  async put(item: Record<string, unknown>): Promise<void> {
    await this.client.send(new PutCommand({ TableName: this.tableName, Item: item }));
  }

  /** PutItem under `condition`; false when it did not hold. */
  async putIf(item: Record<string, unknown>, condition: string, values: Values = {}, names: Record<string, string> = {}): Promise<boolean> {
    try {
      const used = namesIn(condition, { '#pk': 'pk', ...names });
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: condition,
          ...(Object.keys(used).length ? { ExpressionAttributeNames: used } : {}),
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** UpdateItem under `condition` (none: unconditional); the item as written, or undefined when the condition did not hold. */
  async update<T>(key: ItemKey, update: string, condition: string | undefined, values: Values, names: Record<string, string> = {}): Promise<T | undefined> {
    try {
      const used = namesIn(`${update} ${condition ?? ''}`, { '#pk': 'pk', ...names });
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: update,
          ...(condition ? { ConditionExpression: condition } : {}),
          ...(Object.keys(used).length ? { ExpressionAttributeNames: used } : {}),
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes as T;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  /**
   * Claims the audit line of an effect already written on an item (a
   * webhook's delete, closing or disable): `attribute` set to `claim` where
   * `condition` (the effect) holds and no line was claimed yet. Whoever
   * holds the claim writes the line, so it is written once, by the call
   * that made the effect or, if that one failed after it, by the next that
   * meets it unclaimed. True when this claim holds: also when the write
   * landed and its answer was lost (the SDK's retry then fails the
   * condition, or the call fails), which a read tells.
   */
  async claim(key: ItemKey, attribute: string, claim: string, condition: string, values: Values = {}, names: Record<string, string> = {}): Promise<boolean> {
    const mine = async () => (await this.get<Record<string, unknown>>(key))?.[attribute] === claim;
    try {
      if (await this.update(key, `SET ${attribute} = :claim`, `attribute_exists(#pk) AND attribute_not_exists(${attribute}) AND (${condition})`, { ...values, ':claim': claim }, names)) return true;
    } catch (error) {
      if (await mine().catch(() => false)) return true;
      throw error;
    }
    return mine();
  }

  /** DeleteItem (unconditional unless a condition is given); false when the condition did not hold. */
  async delete(key: ItemKey, condition?: string, values: Values = {}): Promise<boolean> {
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: key, ...(condition ? { ConditionExpression: condition } : {}), ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}) }));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
