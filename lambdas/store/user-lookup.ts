/**
 * A live user by username (case-insensitive): event-index, gsi1pk =
 * USERNAME#{lower}. One Query. Used by the API's "no such user" check and by
 * the key manager. Two users may briefly share a username while their
 * renames arrive out of order; the lowest user id answers then.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { UserItem } from './items.js';
import { INDEXES, indexKeys } from './table.js';

export async function findUserByName(client: DynamoDBDocumentClient, tableName: string, username: string): Promise<UserItem | null> {
  const { name, partitionKey, sortKey } = INDEXES.event;
  const k = indexKeys.userByName(username);
  const out = await client.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: name,
      KeyConditionExpression: '#pk = :pk AND #sk = :sk',
      ExpressionAttributeNames: { '#pk': partitionKey, '#sk': sortKey },
      ExpressionAttributeValues: { ':pk': k[partitionKey], ':sk': k[sortKey] },
    }),
  );
  const users = ((out.Items ?? []) as UserItem[]).filter((u) => !u.deleted && u.user).sort((a, b) => (a.user_id < b.user_id ? -1 : 1));
  return users[0] ?? null;
}
