/**
 * `npm run bench`: the performance figures docs/performance.md reports, measured in
 * one run against dynalite with the demo data. Figures are counts and ratios,
 * which travel between machines better than milliseconds:
 *
 * - DynamoDB round trips and read capacity per request, per route;
 * - handler time / raw DynamoDB time: each handler is timed, then the exact
 *   DynamoDB calls it made are replayed with the bare client and timed; the
 *   ratio is what validation, mapping, middy and the envelope cost on top;
 * - bundle size (minified, and gzipped) of each Lambda, bundled with esbuild
 *   as CDK will (lib/route-function.ts: the AWS SDK external, the runtime
 *   provides it; Powertools inside the bundle);
 * - cold-start init: time to import each bundle in a fresh Node process,
 *   relative to importing the DynamoDB client alone.
 *
 * With BENCH_TRACER_NODE_PATH set to a node_modules folder holding
 * @aws-lambda-powertools/tracer (installed outside this project, which does
 * not depend on it), it also bundles get-event with the Tracer added, to
 * weigh tracing against its bundle and init cost (docs/operations.md). The
 * probe bundles the Tracer like the rest of Powertools, found through a
 * node_modules link beside the probe's entry file.
 *
 * Then the round trips per change and per fan-out chunk (scripts/bench-round-trips.ts),
 * a burst of RSVPs on one event by 1 to 8 appliers (scripts/bench-burst.ts),
 * and the changes feeds' page cost by feed size (scripts/bench-feeds.ts).
 *
 * Last, the cost per million requests of every route (scripts/bench-cost.ts),
 * priced from this run's read units, round trips, times and response bytes,
 * with the authorizer timed the same way for the keyed routes.
 *
 * The exact tables (per route its calls, round trips and read capacity; per
 * function its bundle size; per webhook change and delivery their calls,
 * round trips, read and write units: scripts/bench-tables.ts) come first. `--exact`
 * measures only those (seconds); `--write` also puts them in
 * docs/performance.md between their markers.
 */
// First: silences the AWS SDK's Node-version notice before any client exists (see the module).
import '../local/sdk-node-warning.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../lambdas/core/clock.js';
import { validateDataset } from '../lambdas/core/dataset.js';
import type { AuthorizerHandler, HandlerModule } from '../lambdas/http/deps.js';
import { routes } from '../lambdas/routes.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { LOCAL_TABLE, startDynalite } from '../local/dynalite.js';
import { KeyManager } from '../lambdas/key-admin/key-manager.js';
import { bundleFunction, bundledFunctions } from './bench-bundles.js';
import { BENCH_NOW, authorizerEvent, benchContext, benchDeps, consumedCapacity, demoStore, proxyEvent, routeHandler } from './bench-routes.js';
import { exactTables, writeTables } from './bench-tables.js';
import { changeFigures } from './bench-changes.js';
import { costFigures, type MeasuredInvocation, type MeasuredRoute } from './bench-cost.js';
import { hostFigures } from './bench-hosts.js';
import { feedFigures } from './bench-feeds.js';
import { discoveryFigures } from './bench-discovery.js';
import { roundTripFigures } from './bench-round-trips.js';
import { burstFigures } from './bench-burst.js';
import { headFigures } from './bench-head.js';
import { throttledBurstFigures } from './throttle-burst.js';
import { webhookFigures } from './bench-webhooks.js';
import { partitionFigures } from './bench-partitions.js';

const ROOT = new URL('..', import.meta.url).pathname;
const ARGS = new Set(process.argv.slice(2));
for (const arg of ARGS) if (arg !== '--exact' && arg !== '--write') throw new Error(`npm run bench: unknown argument ${arg} (--exact: only the exact tables; --write: put them in docs/performance.md)`);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const WARMUP = Math.min(30, ITERATIONS);
const INIT_SAMPLES = Number(process.env.BENCH_INIT_SAMPLES ?? 7);
const NOW = BENCH_NOW;
/** Host sizes for the scaling table (BENCH_HOST_SIZES=100,1000,10000 by default; the bench test uses small ones). */
const HOST_SIZES = (process.env.BENCH_HOST_SIZES ?? '100,1000,10000').split(',').map(Number);
const HOST_ITERATIONS = Number(process.env.BENCH_HOST_ITERATIONS ?? 5);

