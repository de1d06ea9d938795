/**
 * The project fuzzes itself, below the gateway: every route's handler gets
 * hostile API Gateway proxy events, and the authorizer hostile REQUEST
 * authorizer events, over dynalite with the demo data. The maps in them are
 * JSON-parsed like API Gateway's, so names such as `__proto__` arrive as own
 * properties. Invariants as over HTTP (test/support/hostile.ts); the
 * authorizer either decides (Allow only for a route of the table) or throws
 * exactly `Unauthorized`.
 *
 * FUZZ_RUNS / FUZZ_SEED as for test/e2e/fuzz-http.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import fc from 'fast-check';
import { fixedClock } from '../../lambdas/core/clock.js';
import { configSchema, type UserEventsVariant } from '../../lambdas/core/config.js';
import { createDeps, type AuthorizerHandler, type HandlerModule, type HttpHandler } from '../../lambdas/http/deps.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { AUTHORIZER_HANDLER, resourcePath, routeForResource, routes } from '../../lambdas/routes.js';
import { authorizerEvent } from '../support/events.js';
import { KEYS, NOW, demoDataset } from '../support/fixtures.js';
import {
  FUZZ,
  asLambdaMap,
  kindOfRoute,
  decodedValue,
  fuzzParameters,
  method,
  parameterName,
  privateStrings,
  proxyHeaders,
  violations,
} from '../support/hostile.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { testKeyring } from '../support/feed-keys.js';

let store: TestStore;
const handlers = new Map<string, HttpHandler>();
let authorizer: AuthorizerHandler;
const secrets = privateStrings();
const context = { awsRequestId: 'fuzz' } as Context;

async function load(file: string): Promise<HandlerModule> {
  return (await import(`../../lambdas/handlers/${file}.js`)) as HandlerModule;
}

beforeAll(async () => {
  store = await startTestStore(demoDataset());
  for (const variant of ['typed', 'dated'] as UserEventsVariant[]) {
    const config = configSchema.parse({ tableName: store.tableName, serviceName: 'events', siteUrl: 'https://s.example', userEventsVariant: variant });
    const deps = createDeps(config, { reader: store.repository, search: store.repository, keys: store.repository, feeds: store.repository, cursorKeys: testKeyring, clock: fixedClock(NOW), logger: silentLogger });
    for (const route of routes) handlers.set(`${route.id}/${variant}`, (await load(route.handler)).build(deps) as HttpHandler);
    if (variant === 'typed') authorizer = (await load(AUTHORIZER_HANDLER)).build(deps) as AuthorizerHandler;
  }
});
afterAll(async () => store?.close());

const pairs = <T>(value: fc.Arbitrary<T>) => fc.array(fc.tuple(parameterName, value), { maxLength: 5 });

const proxyCase = fc.record({
  route: fc.constantFrom(...routes),
  variant: fc.constantFrom<UserEventsVariant>('typed', 'dated'),
  httpMethod: method,
  path: pairs(decodedValue),
  query: pairs(decodedValue),
  multiQuery: pairs(fc.array(decodedValue, { maxLength: 3 })),
  headers: proxyHeaders,
});

describe(`hostile proxy events straight into every handler (${FUZZ.runs} cases, seed ${FUZZ.seed})`, () => {
  it('never get a 5xx, always the envelope, CORS exactly on Embed routes, nothing private', async () => {
    await fc.assert(
      fc.asyncProperty(proxyCase, async (c) => {
        const resource = resourcePath(c.route);
        const headers = asLambdaMap(c.headers);
        const event: APIGatewayProxyEvent = {
          resource,
          path: resource,
          httpMethod: c.httpMethod,
          headers: headers ?? {},
          multiValueHeaders: asLambdaMap(c.headers.map(([n, v]) => [n, [v]] as const)) ?? {},
          pathParameters: asLambdaMap(c.path),
          queryStringParameters: asLambdaMap(c.query),
          multiValueQueryStringParameters: asLambdaMap(c.multiQuery),
          stageVariables: null,
          body: null,
          isBase64Encoded: false,
          requestContext: { requestId: 'fuzz', resourcePath: resource, httpMethod: c.httpMethod } as APIGatewayProxyEvent['requestContext'],
        };
        const result = await handlers.get(`${c.route.id}/${c.variant}`)!(event, context);
        const lower = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
        const problems = violations({ status: result.statusCode, headers: lower, body: result.body }, { surface: c.route.surface, kind: kindOfRoute(c.route), bodyExpected: true, secrets });
        expect(problems).toEqual([]);
      }),
      fuzzParameters(),
    );
  }, 600_000);
});

/**
 * THE rule for parameters a route does not read (PRODUCT P6, docs/design.md):
 * ignored, on every route of both surfaces, so that an answer is the same
 * with them as without (the Embed distribution's cache key and origin
 * requests carry only the parameters a route reads: docs/deploy.md). Held for
 * names no route reads and, on the routes that take no window, the window's
 * names other routes read.
 */
