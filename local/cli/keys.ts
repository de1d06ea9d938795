/**
 * `npm run keys -- create --user USERNAME --name NAME [--scopes events:read,guests:read]`
 * `npm run keys -- list --user USERNAME`
 * `npm run keys -- revoke --user USERNAME KEY_ID`
 *
 * Each takes `--endpoint URL` (a local server's store, as `npm start` prints
 * it; the table defaults to the local one) or the AWS settings `--table NAME`
 * and `--usage-plan-id ID` (the stack's outputs), region and credentials from
 * the environment. `create` prints the key once; nothing else ever prints a
 * key or its hash.
 */
// First: silences the AWS SDK's Node-version notice before any client exists (see the module).
import '../sdk-node-warning.js';
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { createDocumentClient } from '../../lambdas/store/client.js';
import { LOCAL_TABLE } from '../dynalite.js';
import { fail } from './fail.js';
import { KeyManagementError, KeyManager, type KeyInfo } from '../../lambdas/key-admin/key-manager.js';
import { ApiGatewayPlanKeys } from '../../lambdas/key-admin/usage-plan.js';

const USAGE = `Usage:
  npm run keys -- create --user USERNAME --name NAME [--scopes events:read,guests:read] (--endpoint URL | --table NAME --usage-plan-id ID)
  npm run keys -- list --user USERNAME (--endpoint URL | --table NAME)
  npm run keys -- revoke --user USERNAME KEY_ID (--endpoint URL | --table NAME --usage-plan-id ID)`;

const COLUMNS = { keyId: 24, state: 32, scopes: 24, created: 24 } as const;

/** The header row of `list`, over the columns `describe` fills. */
const HEADER = `${'KEY ID'.padEnd(COLUMNS.keyId)}  ${'STATE'.padEnd(COLUMNS.state)}  ${'SCOPES'.padEnd(COLUMNS.scopes)}  ${'CREATED'.padEnd(COLUMNS.created)}  NAME`;

function describe(k: KeyInfo): string {
  const state = k.revoked ? `revoked ${k.revokedAt ?? ''}`.trim() : 'active';
  return `${k.keyId.padEnd(COLUMNS.keyId)}  ${state.padEnd(COLUMNS.state)}  ${k.scopes.join(',').padEnd(COLUMNS.scopes)}  ${(k.createdAt ?? '(seeded)').padEnd(COLUMNS.created)}  ${JSON.stringify(k.name)}`;
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        user: { type: 'string' },
        name: { type: 'string' },
        scopes: { type: 'string' },
        endpoint: { type: 'string' },
        table: { type: 'string' },
        'usage-plan-id': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    fail(`keys: ${(error as Error).message}\n${USAGE}`, 2);
  }
  const { values, positionals } = parsed;
  const [command, arg] = positionals;
  if (values.help || !command) return void process.stdout.write(`${USAGE}\n`);
  if (!values.endpoint && !values.table) fail(`keys: give --endpoint (local store) or --table (AWS)\n${USAGE}`, 2);
  const aws = !values.endpoint;
  if (aws && command !== 'list' && !values['usage-plan-id']) fail('keys: --usage-plan-id is required in AWS (the stack output UsagePlanId)', 2);

  const client = createDocumentClient({ endpoint: values.endpoint });
  const manager = new KeyManager(client, values.table ?? LOCAL_TABLE, {
    planKeys: aws && values['usage-plan-id'] ? new ApiGatewayPlanKeys(new APIGatewayClient({}), values['usage-plan-id']) : undefined,
  });
  try {
    switch (command) {
      case 'create': {
        // Only a missing option is a usage error; an empty one is the key manager's to refuse (exit 1, clear message).
        if (values.user === undefined || values.name === undefined) fail(`keys: create needs --user and --name\n${USAGE}`, 2);
        const { key, info } = await manager.create({ username: values.user, name: values.name, scopes: values.scopes?.split(',').map((s) => s.trim()) });
        process.stdout.write(`Created ${info.keyId} for ${values.user} (${info.scopes.join(', ')}).\nKey (shown once, store it now):\n${key}\n`);
        break;
      }
      case 'list': {
        if (values.user === undefined) fail(`keys: list needs --user\n${USAGE}`, 2);
        const list = await manager.listAll(values.user);
        process.stdout.write(list.length ? `${HEADER}\n${list.map(describe).join('\n')}\n` : `No keys for ${values.user}.\n`);
        break;
      }
      case 'revoke': {
        if (values.user === undefined || !arg) fail(`keys: revoke needs --user and a KEY_ID\n${USAGE}`, 2);
        const info = await manager.revoke(values.user, arg);
        process.stdout.write(`Revoked ${info.keyId} of ${values.user} at ${info.revokedAt}; requests with it are refused from now on.\n`);
        break;
      }
      default:
        fail(`keys: unknown command "${command}"\n${USAGE}`, 2);
    }
  } catch (error) {
    if (error instanceof KeyManagementError) fail(`keys: ${error.message}`, 1);
    throw error;
  } finally {
    client.destroy();
  }
}

main().catch((error: unknown) => fail(`keys: ${(error as Error).message}`, 1));
