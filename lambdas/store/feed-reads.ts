/**
 * The changes feeds' reads (PRODUCT P16), each one round trip. All consistent:
 * a reader must not pass a position whose entry a consistent read would have
 * shown, and the member's item it reads must be at least as new as the change
 * its entry announces (the entry is written after the item).
 */
import { BatchGetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { FeedEntry, FeedMemberState } from '../core/ports.js';
import { FEED_ENTRY_PREFIX, entrySortKey, feedPartition, isShown, memberItemKey, memberKey, positionOf } from './feed.js';
import { PK, SK } from './table.js';
import { findUserByName } from './user-lookup.js';

type Item = Record<string, unknown>;
const keyOf = (k: Item): string => `${String(k[PK])}\u0000${String(k[SK])}`;

export class FeedReads {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** pk = FEED#{scope} AND sk BETWEEN P#{after + 1} AND P#~, Limit count, consistent. */
  async feedEntries(scope: string, after: number, count: number): Promise<FeedEntry[]> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': feedPartition(scope), ':from': entrySortKey(after + 1), ':to': `${FEED_ENTRY_PREFIX}~` },
        Limit: count,
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []).map((i) => ({ position: positionOf(i), member: String(i.member) }));
  }

  /** pk = FEED#{scope} AND begins_with(sk, P#), backwards, Limit 1, consistent. */
  async feedHead(scope: string): Promise<number> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': feedPartition(scope), ':prefix': FEED_ENTRY_PREFIX },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const last = out.Items?.[0];
    return last ? positionOf(last) : 0;
  }

  /** BatchGetItem (consistent) of each member's pointer and item: 2 keys a member, 100 keys a call, all calls at once. */
  async feedStates(scope: string, members: readonly string[]): Promise<Map<string, FeedMemberState>> {
    const unique = [...new Set(members)];
    const wanted = unique.flatMap((m) => [memberKey(scope, m), memberItemKey(scope, m)]);
    const found = new Map<string, Item>();
    const batches: Item[][] = [];
    for (let i = 0; i < wanted.length; i += 100) batches.push(wanted.slice(i, i + 100));
    await Promise.all(
      batches.map(async (batch) => {
        let request: Item[] | undefined = batch;
        while (request && request.length) {
          const out = await this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: request, ConsistentRead: true } } }));
          for (const item of out.Responses?.[this.tableName] ?? []) found.set(keyOf(item), item);
          request = out.UnprocessedKeys?.[this.tableName]?.Keys as Item[] | undefined;
        }
      }),
    );
    return new Map(
      unique.map((m) => {
        const pointer = found.get(keyOf(memberKey(scope, m)))?.pos;
        const item = found.get(keyOf(memberItemKey(scope, m)));
        return [m, { pointer: typeof pointer === 'number' ? pointer : undefined, item, shown: isShown(item) }];
      }),
    );
  }

  async userIdByName(username: string): Promise<string | null> {
    return (await findUserByName(this.client, this.tableName, username))?.user_id ?? null;
  }
}
