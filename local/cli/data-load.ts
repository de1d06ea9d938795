/**
 * `npm run data:load -- FILE [--endpoint URL] [--table NAME]`
 *
 * Validates FILE against the dataset contract; on any problem prints each one
 * by path and writes nothing (exit 1). Otherwise writes every item, retrying
 * unprocessed batch items, and prints counts. With --endpoint (a local server's
 * store, or any dynalite) the table is created if missing; without it the AWS
 * SDK's usual region and credentials are used and --table is required.
 */
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../../lambdas/store/client.js';
import { LOCAL_TABLE, ensureTable } from '../dynalite.js';
import { fail } from './fail.js';
import { DatasetError, formatSummary, readDataset, writeDataset } from '../loader.js';


async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: { endpoint: { type: 'string' }, table: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    fail(`data:load: ${(error as Error).message}`, 2);
  }
  const { values, positionals } = parsed;
  const usage = 'Usage: npm run data:load -- FILE [--endpoint URL] [--table NAME]';
  if (values.help) return void process.stdout.write(`${usage}\n`);
  if (positionals.length !== 1) fail(usage, 2);
  const file = positionals[0] as string;
  if (!values.endpoint && !values.table) fail('data:load: --table is required without --endpoint (the deployed table name is a stack output)', 2);
  const tableName = values.table ?? LOCAL_TABLE;

  let loaded;
  try {
    loaded = await readDataset(file);
  } catch (error) {
    if (error instanceof DatasetError) fail(`${error.message}\n${error.problems.map((p) => `  ${p}`).join('\n')}`, 1);
    throw error;
  }
  for (const w of loaded.warnings) process.stderr.write(`warning: ${w}\n`);

  const client = createDocumentClient({ endpoint: values.endpoint });
  try {
    if (values.endpoint) await ensureTable(client, tableName);
    const summary = await writeDataset(client, tableName, loaded.dataset);
    process.stdout.write(`Loaded ${file} into ${tableName}\n${formatSummary(summary)}\n`);
    if (summary.retries) process.stdout.write(`unprocessed-item retries: ${summary.retries}\n`);
  } finally {
    client.destroy();
  }
}

main().catch((error: unknown) => fail(`data:load: ${(error as Error).message}`, 1));
