/**
 * The two reads of a tally partition (tally.ts), shared by the list routes
 * (eventually consistent) and the recount (consistent): count the live entries
 * in a sort-key range, and read the summaries in one. Every page is followed.
 */
import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { PK, SK } from '../table/table.js';
import type { SortKeyRange } from '../table/tally.js';

interface Target {
  client: DynamoDBDocumentClient;
  tableName: string;
  consistent: boolean;
}

async function eachPage(t: Target, input: QueryCommandInput, onPage: (out: { Count?: number; Items?: Record<string, unknown>[] }) => void): Promise<void> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await t.client.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey, ...(t.consistent ? { ConsistentRead: true } : {}) }));
    onPage(out);
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

/** Live entries in the range: removed ones stay a day as tombstones and do not count. */
export async function countLiveEntries(t: Target, pk: string, range: SortKeyRange): Promise<number> {
  let total = 0;
  await eachPage(
    t,
    {
      TableName: t.tableName,
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
      FilterExpression: '#type = :entry',
      Select: 'COUNT',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#type': 'type' },
      ExpressionAttributeValues: { ':pk': pk, ':from': range.from, ':to': range.to, ':entry': 'TALLY_ENTRY' },
    },
    (out) => (total += out.Count ?? 0),
  );
  return total;
}

/** The summaries in the range (sort key and count), without `range.exclude`. */
export async function readSummaries(t: Target, pk: string, range: SortKeyRange): Promise<{ sk: string; count?: number }[]> {
  const items: { sk: string; count?: number }[] = [];
  await eachPage(
    t,
    {
      TableName: t.tableName,
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
      ProjectionExpression: '#sk, #count',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#count': 'count' },
      ExpressionAttributeValues: { ':pk': pk, ':from': range.from, ':to': range.to },
    },
    (out) => items.push(...((out.Items ?? []) as { sk: string; count?: number }[]).filter((i) => i.sk !== range.exclude)),
  );
  return items;
}
