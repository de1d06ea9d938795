/**
 * `npm run keys -- create (--user USERNAME | --user-id USER_ID) --name NAME [--scopes events:read,guests:read]`
 * `npm run keys -- list (--user USERNAME | --user-id USER_ID)`
 * `npm run keys -- revoke (--user USERNAME | --user-id USER_ID) KEY_ID`
 *
 * A key belongs to a user id (PRODUCT P3). `--user` takes a username and
 * resolves it to the one live user holding it, or refuses: "unknown" when
 * none does, "ambiguous" when two do (while renames settle); `--user-id`
 * names the user directly.
 *
 * Each takes `--endpoint URL` (a local server's store, as `npm start` prints
 * it; the table defaults to the local one) or the AWS settings `--table NAME`
 * and `--usage-plan-id ID` (the stack's outputs), region and credentials from
 * the environment. `create` prints the key once; nothing else ever prints a
 * key or its hash. Every revoke that takes effect (a `revoke`, a stale slot
 * a `create` reclaims) writes its `Key revoked` audit line on stderr
 * (local/operator-audit.ts), and a `Webhook closed` line for each webhook of
 * the key.
 *
 * `npm run keys -- webhooks …`: a key's webhooks, through the key-management
 * API (webhook-commands.ts).
 */
// First: silences the AWS SDK's Node-version notice before any client exists (see the module).
import '../sdk-node-warning.js';
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { LOCAL_TABLE } from '../dynalite.js';
import { fail } from './fail.js';
import { KeyManagementError, KeyManager, type KeyInfo } from '../../lambdas/key-admin/key-manager.js';
import { ApiGatewayPlanKeys } from '../../lambdas/key-admin/usage-plan.js';
import { operatorAudit, operatorWebhookAudit } from '../operator-audit.js';
import { WEBHOOK_USAGE, webhookCommand } from './webhook-commands.js';

const USAGE = `Usage:
  npm run keys -- create (--user USERNAME | --user-id USER_ID) --name NAME [--scopes events:read,guests:read] (--endpoint URL | --table NAME --usage-plan-id ID)
  npm run keys -- list (--user USERNAME | --user-id USER_ID) (--endpoint URL | --table NAME)
  npm run keys -- revoke (--user USERNAME | --user-id USER_ID) KEY_ID (--endpoint URL | --table NAME --usage-plan-id ID)
${WEBHOOK_USAGE}`;

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
        'user-id': { type: 'string' },
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
    audit: operatorAudit('npm run keys'),
    webhookAudit: operatorWebhookAudit('npm run keys'),
  });
  // Only a missing option is a usage error; an empty one is the key manager's to refuse (exit 1, clear message).
  const named = values.user !== undefined || values['user-id'] !== undefined;
  if (values.user !== undefined && values['user-id'] !== undefined) fail(`keys: give --user or --user-id, not both\n${USAGE}`, 2);
  /** The user id the command is about: as given, or the one live user holding the username. */
  const userId = async (): Promise<string> => values['user-id'] ?? (await manager.resolveUsername(values.user!));
  /** How the output names the user: the username as given with the id it resolved to, or the id. */
  const who = (id: string) => (values.user !== undefined ? `${values.user} (${id})` : id);
  try {
    switch (command) {
      case 'create': {
        if (!named || values.name === undefined) fail(`keys: create needs --user (or --user-id) and --name\n${USAGE}`, 2);
        const id = await userId();
        const { key, info } = await manager.create({ userId: id, name: values.name, scopes: values.scopes?.split(',').map((s) => s.trim()) });
        process.stdout.write(`Created ${info.keyId} for ${who(id)} (${info.scopes.join(', ')}).\nKey (shown once, store it now):\n${key}\n`);
        break;
      }
      case 'list': {
        if (!named) fail(`keys: list needs --user (or --user-id)\n${USAGE}`, 2);
        const id = await userId();
        const list = await manager.listAll(id);
        process.stdout.write(list.length ? `${HEADER}\n${list.map(describe).join('\n')}\n` : `No keys for ${who(id)}.\n`);
        break;
      }
      case 'revoke': {
        if (!named || !arg) fail(`keys: revoke needs --user (or --user-id) and a KEY_ID\n${USAGE}`, 2);
        const id = await userId();
        const info = await manager.revoke(id, arg);
        process.stdout.write(`Revoked ${info.keyId} of ${who(id)} at ${info.revokedAt}; requests with it are refused from now on.\n`);
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

const run = process.argv[2] === 'webhooks' ? webhookCommand(process.argv.slice(3)) : main();
run.catch((error: unknown) => fail(`keys: ${(error as Error).message}`, 1));