describe('the one rule: a query parameter a route does not read changes nothing in its answer', () => {
  const fixed = (route: (typeof routes)[number]) => (route.path.startsWith('/changes/') || route.path.endsWith('.ics') || route.path === '/events/{eventId}' ? ['from', 'to', 'since', 'order', 'status', 'type'] : []);
  const unread = fc.array(fc.tuple(fc.stringMatching(/^x_[a-z0-9_]{1,12}$/), fc.stringMatching(/^[a-zA-Z0-9 ._-]{0,20}$/)), { minLength: 1, maxLength: 4 });
  const eventOf = (route: (typeof routes)[number], query: Record<string, string>): APIGatewayProxyEvent => {
    const resource = resourcePath(route);
    const pathParameters = Object.fromEntries((resource.match(/\{(\w+)\}/g) ?? []).map((h) => [h.slice(1, -1), h === '{eventId}' ? 'evt_jazz01' : 'alice']));
    return {
      resource,
      path: resource,
      httpMethod: 'GET',
      headers: { 'x-events-api-key': KEYS.both },
      multiValueHeaders: { 'x-events-api-key': [KEYS.both] },
      pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
      queryStringParameters: Object.keys(query).length ? query : null,
      multiValueQueryStringParameters: Object.keys(query).length ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])) : null,
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: { requestId: 'rule', resourcePath: resource, httpMethod: 'GET' } as APIGatewayProxyEvent['requestContext'],
    };
  };

  it.each(routes.map((r) => [r.id, r] as const))('%s', async (_id, route) => {
    const base: Record<string, string> = 'takesPlace' in route ? { city: 'Amsterdam' } : {};
    const answer = async (query: Record<string, string>) => {
      const result = await handlers.get(`${route.id}/typed`)!(eventOf(route, query), context);
      return { status: result.statusCode, body: result.body };
    };
    const plain = await answer(base);
    expect(plain.status).toBe(200);
    for (const name of [...fixed(route), 'utm_source', 'callback', '_', 'fbclid']) expect({ name, ...(await answer({ ...base, [name]: '2027-01-01' })) }).toEqual({ name, ...plain });
    await fc.assert(
      fc.asyncProperty(unread, async (extra) => {
        expect(await answer({ ...base, ...Object.fromEntries(extra) })).toEqual(plain);
      }),
      { numRuns: 10, seed: FUZZ.seed },
    );
  });
});

