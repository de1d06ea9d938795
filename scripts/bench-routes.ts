/**
 * The bench's read side: one typical request per route over the demo data
 * (ROUTE_CASES, one per route of lambdas/routes.ts, so a new route does not
 * compile without its case), the handlers built as the functions build them,
 * and the exact figures of each request: its DynamoDB calls, round trips,
 * operations, read capacity and items returned. These are the same in every
 * run (the clock pinned, the store in process, the round trips counted in
 * waves, not timed), so docs/performance.md's route table is this output
 * (test/integration/performance-tables.test.ts holds it there).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../lambdas/core/clock.js';
import { configSchema } from '../lambdas/core/config.js';
import { validateDataset } from '../lambdas/core/dataset.js';
import { encodeCursor, everyShardAt, staticKeyring } from '../lambdas/core/feed-cursor.js';
import { createDeps, type AuthorizerHandler, type HandlerModule, type HttpHandler } from '../lambdas/http/deps.js';
import { silentLogger } from '../lambdas/http/logger.js';
import { KeyManager } from '../lambdas/key-admin/key-manager.js';
import { resourcePath, routes, type RouteId } from '../lambdas/routes.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { DynamoRepository } from '../lambdas/store/reads/repository.js';
import { roundTrips } from '../local/instrument.js';
import { LOCAL_TABLE, ensureTable, startDynalite } from '../local/dynalite.js';
import { writeDataset } from '../local/loader.js';
import { waveClient } from './bench-round-trips.js';

const ROOT = new URL('..', import.meta.url).pathname;
export const BENCH_NOW = '2026-11-21T12:00:00.000Z';

/** The bench's cursor key (the functions read theirs from the stack's secret). */
const CURSOR_KEY = Buffer.from('bench-cursor-key');
function startCursor(scope: string): string {
  return encodeCursor({ scope, mode: 'members', position: everyShardAt(1), after: '', asOf: Date.parse(BENCH_NOW) / 1000 }, CURSOR_KEY);
}

export interface RouteCase {
  path: Record<string, string>;
  query?: Record<string, string>;
}

/** One typical request per route (demo data). */
export const ROUTE_CASES: Record<RouteId, RouteCase> = {
  getEvent: { path: { eventId: 'evt_jazz01' } },
  getEventGuests: { path: { eventId: 'evt_jazz01' }, query: { status: 'all' } },
  getUserEvents: { path: { username: 'eve-series' }, query: { type: 'upcoming', limit: '10' } },
  getUserProfileEvents: { path: { username: 'alice' } },
  getUserUpcomingEvents: { path: { username: 'eve-series' } },
  getUserPastEvents: { path: { username: 'eve-series' } },
  embedGetEvent: { path: { eventId: 'evt_jazz01' } },
  embedGetUserEvents: { path: { username: 'eve-series' }, query: { limit: '10' } },
  embedGetUserFeed: { path: { username: 'eve-series' } },
  embedGetEventFeed: { path: { eventId: 'evt_jazz01' } },
  // A page of a start (from no cursor a feed answers only its position): the members and their items.
  getEventChanges: { path: {}, query: { cursor: startCursor('EVENTS') } },
  getUserEventChanges: { path: { username: 'alice' }, query: { cursor: startCursor('HOST#usr_alice') } },
  getEventGuestChanges: { path: { eventId: 'evt_jazz01' }, query: { cursor: startCursor('GUESTS#evt_jazz01') } },
  getPlaceEventChanges: { path: {}, query: { city: 'Amsterdam', country: 'NL', cursor: startCursor('PLACE#NL#amsterdam') } },
  embedGetPlaceFeed: { path: {}, query: { city: 'Amsterdam', country: 'NL' } },
  // Discovery (PRODUCT P17): a page of 10 of a city's events (scripts/bench-discovery.ts weighs pages by catalogue and city size).
  searchEvents: { path: {}, query: { city: 'Amsterdam', country: 'NL', from: '2026-11-21', to: '2027-02-20', limit: '10' } },
  embedSearchEvents: { path: {}, query: { city: 'Amsterdam', from: '2026-11-21', to: '2027-02-20', limit: '10' } },
  publicOpenApi: { path: {} },
  embedOpenApi: { path: {} },
};

export type BenchRoute = (typeof routes)[number];

export function proxyEvent(route: BenchRoute): APIGatewayProxyEvent {
  const c = ROUTE_CASES[route.id];
  return {
    resource: resourcePath(route),
    path: resourcePath(route),
    httpMethod: 'GET',
    headers: {},
    multiValueHeaders: {},
    pathParameters: c.path,
    queryStringParameters: c.query ?? null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {} as APIGatewayProxyEvent['requestContext'],
  };
}

/** The functions' dependencies over `client`, as the bench serves them (typed variant, clock pinned). */
export function benchDeps(client: DynamoDBDocumentClient) {
  const config = configSchema.parse({ tableName: LOCAL_TABLE, serviceName: 'events', siteUrl: 'https://example.org', userEventsVariant: 'typed' });
  const repository = new DynamoRepository(client, LOCAL_TABLE);
  return createDeps(config, { reader: repository, search: repository, keys: repository, feeds: repository, cursorKeys: staticKeyring(CURSOR_KEY), clock: fixedClock(BENCH_NOW), logger: silentLogger });
}

export const benchContext = { awsRequestId: 'bench' } as Context;

export async function routeHandler(route: BenchRoute, client: DynamoDBDocumentClient): Promise<HttpHandler> {
  return ((await import(`../lambdas/handlers/${route.handler}.js`)) as HandlerModule<HttpHandler>).build(benchDeps(client));
}

