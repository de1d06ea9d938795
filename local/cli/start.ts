/**
 * `npm start -- [--port N] [--store-port N] [--data FILE] [--user-events-variant typed|dated]
 *                [--service-name NAME] [--site-url URL] [--embed-cache-max-age S] [--daily-quota N]
 *                [--key-admin-port N] [--clock-offset-days N] [--allow-loopback-webhooks]`
 * with env fallbacks PORT, STORE_PORT, DATA_FILE, USER_EVENTS_VARIANT, SERVICE_NAME, SITE_URL,
 * EMBED_CACHE_MAX_AGE, DAILY_QUOTA, KEY_ADMIN_PORT (the key-management API's own port; default any
 * free one, printed in the banner). Other tools start the server exactly this way: keep this interface.
 * SIGINT or SIGTERM stops it; package.json's `start` execs this process in
 * place of npm's shell, so a signal sent to `npm start` reaches it (npm
 * forwards both), and the store, in-process, goes with it.
 */
// First: silences the AWS SDK's Node-version notice before any client exists (see the module).
import '../sdk-node-warning.js';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { DAILY_QUOTA } from '../../lambdas/core/rate-limit.js';
import { apiKeyHeaderName } from '../../lambdas/core/api-key.js';
import { USER_EVENTS_VARIANTS } from '../../lambdas/core/config.js';
import { readableLogger } from '../../lambdas/http/logger.js';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from './fail.js';
import { DatasetError } from '../loader.js';
import { startLocalServer } from '../server.js';
import { describeMove } from '../demo-dates.js';

/** The demo dataset npm start serves by default, whose dates follow the clock. */
const BUNDLED_DEMO = fileURLToPath(new URL('../../data/demo.json', import.meta.url));

const portSchema = z.coerce.number({ error: 'must be a number' }).int().min(0).max(65535);

