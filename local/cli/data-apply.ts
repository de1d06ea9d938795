/**
 * `npm run data:apply -- FILE [--endpoint URL] [--table NAME] [--concurrency N]`
 *
 * Applies a JSON Lines file of change records (one record per line, blank
 * lines ignored) as in file order (--concurrency N applies up to N lines at
 * once, each after the earlier lines it depends on: local/change-file.ts;
 * default 1), and prints how many it applied and the
 * counts: applied, stale, waiting for a reference, invalid. Each stale line
 * is named on stdout with its line number, each invalid or waiting one on
 * stderr (with its field path or reference). Exit status: 0 when every line
 * was applied or stale, 1 otherwise, 2 for bad usage (a file that cannot be
 * read included). A line refused on a throttle (a partition past its limit
 * after the SDK's retries) is applied again after the ingest's backoff (2 s,
 * doubling to 300 s), 17 times at most, and the count says how many times
 * that happened. With --endpoint (the local
 * server's `Store:` URL) the local table is used; without it the AWS SDK's
 * region and credentials, and --table (the stack's TableName output); a
 * user's deletion then also deletes their keys' API Gateway plan keys.
 */
// First: silences the AWS SDK's Node-version notice before any client exists (see the module).
import '../sdk-node-warning.js';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { ApiGatewayPlanKeys } from '../../lambdas/key-admin/usage-plan.js';
import { operatorAudit, operatorWebhookAudit } from '../operator-audit.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { createWriteClient } from '../../lambdas/store/table/client.js';
import { applyChangeFile, exitStatus, formatReport, headline } from '../change-file.js';
import { LOCAL_TABLE, ensureTable } from '../dynalite.js';
import { fail } from './fail.js';

const USAGE = 'Usage: npm run data:apply -- FILE (--endpoint URL [--table NAME] | --table NAME) [--concurrency N]';

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: { endpoint: { type: 'string' }, table: { type: 'string' }, concurrency: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    fail(`data:apply: ${(error as Error).message}\n${USAGE}`, 2);
  }
  const { values, positionals } = parsed;
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  if (positionals.length !== 1) fail(USAGE, 2);
  if (!values.endpoint && !values.table) fail('data:apply: --table is required without --endpoint (the deployed table name is a stack output)', 2);
  const concurrency = values.concurrency === undefined ? 1 : Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) fail(`data:apply: --concurrency must be a whole number from 1 to 64, not ${values.concurrency}\n${USAGE}`, 2);
  const file = positionals[0] as string;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    fail(`data:apply: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}\n${USAGE}`, 2);
  }
  const tableName = values.table ?? LOCAL_TABLE;
  const client = createWriteClient({ endpoint: values.endpoint });
  try {
    if (values.endpoint) await ensureTable(client, tableName);
    // In AWS a user's deletion also deletes their keys' plan keys (locally there are none): one client for every applier.
    const planKeys = values.endpoint ? undefined : new ApiGatewayPlanKeys(new APIGatewayClient({}));
    // A user's deletion revokes their keys and closes their webhooks: each on the record (stderr), as the key-management function's are.
    const revokeAudit = operatorAudit('npm run data:apply');
    const webhookAudit = operatorWebhookAudit('npm run data:apply');
    const report = await applyChangeFile(() => new ChangeApplier(client, tableName, { revokeAudit, webhookAudit, ...(planKeys ? { planKeys } : {}) }), text, concurrency);
    for (const p of report.problems) process.stderr.write(`${p}\n`);
    for (const line of report.staleLines) process.stdout.write(`${line}\n`);
    process.stdout.write(`${headline(report, file, tableName)}\n${formatReport(report)}\n`);
    process.exitCode = exitStatus(report);
  } finally {
    client.destroy();
  }
}

main().catch((error: unknown) => fail(`data:apply: ${(error as Error).message}`, 1));
