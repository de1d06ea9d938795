/**
 * Counts the DynamoDB calls a client makes, and when each is answered: the
 * data-model tests and the benchmark hold the access-pattern table (calls and
 * round trips) to it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Told of each call as it is sent; a function it answers is called when the call's answer (or error) is back. */
export type CallListener = (commandName: string) => void | (() => void);

export function onDynamoCall(client: DynamoDBDocumentClient, listener: CallListener): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const done = listener(String(context.commandName ?? 'unknown'));
      try {
        return await next(args);
      } finally {
        if (done) done();
      }
    },
    { step: 'initialize', name: 'countDynamoCalls' },
  );
}

/** When a call was sent and answered, in a count of events shared by the calls measured together. */
export interface CallSpan {
  start: number;
  end: number;
}

/**
 * Round trips: the longest chain of calls each sent after the previous one
 * was answered. Calls sent together (Promise.all) are one round trip.
 */
export function roundTrips(spans: readonly CallSpan[]): number {
  const depth: number[] = [];
  spans.forEach((s, i) => {
    depth[i] = 1 + Math.max(0, ...spans.slice(0, i).flatMap((p, j) => (p.end < s.start ? [depth[j]!] : [])));
  });
  return Math.max(0, ...depth);
}

/** The base-table key of an item a call writes. */
export interface WrittenKey {
  pk: string;
  sk: string;
}

type KeyLike = Record<string, unknown> | undefined;

/**
 * The items a write call writes (PutItem, UpdateItem, DeleteItem, and each
 * request of a BatchWriteItem or TransactWriteItems), by their base-table
 * keys; a read writes none. For a measure of where a change's writes land
 * (docs/performance.md, "Freshness under load").
 */
export function writtenKeys(commandName: string, input: unknown): WrittenKey[] {
  const key = (k: KeyLike): WrittenKey[] => (k && k.pk !== undefined ? [{ pk: String(k.pk), sk: String(k.sk) }] : []);
  const i = input as { Item?: KeyLike; Key?: KeyLike; RequestItems?: Record<string, { PutRequest?: { Item: KeyLike }; DeleteRequest?: { Key: KeyLike } }[]>; TransactItems?: { Put?: { Item: KeyLike }; Update?: { Key: KeyLike }; Delete?: { Key: KeyLike } }[] };
  switch (commandName) {
    case 'PutCommand':
    case 'PutItemCommand':
      return key(i.Item);
    case 'UpdateCommand':
    case 'UpdateItemCommand':
    case 'DeleteCommand':
    case 'DeleteItemCommand':
      return key(i.Key);
    case 'BatchWriteCommand':
    case 'BatchWriteItemCommand':
      return Object.values(i.RequestItems ?? {}).flat().flatMap((r) => key(r.PutRequest?.Item ?? r.DeleteRequest?.Key));
    case 'TransactWriteCommand':
    case 'TransactWriteItemsCommand':
      return (i.TransactItems ?? []).flatMap((t) => key(t.Put?.Item ?? t.Update?.Key ?? t.Delete?.Key));
    default:
      return [];
  }
}

/**
 * The base-table partitions a read call reads, once per item key asked
 * (GetItem, each key of a BatchGetItem) or per Query of the table (an index's
 * Query reads the index, not the table, and is left out).
 */
export function readPartitions(commandName: string, input: unknown): string[] {
  const i = input as { Key?: KeyLike; RequestItems?: Record<string, { Keys?: KeyLike[] }>; IndexName?: string; ExpressionAttributeValues?: Record<string, unknown> };
  switch (commandName) {
    case 'GetCommand':
    case 'GetItemCommand':
      return i.Key ? [String(i.Key.pk)] : [];
    case 'BatchGetCommand':
    case 'BatchGetItemCommand':
      return Object.values(i.RequestItems ?? {}).flatMap((r) => (r.Keys ?? []).map((k) => String(k?.pk)));
    case 'QueryCommand':
    case 'QueryItemCommand':
      return i.IndexName === undefined && i.ExpressionAttributeValues?.[':pk'] !== undefined ? [String(i.ExpressionAttributeValues[':pk'])] : [];
    default:
      return [];
  }
}
