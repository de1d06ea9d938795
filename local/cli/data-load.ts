/**
 * `npm run data:load -- FILE [--endpoint URL] [--table NAME] [--replace] [--dry-run]`
 *
 * Validates FILE against the dataset contract; on any problem prints each one
 * by path and writes nothing (exit 1). Into an empty table it writes every
 * item, retrying unprocessed batch items, and prints counts. A table that
 * holds any history (users or events, their tombstones, changes feeds) is
 * refused (exit 1, nothing written, the counts named) unless --replace is given: then the table is made to hold exactly
 * FILE's read model (resync.ts) and what was added, changed and removed is
 * printed. --dry-run prints the same and writes nothing. With --endpoint (a
 * local server's store, or any dynalite) the table is created if missing;
 * without it the AWS SDK's usual region and credentials are used and --table
 * is required (and a resync that closes a removed user's keys deletes their
 * API Gateway plan keys with the same credentials).
 */
// First: silences the AWS SDK's Node-version notice before any client exists (see the module).
import '../sdk-node-warning.js';
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { ApiGatewayPlanKeys } from '../../lambdas/key-admin/usage-plan.js';
import { operatorAudit, operatorWebhookAudit } from '../operator-audit.js';
import { LOCAL_TABLE, ensureTable } from '../dynalite.js';
import { fail } from './fail.js';
import { DatasetError, formatSummary, readDataset, writeDataset } from '../loader.js';
import { describeHistory, executeResync, formatPlan, planResync, scanTable, tableHistory } from '../resync.js';


async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        endpoint: { type: 'string' },
        table: { type: 'string' },
        replace: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    fail(`data:load: ${(error as Error).message}`, 2);
  }
  const { values, positionals } = parsed;
  const usage = 'Usage: npm run data:load -- FILE [--endpoint URL] [--table NAME] [--replace] [--dry-run]';
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
    const dryRun = values['dry-run'] === true;
    if (values.replace) {
      const plan = planResync(await scanTable(client, tableName), loaded.dataset);
      // In AWS, the keys of a user FILE removes lose their plan keys too (locally there are none).
      if (!dryRun) await executeResync(client, tableName, plan, { planKeys: values.endpoint ? undefined : new ApiGatewayPlanKeys(new APIGatewayClient({})), audit: operatorAudit('npm run data:load --replace'), webhookAudit: operatorWebhookAudit('npm run data:load --replace') });
      process.stdout.write(`${dryRun ? 'Dry run (nothing written): would replace' : 'Replaced'} the read model of ${tableName} with ${file}\n${formatPlan(plan)}\n`);
      return;
    }
    const history = describeHistory(await tableHistory(client, tableName));
    if (history) {
      fail(`data:load: ${tableName} already holds data (${history}); nothing was written. Use --replace to make it hold exactly ${file} (add --dry-run to see what would change first), or data:apply for change records.`, 1);
    }
    if (dryRun) {
      process.stdout.write(`Dry run (nothing written): would load ${file} into ${tableName}\n${formatPlan(planResync([], loaded.dataset))}\n`);
      return;
    }
    const summary = await writeDataset(client, tableName, loaded.dataset);
    process.stdout.write(`Loaded ${file} into ${tableName}\n${formatSummary(summary)}\n`);
    if (summary.retries) process.stdout.write(`unprocessed-item retries: ${summary.retries}\n`);
  } finally {
    client.destroy();
  }
}

main().catch((error: unknown) => fail(`data:load: ${(error as Error).message}`, 1));
