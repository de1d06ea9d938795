/**
 * The local server: dynalite in-process with the real table, the dataset
 * loaded through the loader, and the route table's own handlers behind the
 * API Gateway emulation, on one loopback port (PRODUCT P1's main-site form).
 * The key-management API has its own loopback port behind a SigV4 check
 * (key-admin-server.ts), as it has its own IAM-only API in AWS.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../lambdas/core/clock.js';
import { configSchema, type UserEventsVariant } from '../lambdas/core/config.js';
import { staticKeyring } from '../lambdas/core/feed-cursor.js';
import { SCOPES, type Dataset } from '../lambdas/core/dataset.js';
import { createDeps, type AuthorizerHandler, type Deps, type HandlerModule, type HttpHandler } from '../lambdas/http/deps.js';
import { silentLogger, type Logger } from '../lambdas/http/logger.js';
import { AUTHORIZER_HANDLER, SURFACES, routes } from '../lambdas/routes.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { DynamoRepository } from '../lambdas/store/reads/repository.js';
import type { WriteSummary } from '../lambdas/store/changes/writer.js';
import { randomBase62 } from '../lambdas/key-admin/random.js';
import { LOCAL_TABLE, ensureTable, startDynalite } from './dynalite.js';

export { LOCAL_TABLE };
import { createGateway } from './gateway.js';
import { onDynamoCall, type CallListener } from './instrument.js';
import { CLOCK_PATH, MovableClock } from './clock-control.js';
import { readDataset, writeDataset } from './loader.js';
import { demoWeeks, shiftDataset } from './demo-dates.js';
import { LocalDailyQuota } from './quota.js';
import { DAILY_QUOTA } from '../lambdas/core/rate-limit.js';
import { serveAsset, widgetAssets } from './widget.js';
import { DOCS_PATH, docsAssets } from './docs-page.js';
import { DEFAULT_IMAGES, serveImage } from './default-images.js';
import { eventPageId, renderEventPage, serveEventPage } from './event-page.js';
import { deferred, servingWhenReady, type RequestListener } from './http-server.js';
import { parseRequestTarget } from './request-target.js';
import { KeyManager } from '../lambdas/key-admin/key-manager.js';
import { buildKeyAdmin } from '../lambdas/key-admin/handler.js';
import { noMetrics } from '../lambdas/http/metrics.js';
import { startKeyAdminServer } from './key-admin-server.js';
import { DeliveryState } from '../lambdas/store/webhooks/delivery-state.js';
import { localSecretBox } from '../lambdas/store/webhooks/secret-box.js';
import { WebhookManager } from '../lambdas/key-admin/webhook-manager.js';
import { startLocalWebhooks, type LocalWebhooks } from './webhooks.js';
import { localOutbound, type LocalGuardOptions } from './webhook-outbound.js';
import { FeedCache } from '../lambdas/delivery/feed-cache.js';
import { webhookAudit } from '../lambdas/key-admin/webhook-audit.js';


export interface LocalServerOptions {
  dataFile: string;
  port?: number;
  /** The store's loopback port (default 0: a free port the system picks, new at each start). */
  storePort?: number;
  /**
   * A running loopback store to serve from instead of an embedded dynalite of
   * its own (tests of a route on both stores, DynamoDB Local among them); the
   * server makes its table there and leaves the store running at close.
   */
  storeEndpoint?: string;
  /** Requests per key per UTC day the local quota allows (default: AWS's, DAILY_QUOTA). */
  dailyQuota?: number;
  /** The key-management API's own port (default: a free one). */
  keyAdminPort?: number;
  userEventsVariant?: UserEventsVariant;
  serviceName?: string;
  /** Default: http://localhost:{port} */
  siteUrl?: string;
  /** Embed Cache-Control max-age in seconds (default 60). */
  embedCacheMaxAgeSeconds?: number;
  /**
   * 'follow-clock': the data is the demo's, its dates moved by whole weeks to the clock's week at start
   * (demo-dates.ts; `npm start` on data/demo.json). Default 'fixed': the file's dates as written.
   */
  demoDates?: 'fixed' | 'follow-clock';
  /** The data's base clock (default: real time); the server runs it `clockOffsetDays` ahead, movable at CLOCK_PATH. */
  clock?: Clock;
  clockOffsetDays?: number;
  logger?: Logger;
  onResponse?: Parameters<typeof createGateway>[0]['onResponse'];
  /** Sees every DynamoDB call the handlers and the authorizer make. */
  onDynamoCall?: CallListener;
  /**
   * The changes feeds' cursor key (default: 32 random bytes, new at each start: a restart starts a fresh
   * store, so no earlier cursor could be followed anyway). Tests that craft cursors pass their own.
   */
  cursorKey?: Uint8Array;
  /**
   * Lets webhooks deliver to receivers on this machine (http:// or https:// at 127.0.0.1 and ::1, any port):
   * `npm start -- --allow-loopback-webhooks` and tests only. Without it they are refused like any private address.
   */
  allowLoopbackWebhooks?: boolean;
  /**
   * Tests: the outbound guard's resolver (a host that resolves to a private address, or moves to one after its
   * create) and its deadline (default P18's 10 s). The guard itself is always the one that sends and checks.
   */
  webhookGuard?: LocalGuardOptions;
}