interface Recorded {
  name: string;
  input: Record<string, unknown>;
  capacity: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

/**
 * Times two functions alternately, so drift (GC, the store's own state, the
 * other core's load) falls on both sides of the ratio alike.
 */
async function timeInterleaved(a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number, number]> {
  for (let i = 0; i < WARMUP; i++) {
    await a();
    await b();
  }
  const sa: number[] = [];
  const sb: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    for (const [fn, samples] of i % 2 ? ([[a, sa], [b, sb]] as const) : ([[b, sb], [a, sa]] as const)) {
      const t = performance.now();
      await fn();
      samples.push(performance.now() - t);
    }
  }
  return [median(sa), median(sb)];
}

async function runtimeFigures() {
  const store = await demoStore();
  const client = createDocumentClient({ endpoint: store.endpoint });
  // The replay client: same SDK, no recorder, so the ratio isolates this project's code.
  const raw = createDocumentClient({ endpoint: store.endpoint });

  // Records every call with its wire input and consumed read capacity.
  let recording = false;
  let recorded: Recorded[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      if (recording) recorded.push({ name: String(context.commandName), input: structuredClone(input), capacity: consumedCapacity(out.output) });
      return out;
    },
    { step: 'serialize', name: 'benchRecorder', priority: 'high' },
  );

  const rows: string[] = [];
  const measured: MeasuredRoute[] = [];
  const replayOf = (calls: Recorded[]) => async () => {
    for (const call of calls) {
      const input = { ...call.input };
      delete input.ReturnConsumedCapacity;
      if (call.name === 'QueryCommand') await raw.send(new QueryCommand(input as never));
      else if (call.name === 'GetItemCommand') await raw.send(new GetCommand(input as never));
      else if (call.name === 'BatchGetItemCommand') await raw.send(new BatchGetCommand(input as never));
      else throw new Error(`bench cannot replay ${call.name}`);
    }
  };
  for (const route of routes) {
    const handler = await routeHandler(route, client);
    const event = proxyEvent(route);

    recorded = [];
    recording = true;
    const res = await handler(event, benchContext);
    recording = false;
    if (res.statusCode !== 200) throw new Error(`${route.id}: ${res.statusCode} ${res.body}`);
    const calls = [...recorded];
    const capacity = calls.reduce((sum, r) => sum + r.capacity, 0);
    // What the response weighs on the wire, for the cost table: body and the handler's own headers.
    const wire = {
      id: route.id,
      surface: route.surface,
      keyed: route.auth === 'key',
      bodyBytes: Buffer.byteLength(res.body),
      headerBytes: Object.entries(res.headers ?? {}).reduce((n, [k, v]) => n + Buffer.byteLength(`${k}: ${String(v)}\r\n`), 0),
      gzipBytes: gzipSync(res.body).length,
      readUnits: capacity,
      roundTrips: calls.length,
    };
    if (calls.length === 0) {
      // The OpenAPI documents: no DynamoDB call to compare with, so no ratio; timed alone for the cost table.
      const [handlerMs] = await timeInterleaved(() => handler(event, benchContext), async () => {});
      measured.push({ ...wire, handlerMs, dynamoMs: 0 });
      rows.push(`| ${route.id} | n/a |`);
      continue;
    }
    const [handlerMs, rawMs] = await timeInterleaved(() => handler(event, benchContext), replayOf(calls));
    measured.push({ ...wire, handlerMs, dynamoMs: rawMs });
    rows.push(`| ${route.id} | ${(handlerMs / rawMs).toFixed(2)} |`);
  }

  // The Public API's authorizer, with a real key in the table: its GetItem, timed against its replay like a route.
  const { key } = await new KeyManager(client, LOCAL_TABLE, { clock: fixedClock(NOW) }).create({ userId: 'usr_alice', name: 'bench' });
  const authorize = ((await import('../lambdas/handlers/authorizer.js')) as HandlerModule<AuthorizerHandler>).build(benchDeps(client));
  const authEvent = authorizerEvent(key);
  recorded = [];
  recording = true;
  const decision = await authorize(authEvent, benchContext);
  recording = false;
  if (decision.policyDocument.Statement[0]?.Effect !== 'Allow') throw new Error(`bench authorizer: ${JSON.stringify(decision)}`);
  const authCalls = [...recorded];
  const [authMs, authRawMs] = await timeInterleaved(() => authorize(authEvent, benchContext), replayOf(authCalls));
  const authorizer: MeasuredInvocation = {
    readUnits: authCalls.reduce((sum, r) => sum + r.capacity, 0),
    roundTrips: authCalls.length,
    handlerMs: authMs,
    dynamoMs: authRawMs,
  };

  raw.destroy();
  client.destroy();
  await store.close();
  return { rows, measured, authorizer };
}

