/**
 * The loader: reads a dataset file, validates it against the contract, and
 * only if every record is valid writes the writer's items. Used by
 * `npm run data:load`, by `npm start` and by the tests.
 */
import { readFile } from 'node:fs/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { validateDataset, type Dataset } from '../lambdas/core/dataset.js';
import { systemClock, type Clock } from '../lambdas/core/clock.js';
import { batchWriteAll, type BatchWriteOptions } from '../lambdas/store/table/batch-write.js';
import { BULK_APPEND, FeedWriter, groupByShard, loadedMembers, memberKey } from '../lambdas/store/feeds/feed.js';
import { TableIO } from '../lambdas/store/table/table-io.js';
import { datasetToItems, type WriteSummary } from '../lambdas/store/changes/writer.js';

export class DatasetError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: ${problems.length} problem(s) in the dataset; nothing was written`);
    this.name = 'DatasetError';
  }
}

/** Reads and validates; throws DatasetError naming every offending record. */
export async function readDataset(file: string): Promise<{ dataset: Dataset; warnings: string[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new DatasetError(file, [`cannot read file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new DatasetError(file, [`invalid JSON: ${(error as Error).message}`]);
  }
  const result = validateDataset(json);
  if (!result.ok) throw new DatasetError(file, result.problems);
  return { dataset: result.dataset, warnings: result.warnings };
}

/**
 * Writes a dataset's items, then its changes feeds as a change writes them:
 * every shown member joins its scope's member list, then is appended after
 * the last position of its head shard (one append of a few members of one
 * shard at a time, the tail flushed into chunks as it grows), the scopes
 * and their shards at once. So a load never
 * numbers an entry at or below an existing one, whatever the table's feeds
 * hold (`data:load` refuses a table with a history anyway), never lists an
 * entry before its item is written, and a consumer reading a feed during the
 * load meets its entries in order. A load that dies part-way is run again:
 * an entry twice only says "look again".
 */
export async function writeDataset(
  client: DynamoDBDocumentClient,
  tableName: string,
  dataset: Dataset,
  opts?: BatchWriteOptions & { clock?: Clock },
): Promise<WriteSummary & { retries: number }> {
  const { items, summary } = datasetToItems(dataset);
  const feeds = loadedMembers(items as unknown as Record<string, unknown>[]);
  const members = [...feeds].flatMap(([scope, ids]) => ids.map((id) => ({ ...memberKey(scope, id), type: 'FEED_MEMBER', gen: 0 })));
  // The events' guest shard records before anything in those shards (lambdas/store/changes/shard-record.ts): a load
  // that dies part-way leaves no item in a shard its event's record does not mark, for a walk that runs before the
  // load is run again.
  const records = await batchWriteAll(client, tableName, items.filter((i) => i.type === 'GUEST_SHARDS'), opts);
  const rest = await batchWriteAll(client, tableName, items.filter((i) => i.type !== 'GUEST_SHARDS'), opts);
  const written = { retries: records.retries + rest.retries };
  const joined = await batchWriteAll(client, tableName, members, opts);
  const writer = new FeedWriter(new TableIO(client, tableName), opts?.clock ?? systemClock);
  const { heads, chunks } = await appendByScope(writer, feeds, opts?.concurrency ?? 8);
  // Every item the load wrote: the dataset's, the member lists', each head shard appended to and the chunks its flushes wrote.
  return { ...summary, items: summary.items + members.length + heads + chunks, retries: written.retries + joined.retries };
}

/**
 * Bulk appends of each scope's members (appends of BULK_APPEND, each one
 * head shard's: groupByShard), `concurrency` scopes at once and one scope by
 * one appender: a scope's heads and chunks are one partition, and a bulk
 * append with its flush bills about 12 write units, so one appender (three
 * calls an append, 10 ms each) keeps a partition near 400 a second, where
 * eight on one scope put it past 3,000 (docs/data-model.md, "Partitions
 * under a load"). The loader's and a resync's feed entries both go this way.
 */
export async function appendByScope(writer: FeedWriter, members: ReadonlyMap<string, readonly string[]>, concurrency: number): Promise<{ heads: number; chunks: number }> {
  const scopes = [...members].map(([scope, ids]) => [scope, [...groupByShard(ids)].map(([, some]) => some)] as const);
  let heads = 0;
  let chunks = 0;
  const worker = async () => {
    for (let next = scopes.shift(); next; next = scopes.shift()) {
      const [scope, logs] = next;
      for (const ids of logs) {
        heads++;
        for (let i = 0; i < ids.length; i += BULK_APPEND) chunks += await writer.append(scope, ids.slice(i, i + BULK_APPEND));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return { heads, chunks };
}

export function formatSummary(s: WriteSummary): string {
  return [
    `users: ${s.users}`,
    `events: ${s.events.public + s.events.hidden} (${s.events.public} public, ${s.events.hidden} hidden)`,
    `rsvps: ${s.rsvps.linked + s.rsvps.anonymous} (${s.rsvps.linked} linked, ${s.rsvps.anonymous} anonymous and not stored)`,
    `profile entries: ${s.profileEntries}`,
    `api keys: ${s.apiKeys} (stored as SHA-256 hashes)`,
    `items written: ${s.items}`,
  ].join('\n');
}