export interface LocalServer {
  url: string;
  publicBaseUrl: string;
  embedBaseUrl: string;
  /** The demo host page using the embed widget. */
  widgetDemoUrl: string;
  /** The API reference (Redoc over the OpenAPI documents). */
  docsUrl: string;
  /** The key-management API (SigV4-signed requests only): http://127.0.0.1:{keyAdminPort}/admin/v1 */
  keyAdminUrl: string;
  storeEndpoint: string;
  tableName: string;
  /** A key that works on every Public route; from the dataset or made for this run. */
  demoKey: { key: string; source: 'dataset' | 'generated' };
  summary: WriteSummary;
  warnings: string[];
  /** Whole weeks the demo's dates were moved by (demoDates 'follow-clock'; 0 otherwise). */
  demoWeeksMoved: number;
  /** A public event and its host from the loaded data, for ready-to-run examples. */
  sample: { username: string; eventId: string } | null;
  /** The webhooks' delivery (PRODUCT P18): `settled()` waits for what is due now. */
  webhooks: LocalWebhooks;
  close(): Promise<void>;
}

async function loadModule(file: string): Promise<HandlerModule> {
  const mod = (await import(`../lambdas/handlers/${file}.js`)) as Partial<HandlerModule>;
  if (typeof mod.build !== 'function') throw new Error(`lambdas/handlers/${file}.ts does not export build()`);
  return mod as HandlerModule;
}

/**
 * A key that works on every Public route: the dataset's first such key, or,
 * when it has none, one made for this run and added to the data, so the writer
 * stores it like any other (listable and revocable with `npm run keys`).
 */
export function withDemoKey(dataset: Dataset): { dataset: Dataset; demoKey: LocalServer['demoKey'] } {
  const existing = dataset.api_keys?.find((k) => !k.revoked && SCOPES.every((s) => (k.scopes ?? SCOPES).includes(s)));
  if (existing) return { dataset, demoKey: { key: existing.key, source: 'dataset' } };
  const key = `pk_local_${randomBase62(40)}`;
  return {
    dataset: { ...dataset, api_keys: [...(dataset.api_keys ?? []), { key, user_id: dataset.users[0]?.id ?? 'usr_local', name: 'Local demo key' }] },
    demoKey: { key, source: 'generated' },
  };
}

function sampleOf(dataset: Dataset): LocalServer['sample'] {
  const event = dataset.events.find((e) => e.status === 'published' && e.visibility === 'public');
  const host = event && dataset.users.find((u) => u.id === event.creator_id);
  return event && host ? { username: host.username, eventId: event.id } : null;
}

