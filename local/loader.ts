/**
 * The loader: reads a dataset file, validates it against the contract, and
 * only if every record is valid writes the writer's items. Used by
 * `npm run data:load`, by `npm start` and by the tests.
 */
import { readFile } from 'node:fs/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { validateDataset, type Dataset } from '../lambdas/core/dataset.js';
import { batchWriteAll, type BatchWriteOptions } from '../lambdas/store/batch-write.js';
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

export async function writeDataset(
  client: DynamoDBDocumentClient,
  tableName: string,
  dataset: Dataset,
  opts?: BatchWriteOptions,
): Promise<WriteSummary & { retries: number }> {
  const { items, summary } = datasetToItems(dataset);
  const { retries } = await batchWriteAll(client, tableName, items, opts);
  return { ...summary, retries };
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