/** The demo data in a fresh dynalite table. */
export async function demoStore(): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const store = await startDynalite();
  const admin = createDocumentClient({ endpoint: store.endpoint });
  await ensureTable(admin, LOCAL_TABLE);
  const checked = validateDataset(JSON.parse(readFileSync(join(ROOT, 'data/demo.json'), 'utf8')));
  if (!checked.ok) throw new Error(checked.problems.join('\n'));
  await writeDataset(admin, LOCAL_TABLE, checked.dataset);
  admin.destroy();
  return { endpoint: store.endpoint, close: () => store.close() };
}

/** What an answer holds: a list's items, a feed page's changes, an iCalendar feed's events (PRODUCT P15), else 1 (an event, a document). */
export function itemsReturned(res: APIGatewayProxyResult): string {
  if (res.headers?.['content-type']?.toString().startsWith('text/calendar')) return String(res.body.split('BEGIN:VEVENT').length - 1);
  const body = JSON.parse(res.body) as { openapi?: string; data?: unknown };
  if (body.openapi) return '1 document';
  const data = body.data as { events?: unknown[]; changes?: unknown[] } | unknown[];
  if (Array.isArray(data)) return String(data.length);
  return String(data?.events?.length ?? data?.changes?.length ?? 1);
}

export interface CallRecord {
  name: string;
  capacity: number;
}

/** A call's read capacity as DynamoDB reports it (BatchGetItem answers one per table, in an array). */
export function consumedCapacity(output: unknown): number {
  const used = (output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
  return [used ?? []].flat().reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
}

/** "Query ×4 + BatchGetItem": each operation once, with its count, in the order first sent. */
export function operations(calls: readonly CallRecord[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) {
    const name = c.name.replace(/Command$/, '');
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts.size === 0 ? 'none' : [...counts].map(([name, n]) => (n === 1 ? name : `${name} ×${n}`)).join(' + ');
}

export interface ExactRoute {
  id: string;
  surface: string;
  calls: number;
  roundTrips: number;
  operations: string;
  readUnits: number;
  items: string;
}

const ROUTE_HEADER = ['| Route | Surface | DynamoDB calls | Round trips | Operations | Read capacity units | Items returned |', '|---|---|---|---|---|---|---|'];

export function exactRouteTable(rows: readonly ExactRoute[]): string {
  return [...ROUTE_HEADER, ...rows.map((r) => `| ${r.id} | ${r.surface} | ${r.calls} | ${r.roundTrips} | ${r.operations} | ${r.readUnits.toFixed(1)} | ${r.items} |`)].join('\n');
}

/**
 * Every route's typical request, and the authorizer's check of a real key,
 * on a wave client (scripts/bench-round-trips.ts): each call records its
 * operation and capacity when it is sent, so the order is the code's, not
 * the store's answers'.
 */
export async function exactRouteFigures(): Promise<ExactRoute[]> {
  const store = await demoStore();
  const { client, spans } = waveClient(store.endpoint);
  let calls: CallRecord[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const call = { name: String(context.commandName), capacity: 0 };
      calls.push(call);
      const out = await next(args);
      call.capacity = consumedCapacity(out.output);
      return out;
    },
    { step: 'serialize', name: 'benchCounter', priority: 'high' },
  );
  const measure = async <T>(run: () => Promise<T>) => {
    calls = [];
    spans.splice(0);
    const result = await run();
    return { result, calls: [...calls], roundTrips: roundTrips(spans) };
  };
  const rows: ExactRoute[] = [];
  try {
    for (const route of routes) {
      const handler = await routeHandler(route, client);
      const { result: res, calls: made, roundTrips: trips } = await measure(() => handler(proxyEvent(route), benchContext));
      if (res.statusCode !== 200) throw new Error(`${route.id}: ${res.statusCode} ${res.body}`);
      rows.push({ id: route.id, surface: route.surface, calls: made.length, roundTrips: trips, operations: operations(made), readUnits: made.reduce((n, c) => n + c.capacity, 0), items: itemsReturned(res) });
    }
    // The Public API's authorizer, with a real key in the table: what every keyed request adds.
    const { key } = await new KeyManager(client, LOCAL_TABLE, { clock: fixedClock(BENCH_NOW) }).create({ userId: 'usr_alice', name: 'bench' });
    const authorize = ((await import('../lambdas/handlers/authorizer.js')) as HandlerModule<AuthorizerHandler>).build(benchDeps(client));
    const { result: decision, calls: made, roundTrips: trips } = await measure(() => authorize(authorizerEvent(key), benchContext));
    if (decision.policyDocument.Statement[0]?.Effect !== 'Allow') throw new Error(`bench authorizer: ${JSON.stringify(decision)}`);
    rows.push({ id: 'authorizer (each keyed request)', surface: 'public', calls: made.length, roundTrips: trips, operations: operations(made), readUnits: made.reduce((n, c) => n + c.capacity, 0), items: 'a policy' });
  } finally {
    client.destroy();
    await store.close();
  }
  return rows;
}

export function authorizerEvent(key: string): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: 'arn:aws:execute-api:us-east-1:123456789012:api/production/GET/api/public/v1/events/evt_jazz01',
    resource: '/api/public/v1/events/{eventId}',
    path: '/api/public/v1/events/evt_jazz01',
    httpMethod: 'GET',
    headers: { 'x-events-api-key': key },
  } as unknown as APIGatewayRequestAuthorizerEvent;
}
