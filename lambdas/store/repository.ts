/**
 * The read side of the table: the only module that issues DynamoDB reads.
 * Each method is one access pattern from docs/data-model.md; the comments give
 * its round trips. No Scan anywhere.
 */
import { GetCommand, QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyReader, EventReader, StartWindow } from '../core/ports.js';
import type { GuestStatusFilter } from '../core/params.js';
import type { ApiKeyItem, EventItem, EventPayload, RsvpItem } from './items.js';
import { findUserByName } from './user-lookup.js';
import {
  GUEST_SORT_PREFIX,
  INDEXES,
  guestPartition,
  indexKeys,
  keys,
  sortKeyBounds,
  userEventsPartition,
  type ProfileList,
} from './table.js';

export class DynamoRepository implements EventReader, ApiKeyReader {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** event-index: gsi1pk = EVENT#id AND gsi1sk = EVENT. 1 Query, 1 item. */
  async getPublicEvent(eventId: string): Promise<EventItem | null> {
    const { partitionKey, sortKey, name } = INDEXES.event;
    const k = indexKeys.eventById(eventId);
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: name,
        KeyConditionExpression: '#pk = :pk AND #sk = :sk',
        ExpressionAttributeNames: { '#pk': partitionKey, '#sk': sortKey },
        ExpressionAttributeValues: { ':pk': k[partitionKey], ':sk': k[sortKey] },
        Limit: 1,
      }),
    );
    return (out.Items?.[0] as EventItem | undefined) ?? null;
  }

  /**
   * `all`: event-index, gsi1pk = EVENT#id AND begins_with(gsi1sk, GUEST#).
   * One status: guest-index, gsi3pk = EVENT#id#status. Both in rsvp_date, user
   * id order; Limit = count, so exactly the items asked for are read.
   */
  async getGuests(eventId: string, status: GuestStatusFilter, count: number): Promise<RsvpItem[]> {
    const input: QueryCommandInput =
      status === 'all'
        ? {
            TableName: this.tableName,
            IndexName: INDEXES.event.name,
            KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
            ExpressionAttributeNames: { '#pk': INDEXES.event.partitionKey, '#sk': INDEXES.event.sortKey },
            ExpressionAttributeValues: { ':pk': indexKeys.eventById(eventId)[INDEXES.event.partitionKey], ':prefix': GUEST_SORT_PREFIX },
          }
        : {
            TableName: this.tableName,
            IndexName: INDEXES.guest.name,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': INDEXES.guest.partitionKey },
            ExpressionAttributeValues: { ':pk': guestPartition(eventId, status) },
          };
    return this.queryAll<RsvpItem>(input, count);
  }

  /**
   * user-events-index: gsi2pk = USER#username#list AND gsi2sk in the start
   * window, in index (start, id) order. Without `limit` it reads the whole
   * window (needed for `total` and for orders other than start order); with
   * it, only the first `limit` events.
   */
  async listUserEvents(username: string, list: ProfileList, window: StartWindow, limit?: number, descending = false): Promise<EventPayload[]> {
    const { partitionKey, sortKey, name } = INDEXES.userEvents;
    const lower = window.from !== undefined ? sortKeyBounds.startingAtOrAfter(window.from) : undefined;
    const uppers = [
      window.to !== undefined ? sortKeyBounds.startingAtOrBefore(window.to) : undefined,
      window.before !== undefined ? sortKeyBounds.startingBefore(window.before) : undefined,
    ].filter((u): u is string => u !== undefined);
    const upper = uppers.length ? uppers.reduce((a, b) => (a < b ? a : b)) : undefined;
    if (lower !== undefined && upper !== undefined && lower > upper) return [];

    const values: Record<string, string> = { ':pk': userEventsPartition(username, list) };
    let range = '';
    if (lower !== undefined && upper !== undefined) {
      range = ' AND #sk BETWEEN :lower AND :upper';
      values[':lower'] = lower;
      values[':upper'] = upper;
    } else if (lower !== undefined) {
      range = ' AND #sk >= :lower';
      values[':lower'] = lower;
    } else if (upper !== undefined) {
      range = ' AND #sk <= :upper';
      values[':upper'] = upper;
    }
    return this.queryAll<EventPayload>({
      TableName: this.tableName,
      IndexName: name,
      KeyConditionExpression: `#pk = :pk${range}`,
      ExpressionAttributeNames: { '#pk': partitionKey, ...(range ? { '#sk': sortKey } : {}) },
      ExpressionAttributeValues: values,
      // Reading the index backwards gives "latest first" pages without reading what precedes them.
      ...(descending ? { ScanIndexForward: false } : {}),
    }, limit);
  }

  /** event-index: gsi1pk = USERNAME#{lower} AND gsi1sk = USER. 1 round trip. */
  async userExists(username: string): Promise<boolean> {
    return (await findUserByName(this.client, this.tableName, username)) !== null;
  }

  /**
   * Base table GetItem APIKEY#sha256 / APIKEY, strongly consistent so that a
   * revocation wins on the very next request. 1 round trip (1 RCU).
   */
  async getApiKey(keyHash: string): Promise<ApiKeyItem | null> {
    const out = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.apiKey(keyHash), ConsistentRead: true }));
    return (out.Item as ApiKeyItem | undefined) ?? null;
  }

  /**
   * Follows LastEvaluatedKey: one round trip per 1 MB of matching items, and
   * stops as soon as `max` items are in hand.
   */
  private async queryAll<T>(input: QueryCommandInput, max = Number.POSITIVE_INFINITY): Promise<T[]> {
    const items: T[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const remaining = max - items.length;
      const out = await this.client.send(
        new QueryCommand({
          ...input,
          ExclusiveStartKey: startKey,
          ...(Number.isFinite(remaining) ? { Limit: remaining } : {}),
        }),
      );
      items.push(...((out.Items ?? []) as T[]));
      startKey = out.LastEvaluatedKey;
    } while (startKey && items.length < max);
    return items;
  }
}