/** Each bundle's gzipped size and init ratio (its size is an exact table); the bundles were built by exactTables into outDir. */
async function bundleFigures(outDir: string) {
  const sdkOnly = join(outDir, 'sdk-only.mjs');
  writeFileSync(sdkOnly, "import '@aws-sdk/client-dynamodb';\nimport '@aws-sdk/lib-dynamodb';\n");

  const importOnce = (file: string) =>
    Number(
      execFileSync(
        process.execPath,
        ['--input-type=module', '-e', `const t = performance.now(); await import(${JSON.stringify(file)}); console.log(performance.now() - t);`],
        { cwd: ROOT, env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } },
      )
        .toString()
        .trim(),
    );
  /**
   * The bundle and the SDK-only baseline imported alternately, each in a
   * fresh process, so load from other work on the machine falls on both
   * sides of the ratio alike (a baseline timed once at the start made the
   * ratios drift between runs).
   */
  const baselineSamples: number[] = [];
  const initRatio = (file: string) => {
    const bundle: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < INIT_SAMPLES; i++) {
      base.push(importOnce(sdkOnly));
      bundle.push(importOnce(file));
    }
    baselineSamples.push(...base);
    return median(bundle) / median(base);
  };

  const built = bundledFunctions().map(({ name }) => ({ name, file: join(outDir, `${name}.mjs`) }));
  const tracerPath = process.env.BENCH_TRACER_NODE_PATH;
  if (tracerPath) {
    // The Tracer resolves through a link beside the probe (its own dependencies from
    // its real folder), everything else from this project's node_modules further up.
    const dir = join(outDir, 'tracer-probe');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'node_modules', '@aws-lambda-powertools'), { recursive: true });
    symlinkSync(join(tracerPath, '@aws-lambda-powertools', 'tracer'), join(dir, 'node_modules', '@aws-lambda-powertools', 'tracer'));
    const probe = join(dir, 'get-event-with-tracer.ts');
    // What adopting the Tracer would add: the library, one Tracer, and the DynamoDB client instrumented.
    writeFileSync(
      probe,
      [
        `export * from ${JSON.stringify(join(ROOT, 'lambdas/handlers/get-event.ts'))};`,
        "import { Tracer } from '@aws-lambda-powertools/tracer';",
        "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
        'export const tracer = new Tracer();',
        'tracer.captureAWSv3Client(new DynamoDBClient({}));',
        '',
      ].join('\n'),
    );
    const file = join(dir, 'get-event-with-tracer.mjs');
    await bundleFunction(probe, file);
    built.push({ name: 'get-event + Powertools Tracer (probe)', file });
  }

  const rows: string[] = [];
  for (const { name, file } of built) {
    const code = readFileSync(file);
    rows.push(`| ${name} | ${(code.length / 1024).toFixed(1)} | ${(gzipSync(code).length / 1024).toFixed(1)} | ${initRatio(file).toFixed(2)} |`);
  }
  return { rows, baseline: median(baselineSamples) };
}

const bundleDir = join(ROOT, 'cdk.out', 'bench-bundles');
const exact = await exactTables(bundleDir);
if (ARGS.has('--write')) writeTables(exact);
const exactReport = [
  `Exact (the same in every run of a commit; docs/performance.md holds them between its bench markers${ARGS.has('--write') ? ', rewritten now' : ''}):`,
  '',
  `Per route, its typical request over the demo data (clock ${NOW}): DynamoDB calls, round trips (calls sent together count once), read capacity as the store reports it.`,
  '',
  exact.routes,
  '',
  'Function bundles (esbuild, minified, as CDK bundles them; the AWS SDK external, Powertools bundled into every function, no layer).',
  '',
  exact.bundles,
  '',
  'Round trips per change as DynamoDB sees them (scripts/bench-round-trips.ts): the change path\'s client through a proxy that releases requests in waves; requests sent together count once. Bounds held by test/integration/change-round-trips.test.ts and, for the burst, test/integration/rsvp-burst-round-trips.test.ts.',
  '',
  exact.roundTrips,
  '',
  'Webhooks (scripts/bench-webhooks.ts): per change (the fan-out) and per delivery, for a scope of 1, 100 and 10,000 webhooks; write units billed as DynamoDB bills them.',
  '',
  exact.webhooks,
  '',
  'Webhook models (scripts/webhook-model.ts, from the figures above and its stated assumptions): a change to a healthy endpoint (p99), a 10,000-webhook scope\'s 10,000-change burst, a month of 1,000 webhooks × 1,000 deliveries a day.',
  '',
  exact['webhook-freshness'],
  '',
  exact['webhook-burst'],
  '',
  exact['webhook-cost'],
  '',
].join('\n');
if (ARGS.has('--exact')) {
  process.stdout.write(exactReport);
  process.exit(0);
}

