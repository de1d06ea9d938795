/**
 * `npm run keys -- webhooks …`: a key's webhooks for operators (PRODUCT P18),
 * by user id and key id, through the key-management API and so through the
 * same webhook manager the web product's requests reach: the secret is made,
 * sealed and shown once by it (only the key manager and the delivery can
 * read a sealed secret), a backfill or a resume wakes the webhook's
 * deliveries there, and every change is on that API's audit trail naming
 * the caller (the operator's IAM identity in AWS). Unlike a key, a webhook
 * cannot be made from the table alone: its secret's key, its cursor key and
 * its wake-ups live with the functions.
 *
 * `--key-admin-url URL`: the stack output KeyAdminApiUrl (signed with the
 * AWS SDK's default credentials, which the API's `keyAdminCallers` must
 * name: docs/deploy.md), or the `Key admin:` URL `npm start` prints (signed
 * with the documented local pair). The region is read from an execute-api
 * URL, else `--region` or AWS_REGION.
 */
import { parseArgs } from 'node:util';
import { KeyAdminClient, KeyAdminError, type CreateWebhookInput, type WebhookInfo, type WebhookScope } from '../../keys/admin-client.js';
import { LOCAL_KEY_ADMIN_PRINCIPAL } from '../sigv4-check.js';
import { fail } from './fail.js';

export const WEBHOOK_USAGE = `  npm run keys -- webhooks create --user-id USER_ID --key-id KEY_ID --url URL --scope catalogue|host|place|guests
                 [--host-id USER_ID] [--event-id EVENT_ID] [--city CITY] [--country COUNTRY] [--backfill | --start-cursor CURSOR]
                 [--idempotency-key KEY] --key-admin-url URL [--region REGION]
  npm run keys -- webhooks list --user-id USER_ID --key-id KEY_ID --key-admin-url URL [--region REGION]
  npm run keys -- webhooks (get|delete|rotate-secret|resume) WEBHOOK_ID --user-id USER_ID --key-id KEY_ID --key-admin-url URL [--region REGION]`;

const usage = (why: string): never => fail(`keys webhooks: ${why}\nUsage:\n${WEBHOOK_USAGE}`, 2);

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The API's client: the local pair for a local server's loopback port, else the SDK's default chain, in the URL's region. */
export function adminFor(url: string, region: string | undefined): KeyAdminClient {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return usage(`--key-admin-url is not a URL: ${url}`);
  }
  const local = LOOPBACK.has(parsed.hostname);
  const fromHost = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$/.exec(parsed.hostname)?.[1];
  const signingRegion = region ?? fromHost ?? process.env.AWS_REGION ?? (local ? 'eu-west-1' : undefined);
  if (!signingRegion) return usage('give --region (or AWS_REGION): the stack\'s region, which the URL does not name');
  return new KeyAdminClient({ baseUrl: url, region: signingRegion, ...(local ? { credentials: LOCAL_KEY_ADMIN_PRINCIPAL } : {}) });
}

function scopeOf(values: Record<string, string | boolean | undefined>): WebhookScope {
  const s = (name: string) => values[name] as string | undefined;
  switch (s('scope')) {
    case 'catalogue':
      return { type: 'catalogue' };
    case 'host':
      if (!s('host-id')) return usage('--scope host needs --host-id USER_ID (the host, by user id)');
      return { type: 'host', userId: s('host-id')! };
    case 'guests':
      if (!s('event-id')) return usage('--scope guests needs --event-id EVENT_ID');
      return { type: 'guests', eventId: s('event-id')! };
    case 'place':
      // Neither is the API's to refuse (400 naming scope.city), as it refuses the web product's.
      return { type: 'place', ...(s('city') !== undefined ? { city: s('city')! } : {}), ...(s('country') !== undefined ? { country: s('country')! } : {}) };
    default:
      return usage('--scope is one of catalogue, host, place, guests');
  }
}

const COLUMNS = { id: 23, state: 30, scope: 28 } as const;
const HEADER = `${'WEBHOOK ID'.padEnd(COLUMNS.id)}  ${'STATE'.padEnd(COLUMNS.state)}  ${'SCOPE'.padEnd(COLUMNS.scope)}  URL`;

export function describeScope(scope: WebhookScope): string {
  switch (scope.type) {
    case 'catalogue':
      return 'catalogue';
    case 'host':
      return `host ${scope.userId}`;
    case 'guests':
      return `guests of ${scope.eventId}`;
    case 'place':
      return `place ${[scope.city, scope.country].filter((p) => p !== undefined).join(', ')}`;
  }
}

function stateOf(w: WebhookInfo): string {
  if (w.state === 'retrying') return `retrying at ${w.retryAt}`;
  if (w.state === 'disabled') return `disabled (${w.disabledReason})`;
  return 'active';
}

