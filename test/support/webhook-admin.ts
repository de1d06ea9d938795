/**
 * Webhooks managed as the web product manages them, for the end-to-end tests
 * of a local server: keys and webhooks made through the key-management API
 * (SigV4 with the local pair, the typed admin client), changes applied to
 * the store as `data:apply` applies them (which wakes the webhooks as the
 * table's stream does in AWS), and what the table holds of webhooks (to
 * show that a refused create stored nothing).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { KeyAdminClient, KeyAdminError, type CreatedWebhook, type CreateWebhookInput } from '../../keys/admin-client.js';
import type { Change } from '../../lambdas/core/changes.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { LOCAL_KEY_ADMIN_PRINCIPAL } from '../../local/sigv4-check.js';
import type { LocalServer } from '../../local/server.js';
import { demoDataset } from './fixtures.js';

type Scope = 'events:read' | 'guests:read';

export interface WebhookAdmin {
  admin: KeyAdminClient;
  /** A new key of `userId` (by default the next of a few demo users, in turn), made with an idempotency key of its own. */
  newKey(userId?: string, scopes?: Scope[]): Promise<{ key: string; keyId: string; userId: string }>;
  /** A create that must succeed: its answer, with the secret. */
  createHook(userId: string, keyId: string, input: CreateWebhookInput): Promise<CreatedWebhook>;
  /** The change applied (its version the next of this run's), then the webhooks' deliveries settled. */
  apply(change: Record<string, unknown>): Promise<void>;
  /** evt_jazz01 (Alice's, public) upserted with this title and the other fields given. */
  edit(title: string, more?: Record<string, unknown>): Promise<void>;
  /** Every webhook item of the table (webhooks, scope entries, a key's places), in key order, as one string. */
  webhookItems(): Promise<string>;
}

/** The refusal a request ends in (a success fails the test). */
export async function refusal(p: Promise<unknown>): Promise<KeyAdminError> {
  const outcome = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(outcome instanceof KeyAdminError)) throw new Error(`expected a refusal, got ${String(outcome)}`);
  return outcome;
}

const USERS = ['usr_alice', 'usr_carol', 'usr_dave', 'usr_eve'];

export function webhookAdmin(server: Pick<LocalServer, 'keyAdminUrl' | 'storeEndpoint' | 'tableName' | 'webhooks'>, clock: () => Date, label = 'webhook-test'): WebhookAdmin {
  const admin = new KeyAdminClient({ baseUrl: server.keyAdminUrl, region: 'eu-west-1', credentials: LOCAL_KEY_ADMIN_PRINCIPAL });
  const event = demoDataset().events.find((e) => e.id === 'evt_jazz01')!;
  let made = 0;
  let version = 1_000;
  const withStore = async <T>(use: (client: ReturnType<typeof createDocumentClient>) => Promise<T>): Promise<T> => {
    const client = createDocumentClient({ endpoint: server.storeEndpoint });
    try {
      return await use(client);
    } finally {
      client.destroy();
    }
  };
  const apply = async (change: Record<string, unknown>) => {
    await withStore((client) => new ChangeApplier(client, server.tableName, { clock }).apply({ version: ++version, ...change } as Change));
    await server.webhooks.settled();
  };
  return {
    admin,
    async newKey(userId = USERS[made % USERS.length]!, scopes) {
      const key = await admin.create({ idempotencyKey: `${label}-${String(++made).padStart(4, '0')}`, userId, name: `hooks ${made}`, ...(scopes ? { scopes } : {}) });
      if (!('key' in key)) throw new Error('no key');
      return { key: key.key, keyId: key.keyId, userId };
    },
    async createHook(userId, keyId, input) {
      const hook = await admin.createWebhook(userId, keyId, input);
      if (!('secret' in hook)) throw new Error('no secret');
      return hook;
    },
    apply,
    edit: (title, more = {}) => apply({ type: 'event.upserted', event: { ...event, title, ...more } }),
    webhookItems: () =>
      withStore(async (client) => {
        const items = (await client.send(new ScanCommand({ TableName: server.tableName }))).Items ?? [];
        return JSON.stringify(items.filter((i) => /^(WEBHOOK|WHSCOPE)#|HOOKS#/.test(`${i.pk}${i.sk}`)).sort((a, b) => `${a.pk}${a.sk}`.localeCompare(`${b.pk}${b.sk}`)));
      }),
  };
}
