/**
 * Every Lambda as it runs in AWS: each handler's exported `handler` (not
 * `build`), configured from the environment the stack sets, with the real
 * Powertools Logger and Metrics writing to stdout, against dynalite. All of
 * that output is captured, then:
 *
 * - no line holds an API key, a key's hash, an e-mail or a phone number, with
 *   DEBUG on and POWERTOOLS_LOGGER_LOG_EVENT asking for the events to be
 *   logged (they carry the key): every route of the route table (found, and
 *   not found where it has a path parameter), the old-prefix redirect, the
 *   authorizer (every outcome, both key carriers) and the ingest (change
 *   records carrying e-mails and phones, good and bad);
 * - every log line has Powertools' context: request id, cold start, function
 *   name, service, and API Gateway's request id as correlation id;
 * - every EMF document is valid (namespace, dimension sets naming present
 *   string members, metric definitions naming present numbers) and uses only
 *   the bounded dimensions, with the counts the requests imply.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent, Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { hashApiKey } from '../../lambdas/core/api-key.js';
import type { AuthorizerHandler, HandlerModule, HttpHandler } from '../../lambdas/http/deps.js';
import { AUTHORIZER_OUTCOMES, CHANGE_RESULTS, STATUS_CLASSES } from '../../lambdas/http/metrics.js';
import { LEGACY_PREFIX } from '../../lambdas/core/legacy-prefix.js';
import { LEGACY_REDIRECT_ROUTE_ID } from '../../lambdas/handlers/legacy-redirect.js';
import { AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER, resourcePath, routes, type RouteDefinition } from '../../lambdas/routes.js';
import { sqsEvent } from '../support/events.js';
import { KEYS, demoDataset } from '../support/fixtures.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { startSecretsStub, type SecretsStub } from '../support/secrets-stub.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const NAMESPACE = 'PublicEvents/test';
const SECRET_MAIL = 'secret.person@example.com';
const SECRET_PHONE = '+1-555-0199';

let store: TestStore;
const savedEnv = { ...process.env };
const output: string[] = [];
const restore: Array<() => void> = [];

/** Everything written to stdout and stderr while `fn` runs. */
async function captured<T>(fn: () => Promise<T>): Promise<T> {
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write;
    // Console instances made by Powertools hold the stream object and call its write method, so replacing it captures them.
    stream.write = ((chunk: string | Uint8Array) => {
      output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write;
    restore.push(() => void (stream.write = original));
  }
  try {
    return await fn();
  } finally {
    for (const undo of restore.splice(0)) undo();
  }
}

let secrets: SecretsStub;

/** SQS's stand-in: the ingest sets a waiting record's visibility (its retry) there, not on the network. */
let sqs: Server;
let sqsUrl: string;

beforeAll(async () => {
  sqs = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => sqs.listen(0, '127.0.0.1', resolve));
  sqsUrl = `http://127.0.0.1:${(sqs.address() as AddressInfo).port}`;
  store = await startTestStore(demoDataset(), 'telemetry');
  // The feed functions read their cursor key from Secrets Manager, as in AWS.
  secrets = await startSecretsStub('telemetry-cursor-key');
  Object.assign(process.env, {
    CURSOR_SECRET_ARN: secrets.arn,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
    TABLE_NAME: store.tableName,
    SITE_URL: 'https://events.example.com',
    DYNAMODB_ENDPOINT: store.endpoint,
    // The ingest builds its client the way it does in AWS, with no endpoint: the SDK's own variable points it at dynalite.
    AWS_ENDPOINT_URL_DYNAMODB: store.endpoint,
    // The queue: a waiting record's retry sets its visibility there (no record of this test stops for time, so nothing is sent to it).
    // Its URL on the SDK's endpoint, as in AWS, where the queue's URL and the SQS endpoint of the region agree.
    INGEST_QUEUE_URL: `${sqsUrl}/123456789012/ingest`,
    AWS_ENDPOINT_URL_SQS: sqsUrl,
    // Whom a user's deletion would invoke to close their keys; no record of this test deletes a user.
    KEY_ADMIN_FUNCTION_ARN: 'arn:aws:lambda:us-east-1:123456789012:function:KeyAdmin',
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // Lambda's own: Powertools reports a cold start only for on-demand environments.
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    POWERTOOLS_SERVICE_NAME: 'public-events',
    POWERTOOLS_METRICS_NAMESPACE: NAMESPACE,
    POWERTOOLS_LOG_LEVEL: 'DEBUG',
    POWERTOOLS_LOGGER_SAMPLE_RATE: '1',
    POWERTOOLS_LOGGER_LOG_EVENT: 'true',
  });
  delete process.env.POWERTOOLS_DEV;
  delete process.env.POWERTOOLS_METRICS_DISABLED;
});

