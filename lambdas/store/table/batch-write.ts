/**
 * Writes (and deletes) items with BatchWriteItem, 25 at a time and `concurrency` batches
 * in flight, re-sending unprocessed items with exponential backoff and jitter
 * (batch-get.ts's, as AWS advises for batch operations) until every one is
 * written or attempts run out (then it throws: nothing is silently lost).
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { backoffMs, realSleep } from './batch-get.js';

const BATCH = 25;

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
  const writeBatch = async (start: number) => {
    let pending = requests.slice(start, start + BATCH);
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
  const starts = Array.from({ length: Math.ceil(requests.length / BATCH) }, (_, i) => i * BATCH);
  const worker = async () => {
    for (let start = starts.shift(); start !== undefined; start = starts.shift()) await writeBatch(start);
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 8) }, worker));
  return { written: requests.length, retries };
}
