/**
 * Live users, by username or by id. A username (case-insensitive) is found
 * on event-index, gsi1pk = USERNAME#{lower}, one Query: the API's "no such
 * user" check, which gives the user's id (findUserIdsByName). Usernames
 * change and are reused: two users may briefly share one while their renames
 * arrive out of order, so what must name exactly one
 * user (keys: PRODUCT P3) goes by id (one GetItem), and a tool that accepts a
 * username (the operator CLI) asks for every live user holding it.
 */
import { GetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { UserItem } from './items.js';
import { INDEXES, PK, indexKeys, keys } from './table.js';

/** A user item's partition, `USER#{userId}` (keys.user). */
const USER_PARTITION_PREFIX = keys.user('').pk;

/** A user the source has and has not deleted (a tombstone keeps its id and version, not the user). */
const isLive = (u: UserItem | undefined): u is UserItem => u !== undefined && !u.deleted && u.user !== undefined;

/**
 * The ids of every live user holding the username, lowest first (more than
 * one only while renames settle). The index copies no user attributes
 * (event-index copies what the event and guest reads use: indexes.ts); an
 * entry's table key names the user, and only a live user's item carries
 * index keys (derive.ts userItem; a deletion writes its tombstone without
 * them: applier.ts), so every entry is a live user.
 */
export async function findUserIdsByName(client: DynamoDBDocumentClient, tableName: string, username: string): Promise<string[]> {
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
  return (out.Items ?? [])
    .map((entry) => String(entry[PK]))
    .filter((pk) => pk.startsWith(USER_PARTITION_PREFIX))
    .map((pk) => pk.slice(USER_PARTITION_PREFIX.length))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A live user's id by username; while two share it, the lowest (enough for "does this user exist"). */
export async function findUserIdByName(client: DynamoDBDocumentClient, tableName: string, username: string): Promise<string | null> {
  return (await findUserIdsByName(client, tableName, username))[0] ?? null;
}

/** The user item with this id as stored, tombstone or live, read consistently; undefined when the store never had the id. */
export async function userItemById(client: DynamoDBDocumentClient, tableName: string, userId: string): Promise<UserItem | undefined> {
  const out = await client.send(new GetCommand({ TableName: tableName, Key: keys.user(userId), ConsistentRead: true }));
  return out.Item as UserItem | undefined;
}

/** The live user with this id, read consistently (a key is made only for a user the store has now). */
export async function findUserById(client: DynamoDBDocumentClient, tableName: string, userId: string): Promise<UserItem | null> {
  const user = await userItemById(client, tableName, userId);
  return isLive(user) ? user : null;
}