afterAll(async () => {
  process.env = savedEnv;
  await secrets?.close();
  await store?.close();
  sqs?.closeAllConnections();
  await new Promise<void>((resolve) => (sqs ? sqs.close(() => resolve()) : resolve()));
});

let invocation = 0;
function lambdaContext(functionName: string): Context {
  invocation++;
  return {
    awsRequestId: `lambda-request-${invocation}`,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 60_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

const headers = (key: string | null) =>
  key === null ? { accept: 'application/json' } : { 'x-events-api-key': key, authorization: `Bearer ${key}`, accept: 'application/json' };

function proxyEvent(route: RouteDefinition, path: Record<string, string>, query: Record<string, string> | null, requestId: string): APIGatewayProxyEvent {
  return {
    resource: resourcePath(route),
    path: resourcePath(route).replace(/\{(\w+)\}/g, (_, name: string) => path[name] ?? ''),
    httpMethod: 'GET',
    headers: headers(KEYS.both),
    multiValueHeaders: {},
    pathParameters: path,
    queryStringParameters: query,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId, authorizer: { keyId: 'key_demo', userId: 'usr_alice' } } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

const FOUND: Record<string, string> = { eventId: 'evt_jazz01', username: 'alice' };
const MISSING: Record<string, string> = { eventId: 'evt_nope', username: 'nobody-here' };
const paramsOf = (route: RouteDefinition, values: Record<string, string>) =>
  Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name!, values[name!]!]));

