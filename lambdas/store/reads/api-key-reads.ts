/**
 * The authorizer's reads (PRODUCT P2, P3), each one strongly consistent
 * GetItem, so that a revoke or a user's deletion wins on the very next
 * request (no result cache):
 *
 * - the key's own item, by its SHA-256 hash (`APIKEY#…`);
 * - then, for a key that is not revoked, whether its user is live
 *   (`USER#{id}`, the user item the change path writes, a tombstone once the
 *   user is deleted). So a deleted user's keys answer 401 from the moment
 *   the deletion's tombstone is written, whatever happens to the close of
 *   their keys after it (a throttled invoke, a bounded close of thousands of
 *   keys: lambdas/store/keys/user-keys.ts). Only `deleted` is projected: the
 *   authorizer reads nothing of the user.
 *
 * The IAM grant is GetItem on those two partitions' prefixes only
 * (lib/route-function.ts, bindApiKeyReads).
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyItem } from '../table/items.js';
import { keys } from '../table/table.js';

export async function readApiKey(client: DynamoDBDocumentClient, tableName: string, keyHash: string): Promise<ApiKeyItem | null> {
  const out = await client.send(new GetCommand({ TableName: tableName, Key: keys.apiKey(keyHash), ConsistentRead: true }));
  return (out.Item as ApiKeyItem | undefined) ?? null;
}

/** Whether the table holds the user and has not deleted them (1 RCU: the item's size, whatever is projected). */
export async function readUserLive(client: DynamoDBDocumentClient, tableName: string, userId: string): Promise<boolean> {
  const out = await client.send(new GetCommand({ TableName: tableName, Key: keys.user(userId), ConsistentRead: true, ProjectionExpression: '#deleted, #type', ExpressionAttributeNames: { '#deleted': 'deleted', '#type': 'type' } }));
  return out.Item?.type === 'USER' && out.Item.deleted !== true;
}