const failure = (w: WebhookInfo) => (w.lastFailure ? `${w.lastFailure.status ?? w.lastFailure.errorClass} at ${w.lastFailure.at}` : 'none');

function details(w: WebhookInfo): string {
  return [
    `Webhook ${w.webhookId} of key ${w.keyId}`,
    `  state:         ${stateOf(w)}${w.disabledAt ? ` since ${w.disabledAt}` : ''}`,
    `  scope:         ${describeScope(w.scope)}`,
    `  url:           ${w.url}`,
    `  created:       ${w.createdAt}`,
    `  last success:  ${w.lastSuccessAt ?? 'none yet'}`,
    `  last failure:  ${failure(w)}`,
    ...(w.previousSecretValidUntil ? [`  previous secret signs too until ${w.previousSecretValidUntil}`] : []),
  ].join('\n');
}

export async function webhookCommand(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        'user-id': { type: 'string' },
        'key-id': { type: 'string' },
        url: { type: 'string' },
        scope: { type: 'string' },
        'host-id': { type: 'string' },
        'event-id': { type: 'string' },
        city: { type: 'string' },
        country: { type: 'string' },
        backfill: { type: 'boolean' },
        'start-cursor': { type: 'string' },
        'idempotency-key': { type: 'string' },
        'key-admin-url': { type: 'string' },
        region: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    return usage((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, webhookId] = positionals;
  if (values.help || !command) return void process.stdout.write(`Usage:\n${WEBHOOK_USAGE}\n`);
  const userId = values['user-id'];
  const keyId = values['key-id'];
  if (!userId || !keyId) return usage(`${command} needs --user-id and --key-id (the key's owner and the key, by id)`);
  if (!values['key-admin-url']) return usage('give --key-admin-url: the stack output KeyAdminApiUrl, or the "Key admin:" URL npm start prints');
  const needsId = ['get', 'delete', 'rotate-secret', 'resume'];
  if (needsId.includes(command) && !webhookId) return usage(`${command} needs a WEBHOOK_ID`);
  const admin = adminFor(values['key-admin-url'], values.region);
  const out = (text: string): void => void process.stdout.write(`${text}\n`);
  try {
    switch (command) {
      case 'create': {
        if (!values.url || !values.scope) return usage('create needs --url and --scope');
        const input: CreateWebhookInput = {
          url: values.url,
          scope: scopeOf(values),
          ...(values.backfill ? { backfill: true } : {}),
          ...(values['start-cursor'] !== undefined ? { start_cursor: values['start-cursor'] } : {}),
          ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] } : {}),
        };
        const made = await admin.createWebhook(userId, keyId, input);
        if (made.replayed) return out(`Webhook ${made.webhookId} was made by this --idempotency-key already; its secret is shown only once (rotate-secret makes a new one).`);
        return out(`Created ${made.webhookId} on key ${keyId} of ${userId}: ${describeScope(made.scope)} to ${made.url} (${stateOf(made)}).\nSecret (shown once, store it now):\n${made.secret}`);
      }
      case 'list': {
        const hooks = await admin.listWebhooks(userId, keyId);
        if (!hooks.length) return out(`No webhooks on key ${keyId} of ${userId}.`);
        return out([HEADER, ...hooks.map((w) => `${w.webhookId.padEnd(COLUMNS.id)}  ${stateOf(w).padEnd(COLUMNS.state)}  ${describeScope(w.scope).padEnd(COLUMNS.scope)}  ${w.url}`)].join('\n'));
      }
      case 'get':
        return out(details(await admin.getWebhook(userId, keyId, webhookId!)));
      case 'delete':
        await admin.deleteWebhook(userId, keyId, webhookId!);
        return out(`Deleted ${webhookId}: no delivery of it starts from now on.`);
      case 'rotate-secret': {
        const rotated = await admin.rotateWebhookSecret(userId, keyId, webhookId!);
        return out(`Rotated the secret of ${webhookId}; deliveries carry the previous secret's signature too until ${rotated.previousSecretValidUntil}.\nSecret (shown once, store it now):\n${rotated.secret}`);
      }
      case 'resume': {
        const resumed = await admin.resumeWebhook(userId, keyId, webhookId!);
        return out(`Resumed ${webhookId} from where it stopped (${stateOf(resumed)}).`);
      }
      default:
        return usage(`unknown command "webhooks ${command}"`);
    }
  } catch (error) {
    if (error instanceof KeyAdminError) fail(`keys webhooks: ${error.status}${error.code ? ` ${error.code}` : ''}${error.field ? ` (${error.field})` : ''}: ${error.message}`, 1);
    throw error;
  }
}