const optionsSchema = z
  .object({
    port: portSchema,
    storePort: portSchema,
    data: z.string().min(1),
    userEventsVariant: z.enum(USER_EVENTS_VARIANTS),
    serviceName: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, { error: 'lower-case letters, digits and "-"' }),
    siteUrl: z.url().optional(),
    embedCacheMaxAge: z.coerce.number({ error: 'must be a number' }).int().min(0).max(86_400),
    // At most AWS's quota: the OpenAPI documents cap X-RateLimit-Limit there, and lowering it is what trying the 429 needs.
    dailyQuota: z.coerce
      .number({ error: 'must be a number' })
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .max(DAILY_QUOTA, { error: `must be at most ${DAILY_QUOTA}, the quota in AWS` }),
    keyAdminPort: portSchema.optional(),
    /** Runs the server's clock N days ahead (or behind): to see a changes-feed cursor expire without waiting (PUT /local/clock moves it later). */
    clockOffsetDays: z.coerce.number({ error: 'must be a number' }).int().min(-3650).max(3650),
  })
  .refine((o) => o.port === 0 || o.port !== o.storePort, { path: ['storePort'], error: 'must differ from the port' });

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        'store-port': { type: 'string' },
        data: { type: 'string' },
        'user-events-variant': { type: 'string' },
        'service-name': { type: 'string' },
        'site-url': { type: 'string' },
        'embed-cache-max-age': { type: 'string' },
        'daily-quota': { type: 'string' },
        'key-admin-port': { type: 'string' },
        'clock-offset-days': { type: 'string' },
        // Webhooks to receivers on this machine (http(s)://127.0.0.1 or [::1], any port): local runs and tests only; the CDK stack never sets it.
        'allow-loopback-webhooks': { type: 'boolean' },
        // The demo's dates as written (2026's), instead of moved to this week (local/demo-dates.ts).
        'fixed-dates': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    fail(`npm start: ${(error as Error).message}`, 2);
  }
  if (values.help) {
    process.stdout.write('Usage: npm start -- [--port N] [--store-port N] [--data FILE] [--user-events-variant typed|dated] [--service-name NAME] [--site-url URL] [--embed-cache-max-age SECONDS] [--daily-quota N] [--key-admin-port N] [--clock-offset-days N] [--allow-loopback-webhooks] [--fixed-dates]\n');
    return;
  }
  const env = process.env;
  const parsed = optionsSchema.safeParse({
    port: values.port ?? env.PORT ?? 3000,
    // 0: a free port the system picks, new at each start; fix it to keep the Store: URL across restarts.
    storePort: values['store-port'] ?? env.STORE_PORT ?? 0,
    data: values.data ?? env.DATA_FILE ?? 'data/demo.json',
    userEventsVariant: values['user-events-variant'] ?? env.USER_EVENTS_VARIANT ?? 'typed',
    serviceName: values['service-name'] ?? env.SERVICE_NAME ?? 'events',
    siteUrl: values['site-url'] ?? (env.SITE_URL || undefined),
    embedCacheMaxAge: values['embed-cache-max-age'] ?? env.EMBED_CACHE_MAX_AGE ?? 60,
    dailyQuota: values['daily-quota'] ?? env.DAILY_QUOTA ?? DAILY_QUOTA,
    keyAdminPort: values['key-admin-port'] ?? (env.KEY_ADMIN_PORT || undefined),
    clockOffsetDays: values['clock-offset-days'] ?? 0,
  });
  if (!parsed.success) fail(`npm start: invalid option\n${z.prettifyError(parsed.error)}`, 2);
  const o = parsed.data;

  const server = await startLocalServer({
    dataFile: o.data,
    port: o.port,
    storePort: o.storePort,
    dailyQuota: o.dailyQuota,
    userEventsVariant: o.userEventsVariant,
    serviceName: o.serviceName,
    siteUrl: o.siteUrl,
    embedCacheMaxAgeSeconds: o.embedCacheMaxAge,
    keyAdminPort: o.keyAdminPort ?? 0,
    clockOffsetDays: o.clockOffsetDays,
    // The bundled demo's dates follow the clock, so that every example of the docs answers as shown on any day; a file of one's own keeps its dates.
    demoDates: resolve(o.data) === BUNDLED_DEMO && values['fixed-dates'] !== true ? 'follow-clock' : 'fixed',
    allowLoopbackWebhooks: values['allow-loopback-webhooks'] === true,
    // Readable lines on stderr; access lines stay on stdout (Lambda logs JSON through Powertools instead).
    logger: readableLogger(),
    onResponse: ({ method, path, status, ms }) => process.stdout.write(`${method} ${path} ${status} ${ms.toFixed(1)}ms\n`),
  }).catch((error: unknown) => {
    if (error instanceof DatasetError) fail(`${error.message}\n${error.problems.map((p) => `  ${p}`).join('\n')}`, 1);
    const { code, port } = error as NodeJS.ErrnoException & { port?: number };
    if (code === 'EADDRINUSE') {
      const flag = port === o.storePort ? '--store-port' : port !== undefined && port === o.keyAdminPort && o.keyAdminPort !== o.port ? '--key-admin-port' : '--port';
      fail(`npm start: port ${port ?? o.port} is already in use (try ${flag})`, 1);
    }
    throw error;
  });

  // Before the banner: whoever reads it may signal at once, and a signal with no listener yet kills the process.
  // Ctrl-C reaches this process twice (from the terminal and forwarded by npm):
  // the second signal must not cut the close short, so the handler stays and ignores it.
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  const s = server.summary;
  const header = apiKeyHeaderName(o.serviceName);
  for (const w of server.warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(
    [
      `Public Events API (local) — ${o.data}: ${s.users} users, ${s.events.public} public events (${s.events.hidden} hidden), ${s.rsvps.linked} guests, variant ${o.userEventsVariant}`,
      `  Public API: ${server.publicBaseUrl}`,
      `  Embed API:  ${server.embedBaseUrl}`,
      `  Widget:     ${server.widgetDemoUrl}`,
      `  API docs:   ${server.docsUrl} (OpenAPI: ${server.publicBaseUrl}/openapi.json, ${server.embedBaseUrl}/openapi.json)`,
      `  Demo key:   ${server.demoKey.key}${server.demoKey.source === 'generated' ? ' (generated for this run)' : ''}`,
      `  Store:      ${server.storeEndpoint} (dynalite, table ${server.tableName})`,
      `  Quota:      ${o.dailyQuota} requests per key per UTC day`,
      ...(resolve(o.data) === BUNDLED_DEMO ? [`  Dates:      ${values['fixed-dates'] === true ? "the demo's as written (--fixed-dates)" : `${describeMove(server.demoWeeksMoved)} (--fixed-dates keeps them as written)`}`] : []),
      `  Key admin:  ${server.keyAdminUrl} (SigV4-signed requests only: docs/managing-keys.md)`,
      '',
      'Try:',
      `  curl -H '${header}: ${server.demoKey.key}' ${server.publicBaseUrl}/users/${server.sample?.username ?? '<username>'}/events`,
      `  curl -H 'Authorization: Bearer ${server.demoKey.key}' ${server.publicBaseUrl}/events/${server.sample?.eventId ?? '<eventId>'}`,
      `  curl ${server.embedBaseUrl}/users/${server.sample?.username ?? '<username>'}/events`,
      '',
      `Keys: npm run keys -- list --user ${server.sample?.username ?? '<username>'} --endpoint ${server.storeEndpoint}`,
      `Data: npm run data:load -- <file> --endpoint ${server.storeEndpoint}`,
      '',
      'Stop: Ctrl-C (or SIGTERM to npm start)',
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => fail(`npm start: ${(error as Error).stack ?? String(error)}`, 1));
