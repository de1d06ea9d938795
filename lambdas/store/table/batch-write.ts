/**
 * Writes (and deletes) items with BatchWriteItem, 25 at a time and `concurrency` batches
 * in flight, re-sending unprocessed items with exponential backoff and jitter
 * (batch-get.ts's, as AWS advises for batch operations) until every one is
 * written or attempts run out (then it throws: nothing is silently lost).
 *
 * No partition twice in one call (spreadBatches): an item's partitions are
 * its table partition and each index partition its keys put it in, and a
 * call holds at most one item of each. With `concurrency` calls in flight
 * (8), a partition then takes at most 8 items of any 8 consecutive calls,
 * 800 write units a second at the documented 10 ms a call, whatever the
 * data: a load of one city's events, its place feeds' member lists, the
 * catalogue's (docs/data-model.md, "Partitions under a load").
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { backoffMs, realSleep } from './batch-get.js';
import { INDEXES, PK } from './indexes.js';

const BATCH = 25;
const INDEX_PARTITION_KEYS = [...new Set(Object.values(INDEXES).map((i) => i.partitionKey))];

/** The partitions a put of `item` writes: its table partition, and each index partition its keys name. */
export function partitionsOf(item: Record<string, unknown>): string[] {
  const out = [`table ${String(item[PK])}`];
  for (const key of INDEX_PARTITION_KEYS) if (item[key] !== undefined) out.push(`${key} ${String(item[key])}`);
  return out;
}

/**
 * The calls for `partitions` (one list per request), in order: each request
 * goes to the first call after every call that already holds one of its
 * partitions, among those with room, so no call holds a partition twice and
 * requests keep their order where they do not meet. Near-linear (a skip
 * pointer past full calls).
 */
export function spreadBatches(partitions: readonly (readonly string[])[], size = BATCH): number[][] {
  const calls: number[][] = [];
  const lastCall = new Map<string, number>();
  /** For a full call, a later call to try instead (path-compressed). */
  const skip: number[] = [];
  const open = (i: number): number => {
    let at = i;
    while (at < calls.length && calls[at]!.length >= size) at = skip[at] ?? at + 1;
    for (let j = i; j < calls.length && j !== at && calls[j]!.length >= size; ) {
      const next = skip[j] ?? j + 1;
      skip[j] = at;
      j = next;
    }
    return at;
  };
  partitions.forEach((parts, request) => {
    const earliest = Math.max(0, ...parts.map((p) => (lastCall.get(p) ?? -1) + 1));
    const call = open(earliest);
    if (call === calls.length) calls.push([]);
    calls[call]!.push(request);
    if (calls[call]!.length >= size) skip[call] = call + 1;
    for (const p of parts) lastCall.set(p, call);
  });
  return calls;
}

export interface BatchWriteOptions {
  maxAttempts?: number;
  /** Injected so tests do not wait for real time. */
  sleep?: (ms: number) => Promise<void>;
  baseDelayMs?: number;
  /** Batches in flight at once (default 8). */
  concurrency?: number;
  /** The jitter's draw, in [0, 1) (Math.random unless a test fixes it). */
  random?: () => number;
}

export async function batchWriteAll(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: ReadonlyArray<object>,
  opts: BatchWriteOptions = {},
  /** Keys to delete, in the same batches. */
  deletes: ReadonlyArray<Record<string, unknown>> = [],
): Promise<{ written: number; retries: number }> {
  type Request = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };
  const requests: Request[] = [
    ...items.map((Item) => ({ PutRequest: { Item: Item as Record<string, unknown> } })),
    ...deletes.map((Key) => ({ DeleteRequest: { Key } })),
  ];
  const maxAttempts = opts.maxAttempts ?? 8;
  const sleep = opts.sleep ?? realSleep;
  const baseDelay = opts.baseDelayMs ?? 50;
  let retries = 0;
  const batches = spreadBatches(requests.map((r) => ('PutRequest' in r ? partitionsOf(r.PutRequest.Item) : [`table ${String(r.DeleteRequest.Key[PK])}`])));
  const writeBatch = async (batch: number[]) => {
    let pending = batch.map((i) => requests[i]!);
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > maxAttempts) {
        throw new Error(`batch write: ${pending.length} item(s) still unprocessed after ${maxAttempts} attempts`);
      }
      if (attempt > 1) {
        retries++;
        await sleep(backoffMs(attempt, baseDelay, opts.random));
      }
      const out = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
      pending = (out.UnprocessedItems?.[tableName] ?? []) as typeof pending;
    }
  };
  // In order: the calls in flight at once are consecutive ones, which spreadBatches kept apart.
  let next = 0;
  const worker = async () => {
    for (let batch = batches[next++]; batch !== undefined; batch = batches[next++]) await writeBatch(batch);
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 8) }, worker));
  return { written: requests.length, retries };
}