const runtime = await runtimeFigures();
const costs = costFigures(runtime.measured, runtime.authorizer);
const bundles = await bundleFigures(bundleDir);
const demo = validateDataset(JSON.parse(readFileSync(join(ROOT, 'data/demo.json'), 'utf8')));
if (!demo.ok) throw new Error(demo.problems.join('\n'));
const changes = await changeFigures(demo.dataset);
const hosts = await hostFigures(HOST_SIZES, HOST_ITERATIONS, NOW);
const feeds = await feedFigures();
const burst = await burstFigures();
const head = await headFigures();
const discovery = await discoveryFigures();
const webhooks = await webhookFigures();
const partitions = await partitionFigures();
const throttled = await (async () => {
  const store = await startDynalite();
  try {
    return await throttledBurstFigures(store.endpoint);
  } finally {
    await store.close();
  }
})();
const trips = await (async () => {
  const store = await startDynalite();
  const admin = createDocumentClient({ endpoint: store.endpoint });
  try {
    return await roundTripFigures(store.endpoint, admin, fixedClock(NOW));
  } finally {
    admin.destroy();
    await store.close();
  }
})();
process.stdout.write(
  [
    exactReport,
    `Timed: demo data on dynalite, clock ${NOW}, ${ITERATIONS} timed requests per route (median), Node ${process.version}`,
    '',
    '| Route | Handler time / raw DynamoDB time |',
    '|---|---|',
    ...runtime.rows,
    '',
    'Lambda bundles: the AWS SDK is external (the Lambda runtime provides it, so it does not count in the sizes below);',
    'Powertools is bundled into every function (no layer), so its bytes are counted.',
    `Init = import time of the bundle / import time of the DynamoDB client alone (${bundles.baseline.toFixed(0)} ms here).`,
    '',
    '| Handler | Bundle KiB | Gzipped KiB | Init ratio |',
    '|---|---|---|---|',
    ...bundles.rows,
    '',
    'Change records (lambdas/store/changes/applier.ts): items written, write capacity and DynamoDB calls per change (demo data, in order).',
    '',
    ...changes,
    '',
    'Round trips of a fan-out (scripts/bench-round-trips.ts, as DynamoDB sees them; the other changes are in the exact part above): a fan-out adds one Query and at most 6 per chunk of 8 units (test/integration/change-round-trips.test.ts).',
    '',
    ...trips,
    '',
    'Partitions under the change path (scripts/bench-partitions.ts): each stream\'s hottest partition, in write units per change as DynamoDB bills it and at the ingest\'s 430 changes/s, against a margin of 800 WCU/s (docs/data-model.md, "Partitions under the change path").',
    '',
    ...partitions,
    '',
    'A burst of RSVPs on one event (scripts/bench-burst.ts): 1 to 8 appliers at once, a fixed latency added to every call.',
    '',
    ...burst,
    '',
    'A throttle that lasts (scripts/throttle-burst.ts): a burst while one partition is throttled for a window, then after it.',
    '',
    ...throttled,
    '',
    `Paginated lists by host size: a host with N public events, one every 12 hours (half past, half upcoming), asked for the same page of 10; handler time is the median of ${HOST_ITERATIONS}.`,
    '',
    ...hosts,
    '',
    'Changes feeds (scripts/bench-feeds.ts): appends by 1 to 16 appenders at once to one scope; a page of 100 (small events and events at the contract maxima); a start from no cursor behind removed members; a host feed and a guest feed from no cursor and with a cursor.',
    '',
    ...feeds,
    '',
    'The feed heads (scripts/bench-head.ts): appenders appending back to back to one scope of FEED_SHARDS head shards, 256 appends each, by id length; billed from the images the writes return, without reads between them.',
    '',
    ...head,
    '',
    'Discovery (scripts/bench-discovery.ts): a page of up to 100 events of one city, first and after a cursor half way through it, by catalogue and city size; every event a real item; read units as DynamoDB bills the items read.',
    '',
    ...discovery,
    '',
    'Webhooks (scripts/bench-webhooks.ts): a delivery of one change to 10,000 webhooks, and a webhook catching up on a burst.',
    '',
    ...webhooks,
    '',
    'Cost per million requests (scripts/cost-model.ts), from the figures above.',
    '',
    ...costs,
    '',
  ].join('\n'),
);
