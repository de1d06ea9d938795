/**
 * The loader: reads a dataset file, validates it against the contract, and
 * only if every record is valid writes the writer's items. Used by
 * `npm run data:load`, by `npm start` and by the tests.
 */
import { readFile } from 'node:fs/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { validateDataset, type Dataset } from '../lambdas/core/dataset.js';
import { BatchGetCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { systemClock, type Clock } from '../lambdas/core/clock.js';
import { batchWriteAll, type BatchWriteOptions } from '../lambdas/store/batch-write.js';
import { FEED_HEAD, FEED_MEMBER_PREFIX, FeedWriter, feedPartition, headKey, loadedFeedItems, loadedScopes } from '../lambdas/store/feed.js';
import { TableIO } from '../lambdas/store/table-io.js';
import { PK, SK } from '../lambdas/store/table.js';
import { datasetToItems, type WriteSummary } from '../lambdas/store/writer.js';

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
 * Writes a dataset's items, then its changes feeds: each scope's members and
 * entries from position 1, and its head last (a reader meets no head before
 * its entries). A scope whose feed exists already (a table that held
 * entities before: `data:load` refuses it, this is the defence in depth) gets
 * its members appended after its last position instead, as changes do, so no
 * position is ever written twice under a consumer's cursor.
 */
export async function writeDataset(
  client: DynamoDBDocumentClient,
  tableName: string,
  dataset: Dataset,
  opts?: BatchWriteOptions & { clock?: Clock },
): Promise<WriteSummary & { retries: number }> {
  const { items, summary } = datasetToItems(dataset);
  const clock = opts?.clock ?? systemClock;
  const feedItems = loadedFeedItems(items as unknown as Record<string, unknown>[], clock());
  const existing = await existingFeeds(client, tableName, loadedScopes(feedItems));
  const fresh = feedItems.filter((i) => !existing.has(scopeOf(i)));
  const [heads, rest] = [fresh.filter((i) => i[SK] === FEED_HEAD), fresh.filter((i) => i[SK] !== FEED_HEAD)];
  const first = await batchWriteAll(client, tableName, [...items, ...rest], opts);
  const second = await batchWriteAll(client, tableName, heads, opts);
  if (existing.size) await appendToExisting(client, tableName, feedItems.filter((i) => existing.has(scopeOf(i))), clock);
  return { ...summary, items: summary.items + feedItems.length, retries: first.retries + second.retries };
}

const scopeOf = (item: Record<string, unknown>): string => String(item[PK]).slice(feedPartition('').length);

/** The scopes among these whose feed has a head already (consistent BatchGetItem, 100 a call). */
async function existingFeeds(client: DynamoDBDocumentClient, tableName: string, scopes: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < scopes.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = scopes.slice(i, i + 100).map(headKey);
    while (keys && keys.length) {
      const out: BatchGetCommandOutput = await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } } }));
      for (const head of out.Responses?.[tableName] ?? []) found.add(scopeOf(head));
      keys = out.UnprocessedKeys?.[tableName]?.Keys;
    }
  }
  return found;
}

/** A loaded scope's members joined and appended to its existing feed, in order, a few at a time (as changes append). */
async function appendToExisting(client: DynamoDBDocumentClient, tableName: string, feedItems: Record<string, unknown>[], clock: Clock): Promise<void> {
  const writer = new FeedWriter(new TableIO(client, tableName), clock);
  const byScope = new Map<string, string[]>();
  for (const item of feedItems) {
    if (!String(item[SK]).startsWith(FEED_MEMBER_PREFIX)) continue;
    const member = String(item[SK]).slice(FEED_MEMBER_PREFIX.length);
    byScope.set(scopeOf(item), [...(byScope.get(scopeOf(item)) ?? []), member]);
  }
  for (const [scope, members] of byScope) {
    for (const member of members) await writer.join(scope, member, 0);
    for (let i = 0; i < members.length; i += 8) await writer.append(scope, members.slice(i, i + 8));
  }
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
