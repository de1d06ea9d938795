/**
 * `npm run data:rederive -- [--endpoint URL] [--table NAME] [--dry-run]`
 *
 * Derives every item again from the sources the table holds, with the code
 * deployed now (local/rederive.ts), and rewrites only what differs: after a
 * deployment that changes a derivation's rules (the place fold, the country
 * table, the time-zone database: `npm run places:tz`), so that events
 * written before it are indexed by the new rules too. Prints what was (or,
 * with --dry-run, would be) changed. Without --endpoint the AWS SDK's usual
 * region and credentials are used and --table is required. Run it with the
 * ingest paused, like `data:load --replace` (docs/operations.md).
 */
// First: silences the AWS SDK's Node-version notice before any client exists (see the module).
import '../sdk-node-warning.js';
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { TZ_VERSION } from '../../lambdas/core/tz-database.js';
import { LOCAL_TABLE } from '../dynalite.js';
import { fail } from './fail.js';
import { datasetFromSources } from '../rederive.js';
import { executeResync, formatPlan, planResync, scanTable } from '../resync.js';

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ options: { endpoint: { type: 'string' }, table: { type: 'string' }, 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  } catch (error) {
    fail(`data:rederive: ${(error as Error).message}`, 2);
  }
  const { values } = parsed;
  const usage = 'Usage: npm run data:rederive -- [--endpoint URL] [--table NAME] [--dry-run]';
  if (values.help) return void process.stdout.write(`${usage}\n`);
  if (!values.endpoint && !values.table) fail('data:rederive: --table is required without --endpoint (the deployed table name is a stack output)', 2);
  const tableName = values.table ?? LOCAL_TABLE;
  const client = createDocumentClient({ endpoint: values.endpoint });
  try {
    const items = await scanTable(client, tableName);
    const plan = planResync(items, datasetFromSources(items));
    const dryRun = values['dry-run'] === true;
    if (!dryRun) await executeResync(client, tableName, plan);
    process.stdout.write(`${dryRun ? 'Dry run (nothing written): would derive' : 'Derived'} ${tableName} again from its own sources (time zones: IANA ${TZ_VERSION})\n${formatPlan(plan)}\n`);
  } finally {
    client.destroy();
  }
}

main().catch((error: unknown) => fail(`data:rederive: ${(error as Error).message}`, 1));
