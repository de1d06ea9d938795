/**
 * Every BatchGetItem of the store goes through here: items by key, 100 keys
 * a call (DynamoDB's limit), all calls at once. DynamoDB answers a throttled
 * partition (or a response past 16 MB) with the keys it did not read in
 * `UnprocessedKeys`; they are sent again after an exponential backoff with
 * jitter, as AWS advises for batch operations
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html#Programming.Errors.BatchOperations):
 * re-sent at once they would meet the same throttle, a hot loop until the
 * Lambda times out. After a bounded number of attempts the read fails with
 * UnprocessedKeysError (a throttle: throttling.ts) rather than answer with
 * items missing.
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PK, SK } from './table.js';
import { all } from './waves.js';

type Item = Record<string, unknown>;

/** DynamoDB's limit of keys per BatchGetItem. */
export const BATCH_GET_KEYS = 100;

export interface BatchGetOptions {
  /** Calls per chunk of keys, the first included (default 5). */
  maxAttempts?: number;
  /** The first backoff's ceiling; each next one doubles (default 25 ms). */
  baseDelayMs?: number;
  /** Injected so tests do not wait for real time. */
  sleep?: (ms: number) => Promise<void>;
  /** The jitter's draw, in [0, 1) (Math.random unless a test fixes it). */
  random?: () => number;
}

/** Keys a BatchGetItem still left unprocessed after every attempt: the answer would be partial, so none is given. */
export class UnprocessedKeysError extends Error {
  constructor(readonly left: number) {
    super(`BatchGetItem left ${left} key(s) unprocessed after every attempt`);
    this.name = 'UnprocessedKeysError';
  }
}

export const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The wait before attempt `attempt` (2 for the first re-send): the ceiling
 * doubles from `base`, the wait is drawn between half and all of it ("equal
 * jitter"), so calls throttled together do not come back together, and
 * each wait is at least as long as the one before.
 */
export function backoffMs(attempt: number, base: number, random: () => number = Math.random): number {
  const ceiling = base * 2 ** Math.max(0, attempt - 2);
  return Math.round(ceiling * (0.5 + Math.min(Math.max(random(), 0), 1) / 2));
}

export const itemKeyString = (k: Item): string => `${String(k[PK])}\u0000${String(k[SK])}`;

/**
 * The items at `keys` (duplicates read once: DynamoDB refuses a call that
 * names a key twice), keyed by itemKeyString; absent items are absent.
 */
export async function batchGetAll(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Item[],
  opts: BatchGetOptions & { consistent: boolean },
): Promise<Map<string, Item>> {
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 5);
  const base = opts.baseDelayMs ?? 25;
  const sleep = opts.sleep ?? realSleep;
  const unique = [...new Map(keys.map((k) => [itemKeyString(k), k])).values()];
  const chunks = Array.from({ length: Math.ceil(unique.length / BATCH_GET_KEYS) }, (_, i) => unique.slice(i * BATCH_GET_KEYS, (i + 1) * BATCH_GET_KEYS));
  const found = new Map<string, Item>();
  // `all`, not Promise.all: no chunk's calls go on behind a failed read's back.
  await all(
    chunks.map(async (chunk) => {
      let request: Item[] = chunk;
      for (let attempt = 1; request.length; attempt++) {
        if (attempt > maxAttempts) throw new UnprocessedKeysError(request.length);
        if (attempt > 1) await sleep(backoffMs(attempt, base, opts.random));
        const out = await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: request, ...(opts.consistent ? { ConsistentRead: true } : {}) } } }));
        for (const item of out.Responses?.[tableName] ?? []) found.set(itemKeyString(item), item);
        request = (out.UnprocessedKeys?.[tableName]?.Keys as Item[] | undefined) ?? [];
      }
    }),
  );
  return found;
}