interface Emf {
  _aws: { Timestamp: number; CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  [key: string]: unknown;
}

const expectedCounts = new Map<string, number>();
/** API Gateway request ids of the HTTP invocations made, each answered with one `Request answered` line. */
const answeredIds: string[] = [];
/** The OpenAPI documents have no path parameter, so nothing to be "not found". */
const hasPathParameter = (route: RouteDefinition) => route.path.includes('{');
const expect1 = (key: string) => expectedCounts.set(key, (expectedCounts.get(key) ?? 0) + 1);

/** A route's first request: a page of 5, and a place where the route takes one (a place's calendar takes nothing else). */
const firstQuery = (route: (typeof routes)[number]): Record<string, string> =>
  route.id === 'embedGetPlaceFeed' ? { city: 'Austin' } : { limit: '5', ...('takesPlace' in route ? { city: 'Austin' } : {}) };

describe('Lambda telemetry (Powertools logs and EMF metrics)', () => {
  it('answers every route, the authorizer and the ingest while all output is captured', async () => {
    await captured(async () => {
      for (const route of routes) {
        const { handler } = (await import(`../../lambdas/handlers/${route.handler}.js`)) as HandlerModule<HttpHandler>;
        for (const [i, values] of (hasPathParameter(route) ? [FOUND, MISSING] : [FOUND]).entries()) {
          const requestId = `apigw-${route.id}-${i}`;
          answeredIds.push(requestId);
          const res = (await handler(proxyEvent(route, paramsOf(route, values), i === 0 ? firstQuery(route) : null, requestId), lambdaContext(route.id))) as APIGatewayProxyResult;
          if (i === 0) expect(res.statusCode).toBe(200);
          else expect([400, 404]).toContain(res.statusCode);
          expect1(`${route.id} ${String(res.statusCode)[0]}xx`);
        }
      }

      // The old prefix's redirect, outside the route table: counted under its own route id.
      const { handler: legacy } = (await import(`../../lambdas/handlers/${LEGACY_REDIRECT_HANDLER}.js`)) as HandlerModule<HttpHandler>;
      const legacyId = `apigw-${LEGACY_REDIRECT_ROUTE_ID}-0`;
      answeredIds.push(legacyId);
      const legacyEvent = {
        resource: `${LEGACY_PREFIX}/{proxy+}`,
        path: `${LEGACY_PREFIX}/events/evt_jazz01`,
        httpMethod: 'GET',
        headers: headers(KEYS.both),
        multiValueQueryStringParameters: null,
        requestContext: { requestId: legacyId, path: `/test${LEGACY_PREFIX}/events/evt_jazz01` },
      } as unknown as APIGatewayProxyEvent;
      const moved = (await legacy(legacyEvent, lambdaContext('legacy-redirect'))) as APIGatewayProxyResult;
      expect(moved.statusCode).toBe(308);
      expect1(`${LEGACY_REDIRECT_ROUTE_ID} 3xx`);

      const { handler: authorizer } = (await import(`../../lambdas/handlers/${AUTHORIZER_HANDLER}.js`)) as HandlerModule<AuthorizerHandler>;
      const guests = routes.find((r) => r.id === 'getEventGuests')!;
      const cases: Array<[string | null, string]> = [
        [KEYS.both, 'allowed'],
        [KEYS.eventsOnly, 'insufficient_scope'],
        [KEYS.revoked, 'unauthenticated'],
        ['pk_unknown_0123456789abcdefghijklmnopqrstu', 'unauthenticated'],
        [null, 'unauthenticated'],
      ];
      for (const [n, [key, outcome]] of cases.entries()) {
        const event = {
          type: 'REQUEST',
          methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:api/test/GET/x',
          resource: resourcePath(guests),
          path: '/api/public/v1/events/evt_jazz01/guests',
          httpMethod: 'GET',
          headers: headers(key),
          requestContext: { requestId: `apigw-authorizer-${n}` },
        } as unknown as APIGatewayRequestAuthorizerEvent;
        const result = await authorizer(event, lambdaContext('authorizer')).then(
          (r) => r.policyDocument.Statement[0] && 'Effect' in r.policyDocument.Statement[0] ? r.policyDocument.Statement[0].Effect : 'none',
          (e: Error) => e.message,
        );
        expect(result).toBe({ allowed: 'Allow', insufficient_scope: 'Deny', unauthenticated: 'Unauthorized' }[outcome]);
        expect1(`authorizer ${outcome}`);
      }

      const { handler: ingest } = (await import('../../lambdas/ingest/handler.js')) as { handler: (e: SQSEvent, c: Context) => Promise<SQSBatchResponse> };
      // The last record is the first one's duplicate: the batch's records run at once, so either copy may be the stale one.
      const first = JSON.stringify({ type: 'user.upserted', version: 7, occurred_at: new Date(Date.now() - 5_000).toISOString(), user: { id: 'usr_alice', username: 'alice', email: SECRET_MAIL, phone: SECRET_PHONE } });
      const bodies = [
        first,
        JSON.stringify({ type: 'rsvp.upserted', version: 3, rsvp: { event_id: 'evt_jazz01', user_id: 'usr_ghost', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z', email: SECRET_MAIL, phone: SECRET_PHONE } }),
        `{"type":"user.upserted","version":"x","user":{"email":"${SECRET_MAIL}","phone":"${SECRET_PHONE}"}}`,
        first,
      ];
      const result = await ingest(
        sqsEvent(bodies, 'msg-'),
        lambdaContext('ingest'),
      );
      expect(result.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['msg-1', 'msg-2']);
      for (const r of ['applied', 'waiting', 'invalid', 'stale']) expect1(`ingest ${r}`);
    });
  });

  it('never writes a key, a key hash, an e-mail or a phone number', () => {
    const everything = output.join('');
    expect(everything.length).toBeGreaterThan(0);
    const users = demoDataset().users;
    const secrets = [
      ...Object.values(KEYS),
      ...Object.values(KEYS).map(hashApiKey),
      'pk_unknown_0123456789abcdefghijklmnopqrstu',
      SECRET_MAIL,
      SECRET_PHONE,
      ...users.flatMap((u) => [u.email, u.phone]).filter((v): v is string => typeof v === 'string'),
    ];
    for (const secret of secrets) expect(everything).not.toContain(secret);
    // Also the part after the prefix, and the e-mail's local part, in case something re-encodes the rest.
    for (const key of Object.values(KEYS)) expect(everything).not.toContain(key.slice(key.lastIndexOf('_') + 1));
    expect(everything).not.toContain('secret.person');
  });

  const lines = () =>
    output
      .join('')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('writes only JSON lines; every log line carries the Lambda context and API Gateway request id', () => {
    // Powertools' own note when sampling turns DEBUG on is written before the invocation's context is added.
    const logs = lines().filter((l) => !('_aws' in l) && l.message !== 'Setting log level to DEBUG due to sampling rate');
    expect(logs.length).toBeGreaterThan(0);
    for (const log of logs) {
      expect(log).toMatchObject({ level: expect.stringMatching(/^(DEBUG|INFO|WARN|ERROR)$/), message: expect.any(String), service: 'public-events', cold_start: expect.any(Boolean) });
      expect(log.function_request_id).toMatch(/^lambda-request-\d+$/);
      expect(log.function_name).toEqual(expect.any(String));
    }
    const answered = logs.filter((l) => l.message === 'Request answered');
    expect(answered).toHaveLength(answeredIds.length);
    expect(answered.map((l) => l.correlation_id).sort()).toEqual([...answeredIds].sort());
    for (const log of answered) expect(String(log.correlation_id)).toMatch(new RegExp(`^apigw-${String(log.route)}-[01]$`));
    const decisions = logs.filter((l) => l.message === 'Authorizer decision');
    expect(decisions.map((l) => l.correlation_id)).toEqual(['apigw-authorizer-0', 'apigw-authorizer-1', 'apigw-authorizer-2', 'apigw-authorizer-3', 'apigw-authorizer-4']);
    expect(logs.filter((l) => l.function_name === 'ingest').map((l) => l.level)).toEqual(expect.arrayContaining(['INFO', 'WARN', 'ERROR']));
    // One execution environment: only its first invocation is a cold start.
    expect(logs.filter((l) => l.cold_start === true).map((l) => l.function_request_id)).toEqual(['lambda-request-1']);
  });

  it('emits valid EMF with a per-stage namespace, bounded dimensions and the expected counts', () => {
    const docs = lines().filter((l): l is Emf => '_aws' in l);
    expect(docs.length).toBeGreaterThan(0);
    const counts = new Map<string, number>();
    for (const doc of docs) {
      expect(typeof doc._aws.Timestamp).toBe('number');
      expect(doc._aws.CloudWatchMetrics).toHaveLength(1);
      const [directive] = doc._aws.CloudWatchMetrics;
      expect(directive!.Namespace).toBe(NAMESPACE);
      expect(directive!.Dimensions).toHaveLength(1);
      const [dims] = directive!.Dimensions;
      for (const name of dims!) expect(typeof doc[name]).toBe('string');
      expect(directive!.Metrics.length).toBeGreaterThan(0);
      for (const m of directive!.Metrics) {
        expect(['Count', 'Seconds']).toContain(m.Unit);
        expect(typeof doc[m.Name]).toBe('number');
      }
      // Only these dimension sets exist, each with a bounded value.
      const set = dims!.join(',');
      if (set === 'route,statusClass') {
        expect([...routes.map((r) => r.id), LEGACY_REDIRECT_ROUTE_ID]).toContain(doc.route);
        expect(STATUS_CLASSES).toContain(doc.statusClass);
        expect(directive!.Metrics.map((m) => m.Name)).toEqual(['Requests', 'Errors']);
        counts.set(`${String(doc.route)} ${String(doc.statusClass)}`, (counts.get(`${String(doc.route)} ${String(doc.statusClass)}`) ?? 0) + Number(doc.Requests));
      } else if (set === 'outcome') {
        expect(AUTHORIZER_OUTCOMES).toContain(doc.outcome);
        expect(directive!.Metrics.map((m) => m.Name)).toEqual(['AuthorizerDecisions']);
        counts.set(`authorizer ${String(doc.outcome)}`, (counts.get(`authorizer ${String(doc.outcome)}`) ?? 0) + 1);
      } else if (set === 'result') {
        expect(CHANGE_RESULTS).toContain(doc.result);
        counts.set(`ingest ${String(doc.result)}`, (counts.get(`ingest ${String(doc.result)}`) ?? 0) + Number(doc.Changes));
        if (doc.result === 'applied') {
          expect(doc.ChangeWrites).toBeGreaterThan(0);
          expect(doc.ChangeDerivations).toBeGreaterThan(0);
          expect(doc.ChangeLag).toBeGreaterThanOrEqual(5);
        }
        if (doc.result === 'invalid') expect(directive!.Metrics.map((m) => m.Name)).toEqual(['Changes']);
      } else {
        throw new Error(`unexpected dimension set ${set}`);
      }
    }
    expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(expectedCounts));
  });
});