export async function startLocalServer(opts: LocalServerOptions): Promise<LocalServer> {
  // Validate before anything starts: a bad dataset fails fast and writes nothing.
  const loaded = await readDataset(opts.dataFile);
  // The clock the data's dates follow: the server's own at start (its offset included), as the movable clock begins.
  const startedAt = new Date((opts.clock ?? systemClock)().getTime() + (opts.clockOffsetDays ?? 0) * 86_400_000);
  const demoWeeksMoved = opts.demoDates === 'follow-clock' ? demoWeeks(startedAt) : 0;
  const { dataset, demoKey } = withDemoKey(shiftDataset(loaded.dataset, demoWeeksMoved));
  const warnings = loaded.warnings;

  // The store's writes wake the webhooks of the feeds they move, as the table's stream does in AWS (local/webhooks.ts).
  let webhooks: LocalWebhooks | undefined;
  const store = opts.storeEndpoint === undefined ? await startDynalite(opts.storePort ?? 0, (keys) => webhooks?.onWrite(keys)) : { endpoint: opts.storeEndpoint, close: async () => {} };
  const client = createDocumentClient({ endpoint: store.endpoint });
  let http: Server | undefined;
  let keyAdmin: Awaited<ReturnType<typeof startKeyAdminServer>> | undefined;
  // The key-management function's own client, like its own Lambda's: outside onDynamoCall, which counts the API's calls.
  const adminClient = createDocumentClient({ endpoint: store.endpoint });
  try {
    await ensureTable(client, LOCAL_TABLE);
    const summary = await writeDataset(client, LOCAL_TABLE, dataset);

    // The handler is attached before the port opens: a request that arrives
    // while the rest starts up waits for it and is answered, never left hanging.
    const app = deferred<RequestListener>();
    http = servingWhenReady(app.promise);
    await new Promise<void>((resolve, reject) => {
      http!.once('error', reject);
      http!.listen(opts.port ?? 3000, '127.0.0.1', () => resolve());
    });
    const { port } = http.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}`;

    const config = configSchema.parse({
      tableName: LOCAL_TABLE,
      serviceName: opts.serviceName ?? 'events',
      siteUrl: opts.siteUrl ?? `http://localhost:${port}`,
      userEventsVariant: opts.userEventsVariant ?? 'typed',
      embedCacheMaxAgeSeconds: opts.embedCacheMaxAgeSeconds,
      dynamoEndpoint: store.endpoint,
    });
    if (opts.onDynamoCall) onDynamoCall(client, opts.onDynamoCall);
    const repository = new DynamoRepository(client, LOCAL_TABLE);
    const logger = opts.logger ?? silentLogger;
    const movable = new MovableClock(opts.clock ?? systemClock, opts.clockOffsetDays ?? 0);
    const cursorKeys = staticKeyring(opts.cursorKey ?? randomBytes(32));
    const deps: Deps = createDeps(config, { reader: repository, search: repository, keys: repository, feeds: repository, cursorKeys, clock: movable.clock, logger });

    const handlers = new Map<string, HttpHandler>();
    for (const route of routes) handlers.set(route.id, (await loadModule(route.handler)).build(deps) as HttpHandler);
    const authorizer = (await loadModule(AUTHORIZER_HANDLER)).build(deps) as AuthorizerHandler;

    // The quota is API Gateway's in AWS, not a Lambda's read: its own client, outside onDynamoCall.
    const quotaClient = createDocumentClient({ endpoint: store.endpoint });
    const dailyQuota = opts.dailyQuota ?? DAILY_QUOTA;
    const quota = new LocalDailyQuota(quotaClient, LOCAL_TABLE, dailyQuota);
    const clock = deps.clock;
    const gateway = createGateway({ handlers, authorizer, logger, onResponse: opts.onResponse, quota: (keyId) => quota.consume(keyId, clock()), dailyQuota });
    const manager = new KeyManager(adminClient, LOCAL_TABLE, { clock });
    // The delivery function's own reads and writes, on a client of their own (outside onDynamoCall, like the key manager's).
    const webhookRepository = new DynamoRepository(adminClient, LOCAL_TABLE);
    const secrets = localSecretBox();
    const outbound = localOutbound({ allowLoopback: opts.allowLoopbackWebhooks ?? false }, opts.webhookGuard);
    webhooks = startLocalWebhooks(
      // One feed cache for the server's deliveries, as a delivery container keeps one (no interval: nothing here to spare).
      { state: new DeliveryState(adminClient, LOCAL_TABLE), feeds: new FeedCache(webhookRepository, { refreshIntervalMs: 0 }), events: webhookRepository, keyring: cursorKeys, secrets, post: outbound.post, siteUrl: config.siteUrl, clock, logger, metrics: noMetrics },
      { onError: (error) => logger.error('Webhook delivery failed', { error: String(error) }) },
    );
    const liveWebhooks = webhooks;
    const webhookManager = new WebhookManager({
      client: adminClient,
      tableName: LOCAL_TABLE,
      keys: manager.store,
      feeds: webhookRepository,
      events: webhookRepository,
      keyring: cursorKeys,
      secrets,
      checkUrl: outbound.checkUrl,
      nudge: (id) => liveWebhooks.nudge(id),
      siteUrl: config.siteUrl,
      // Its audit, and the key store's of the webhooks a revoke closes, are the key-management handler's (naming the caller).
      clock,
    });
    // Signatures are checked against real time, as AWS does; the data's clock (pinned in tests) is only the key manager's.
    keyAdmin = await startKeyAdminServer({ port: opts.keyAdminPort ?? 0, handler: buildKeyAdmin({ manager, webhooks: webhookManager, logger, metrics: noMetrics }), clock: systemClock });
    const assets = new Map([...widgetAssets(), ...docsAssets()]);
    // The one request listener (see http-server.ts): static assets (widget,
    // /docs pages, default images), the stand-in event pages the events' `url`
    // points at (event-page.ts) and the movable clock here, everything
    // else, the /api/ext/v1 redirect included, through the gateway.
    app.resolve((req, res) => {
      const path = parseRequestTarget(req.url ?? '/').pathname;
      const asset = req.method === 'GET' ? assets.get(path) : undefined;
      const image = req.method === 'GET' || req.method === 'HEAD' ? DEFAULT_IMAGES.get(path) : undefined;
      const eventPage = req.method === 'GET' || req.method === 'HEAD' ? eventPageId(path) : undefined;
      if (path === CLOCK_PATH) void movable.serve(req, res);
      else if (asset) serveAsset(res, asset);
      else if (image) serveImage(res, image);
      else if (eventPage) void renderEventPage(repository, eventPage, clock(), config.siteUrl).then((page) => serveEventPage(res, page, req.method === 'HEAD'));
      else void gateway(req, res);
    });

    const server = http;
    const admin = keyAdmin;
    return {
      url,
      publicBaseUrl: `${url}${SURFACES.public}`,
      embedBaseUrl: `${url}${SURFACES.embed}`,
      widgetDemoUrl: `${url}/embed/demo.html`,
      docsUrl: `${url}${DOCS_PATH}`,
      keyAdminUrl: admin.url,
      storeEndpoint: store.endpoint,
      tableName: LOCAL_TABLE,
      demoKey,
      summary,
      warnings,
      demoWeeksMoved,
      sample: sampleOf(dataset),
      webhooks: liveWebhooks,
      close: async () => {
        await liveWebhooks.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await admin.close();
        client.destroy();
        quotaClient.destroy();
        adminClient.destroy();
        await store.close();
      },
    };
  } catch (error) {
    await webhooks?.close();
    http?.closeAllConnections();
    http?.close();
    await keyAdmin?.close();
    client.destroy();
    adminClient.destroy();
    await store.close();
    throw error;
  }
}