describe('names that are Object.prototype members, as API Gateway hands them (own properties of JSON-parsed maps)', () => {
  const names = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'];
  const withNames = <T>(base: Record<string, T>, value: T) =>
    JSON.parse(`{${[...names.map((n) => [n, value] as const), ...Object.entries(base)].map(([n, v]) => `${JSON.stringify(n)}:${JSON.stringify(v)}`).join(',')}}`) as Record<string, T>;

  it.each(routes.map((r) => [r.id, r] as const))('%s answers 200 taking them as ordinary, unknown parameters and headers (ignored, as every unknown one)', async (_id, route) => {
    const resource = resourcePath(route);
    const takesPlace = 'takesPlace' in route;
    const path = withNames(Object.fromEntries((resource.match(/\{(\w+)\}/g) ?? []).map((h) => [h.slice(1, -1), h === '{eventId}' ? 'evt_jazz01' : 'alice'])), 'x');
    expect(Object.keys(path)).toContain('__proto__'); // an own property, not the prototype
    const event = {
      resource,
      path: resource,
      httpMethod: 'GET',
      headers: withNames({ 'x-events-api-key': KEYS.both }, '1'),
      multiValueHeaders: withNames({ 'x-events-api-key': [KEYS.both] }, ['1']),
      pathParameters: path,
      // A route that takes a place is given one (the others ignore `city`, and a place's calendar `limit`).
      queryStringParameters: withNames({ limit: '2', ...(takesPlace ? { city: 'Amsterdam' } : {}) }, '1'),
      multiValueQueryStringParameters: withNames({ limit: ['2'], ...(takesPlace ? { city: ['Amsterdam'] } : {}) }, ['1', '2']),
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: { requestId: 'proto' } as APIGatewayProxyEvent['requestContext'],
    } satisfies APIGatewayProxyEvent;
    const result = await handlers.get(`${route.id}/typed`)!(event, context);
    expect(result.statusCode).toBe(200);
    // The envelope, or what PRODUCT P15 answers instead (the document, the feed).
    const lower = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
    expect(violations({ status: result.statusCode, headers: lower, body: result.body }, { surface: route.surface, kind: kindOfRoute(route), bodyExpected: true, secrets })).toEqual([]);
    if (kindOfRoute(route) === 'envelope') expect(JSON.parse(result.body)).toMatchObject({ success: true });
  });

  it('the authorizer finds the key among them and allows', async () => {
    const resource = resourcePath(routes[0]);
    const headers = withNames({ 'x-events-api-key': KEYS.both }, 'Bearer junk');
    const result = await authorizer(
      authorizerEvent({
        resource,
        headers,
        multiValueHeaders: null,
        pathParameters: withNames({ eventId: 'evt_jazz01' }, 'x'),
        queryStringParameters: withNames({}, '1'),
        multiValueQueryStringParameters: null,
        stageVariables: null,
      }),
      context,
    );
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
  });

  it('a header value that is not a string is no key and no failure (If-None-Match included)', async () => {
    const headers = { 'x-events-api-key': null, 'if-none-match': ['"x"'] } as unknown as Record<string, string>;
    const embed = await handlers.get('embedGetEvent/typed')!(
      { resource: '', path: '', httpMethod: 'GET', headers, multiValueHeaders: {}, pathParameters: { eventId: 'evt_jazz01' }, queryStringParameters: null, multiValueQueryStringParameters: null, stageVariables: null, body: null, isBase64Encoded: false, requestContext: {} as APIGatewayProxyEvent['requestContext'] },
      context,
    );
    expect(embed.statusCode).toBe(200);
    const authorizerEvent = { type: 'REQUEST', methodArn: 'arn', resource: resourcePath(routes[0]), path: '', httpMethod: 'GET', headers, multiValueHeaders: null, pathParameters: null, queryStringParameters: null, multiValueQueryStringParameters: null, stageVariables: null, requestContext: {} } as unknown as APIGatewayRequestAuthorizerEvent;
    await expect(authorizer(authorizerEvent, context)).rejects.toEqual(new Error('Unauthorized'));
  });
});

const authorizerCase = fc.record({
  resource: fc.oneof(fc.constantFrom(...routes.map((r) => resourcePath(r))), fc.constantFrom('/api/public/v1/admin', '/', '', '__proto__', 'constructor', '/api/public/v1/{proxy+}')),
  httpMethod: method,
  headers: proxyHeaders,
  query: pairs(decodedValue),
  path: pairs(decodedValue),
});

describe(`hostile REQUEST authorizer events (${FUZZ.runs} cases, seed ${FUZZ.seed})`, () => {
  it('allow only a route of the table, deny otherwise, or throw exactly Unauthorized; never leak the key', async () => {
    await fc.assert(
      fc.asyncProperty(authorizerCase, async (c) => {
        const methodArn = `arn:aws:execute-api:eu-west-1:123456789012:abc/prod/${c.httpMethod}${c.resource}`;
        const event = authorizerEvent({
          methodArn,
          resource: c.resource,
          path: c.resource,
          httpMethod: c.httpMethod,
          headers: asLambdaMap(c.headers),
          multiValueHeaders: asLambdaMap(c.headers.map(([n, v]) => [n, [v]] as const)),
          pathParameters: asLambdaMap(c.path),
          queryStringParameters: asLambdaMap(c.query),
          multiValueQueryStringParameters: null,
          stageVariables: null,
        });
        let outcome: Awaited<ReturnType<AuthorizerHandler>>;
        try {
          outcome = await authorizer(event, context);
        } catch (error) {
          expect(error).toEqual(new Error('Unauthorized'));
          return;
        }
        const [statement] = outcome.policyDocument.Statement as { Effect: string; Resource: string }[];
        expect(['Allow', 'Deny']).toContain(statement?.Effect);
        expect(statement?.Resource).toBe(methodArn);
        if (statement?.Effect === 'Allow') expect(routeForResource(c.resource, c.httpMethod)).toBeDefined();
        for (const key of Object.values(KEYS)) expect(JSON.stringify(outcome)).not.toContain(key);
      }),
      fuzzParameters(),
    );
  }, 600_000);
});
