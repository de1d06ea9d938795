/**
 * How the rehearsal fails, on small templates written here (no synth): a
 * function over its Timeout, over its MemorySize, or answering more than
 * Lambda's 6 MB is a function error, which API Gateway answers 502 "Internal
 * server error" ("If the function runs but returns an error, or returns a
 * response in the wrong format, API Gateway returns a 502":
 * https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html),
 * or what the stage's DEFAULT_5XX gateway response makes of it; an
 * authorization or integration type, or an intrinsic, it does not know fails
 * at start naming the resource; AWS_IAM refuses an unsigned request as API
 * Gateway does (signed requests: test/rehearsal/key-admin.test.ts); the usage
 * plan's quota and throttle are the template's.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { LambdaHost, MAX_RESPONSE_BYTES } from '../../local/rehearsal/lambda-host.js';
import { RestApiRehearsal } from '../../local/rehearsal/rest-api.js';
import { Template, type Json } from '../../local/rehearsal/template.js';

const ASSETS = mkdtempSync(join(new URL('../../cdk.out', import.meta.url).pathname, 'rehearsal-test-'));
const HANDLERS: Record<string, string> = {
  ok: `export const handler = async () => ({ statusCode: 200, body: '{"ok":true}' });`,
  // Waits, never computes: past its Timeout only in wall time (an hour: whatever the machine's load, its limit comes first).
  slow: `export const handler = () => new Promise((r) => setTimeout(() => r({ statusCode: 200, body: 'late' }), 3_600_000));`,
  // Waits 1.5 s of wall time, over its 1 s Timeout unless the machine is busy enough to stretch it.
  waits: `export const handler = () => new Promise((r) => setTimeout(() => r({ statusCode: 200, body: 'waited' }), 1500));`,
  // Computes, never waits: over its Timeout in CPU time, however busy the machine.
  burner: `export const handler = async () => { for (;;); };`,
  huge: `export const handler = async () => ({ statusCode: 200, body: 'x'.repeat(${MAX_RESPONSE_BYTES + 1024}) });`,
  hungry: `export const handler = async () => { const keep = []; for (;;) keep.push(new Array(4e6).fill(Math.random())); };`,
  malformed: `export const handler = async () => ({ body: 'no status' });`,
};

function asset(name: string): string {
  const dir = join(ASSETS, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'index.mjs'), HANDLERS[name]!);
  return dir;
}

/** One REST API with one GET method per handler name, under /{name}, each its own function. */
function template(opts: { method?: Json; usagePlan?: Json; gatewayResponses?: Json[]; functionEnv?: Json } = {}): Json {
  const resources: Record<string, Json> = {
    Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'test' } },
    Stage: { Type: 'AWS::ApiGateway::Stage', Properties: { RestApiId: { Ref: 'Api' }, StageName: 'test' } },
  };
  for (const name of Object.keys(HANDLERS)) {
    // 1 s, except for the function that must run out of memory first, however loaded the machine.
    resources[`${name}Fn`] = { Type: 'AWS::Lambda::Function', Properties: { Handler: 'index.handler', Timeout: name === 'hungry' ? 20 : 1, MemorySize: 128, Environment: { Variables: opts.functionEnv ?? {} } } };
    resources[`${name}Resource`] = { Type: 'AWS::ApiGateway::Resource', Properties: { RestApiId: { Ref: 'Api' }, ParentId: { 'Fn::GetAtt': ['Api', 'RootResourceId'] }, PathPart: name } };
    resources[`${name}Get`] = {
      Type: 'AWS::ApiGateway::Method',
      Properties: {
        RestApiId: { Ref: 'Api' },
        ResourceId: { Ref: `${name}Resource` },
        HttpMethod: 'GET',
        AuthorizationType: 'NONE',
        Integration: { Type: 'AWS_PROXY', Uri: { 'Fn::Join': ['', ['arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/', { 'Fn::GetAtt': [`${name}Fn`, 'Arn'] }, '/invocations']] } },
        ...opts.method,
      },
    };
  }
  if (opts.usagePlan) resources.Plan = { Type: 'AWS::ApiGateway::UsagePlan', Properties: { ApiStages: [{ ApiId: { Ref: 'Api' }, Stage: { Ref: 'Stage' } }], ...opts.usagePlan } };
  (opts.gatewayResponses ?? []).forEach((g, i) => (resources[`Response${i}`] = { Type: 'AWS::ApiGateway::GatewayResponse', Properties: { RestApiId: { Ref: 'Api' }, ...g } }));
  return { Resources: resources };
}

const hosts: LambdaHost[] = [];
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  // fetch keeps its connections: without cutting them the servers stayed open past the file, and jest had to force its worker out.
  await Promise.all(
    servers.map((s) => {
      s.closeAllConnections();
      return new Promise((resolve) => s.close(resolve));
    }),
  );
  rmSync(ASSETS, { recursive: true, force: true });
});

async function serve(json: Json, opts: { planKeys?: string[]; throttle?: boolean; contention?: () => number; throttleClockMs?: () => number } = {}) {
  const t = new Template(json, 'Test', { queueUrl: (id) => id });
  const functions = new Map<string, LambdaHost>();
  for (const [id] of t.ofType('AWS::Lambda::Function')) {
    const host = new LambdaHost(
      { logicalId: id, assetDir: asset(id.replace(/Fn$/, '')), handler: 'index.handler', runtime: 'nodejs24.x', timeoutSeconds: Number(t.prop(id, 'Timeout')), memoryMb: Number(t.prop(id, 'MemorySize')), environment: t.prop(id, 'Environment.Variables') },
      {},
      { contention: opts.contention },
    );
    hosts.push(host);
    functions.set(id, host);
  }
  const rest = new RestApiRehearsal({ template: t, apiId: 'Api', functions, now: () => new Date('2026-11-21T12:00:00Z'), planKeys: new Set(opts.planKeys ?? []), throttle: opts.throttle ?? true, contention: opts.contention, throttleClockMs: opts.throttleClockMs });
  const server = createServer((req, res) => void rest.handle(req, res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, { headers });
    return { status: res.status, body: await res.text(), headers: res.headers };
  };
  return { rest, call };
}

describe('function limits, as Lambda enforces them, through the gateway', () => {
  it('a function over its Timeout, over its MemorySize, over 6 MB or with a malformed answer is a 502 "Internal server error"', async () => {
    const { rest, call } = await serve(template());
    expect(await call('/ok')).toMatchObject({ status: 200, body: '{"ok":true}' });
    for (const name of ['slow', 'burner', 'hungry', 'huge', 'malformed']) {
      const { status, body } = await call(`/${name}`);
      expect({ name, status, body }).toEqual({ name, status: 502, body: '{"message":"Internal server error"}' });
    }
    expect(rest.functionErrors).toEqual([
      'slowFn: Sandbox.Timedout: Task timed out after 1.00 seconds',
      'burnerFn: Sandbox.Timedout: Task timed out after 1.00 seconds',
      expect.stringMatching(/^hungryFn: Runtime.ExitError: /),
      expect.stringMatching(/^hugeFn: Function.ResponseSizeTooLarge: Response payload size exceeded/),
      'malformedFn: malformed Lambda proxy response',
    ]);
    // The environment that timed out was replaced: the next call runs.
    expect((await call('/ok')).status).toBe(200);
  }, 30_000);

  it("a function's Timeout counts what it did, not the machine's load: its CPU time always, its wall time stretched by the contention measured", async () => {
    // The machine as measured quiet: a wait past the Timeout is timed out at the Timeout.
    const quiet = await serve(template(), { contention: () => 1 });
    expect((await quiet.call('/waits')).status).toBe(502);
    expect(quiet.rest.functionErrors).toEqual(['waitsFn: Sandbox.Timedout: Task timed out after 1.00 seconds']);
    // Ten runnable tasks per core: the same wait fits its stretched limit (a loaded box slows the store and the process alike).
    const busy = await serve(template(), { contention: () => 10 });
    expect(await busy.call('/waits')).toMatchObject({ status: 200, body: 'waited' });
    // However loaded the machine is said to be (a wall limit of 100 s), a function that computes past its Timeout is timed out by its CPU time.
    const loaded = await serve(template(), { contention: () => 100 });
    const started = performance.now();
    expect((await loaded.call('/burner')).status).toBe(502);
    expect(loaded.rest.functionErrors).toEqual(['burnerFn: Sandbox.Timedout: Task timed out after 1.00 seconds']);
    // Well inside the 100 s the wall limit would allow (1 s of CPU takes longer on a busy machine: the bound is loose on purpose).
    expect(performance.now() - started).toBeLessThan(60_000);
    expect((await loaded.call('/ok')).status).toBe(200);
  }, 90_000);

  it("a function that outlives API Gateway's integration timeout is a 504 INTEGRATION_TIMEOUT, whatever its own Timeout", async () => {
    const json = template({ method: { Integration: { Type: 'AWS_PROXY', TimeoutInMillis: 300, Uri: { 'Fn::GetAtt': ['slowFn', 'Arn'] } } } });
    json.Resources.slowFn.Properties.Timeout = 60;
    const { rest, call } = await serve(json);
    expect(await call('/ok')).toMatchObject({ status: 504, body: '{"message":"Endpoint request timed out"}' });
    expect(rest.functionErrors).toEqual(['slowFn: no answer within the integration timeout']);
  });

  it("the stage's DEFAULT_5XX gateway response decides what the client gets (the stack's: 500 and the envelope)", async () => {
    const { call } = await serve(
      template({ gatewayResponses: [{ ResponseType: 'DEFAULT_5XX', StatusCode: '500', ResponseParameters: { 'gatewayresponse.header.Content-Type': "'application/json'" }, ResponseTemplates: { 'application/json': '{"success":false,"message":"Internal server error."}' } }] }),
    );
    expect(await call('/malformed')).toMatchObject({ status: 500, body: '{"success":false,"message":"Internal server error."}' });
  });
});

describe("API Gateway's request size quotas", () => {
  it('a URL over 10,240 characters is 414 and headers over 10,240 bytes 431, shaped by DEFAULT_4XX, before any function runs', async () => {
    const { rest, call } = await serve(template({ gatewayResponses: [{ ResponseType: 'DEFAULT_4XX', ResponseTemplates: { 'application/json': '{"success":false,"message":$context.error.messageString}' } }] }));
    const long = await call(`/ok?pad=${'a'.repeat(10_240)}`);
    expect([long.status, JSON.parse(long.body).success]).toEqual([414, false]);
    const headers = await call('/ok', { 'x-pad': 'p'.repeat(11_000) });
    expect([headers.status, JSON.parse(headers.body).success]).toEqual([431, false]);
    expect(rest.functionErrors).toEqual([]);
  });
});

describe('a template the rehearsal cannot interpret fails at start, naming the resource', () => {
  it('an integration type it does not know', () => {
    expect(() => new RestApiRehearsal({ template: new Template(template({ method: { Integration: { Type: 'HTTP_PROXY', Uri: 'https://example.com' } } }), 'T', { queueUrl: (id) => id }), apiId: 'Api', functions: new Map(), now: () => new Date(), planKeys: new Set(), throttle: true })).toThrow(
      /template: \w+Get \(API Api\): integration type HTTP_PROXY is not rehearsed/,
    );
  });

  it('an authorization type it does not know', () => {
    expect(() => new RestApiRehearsal({ template: new Template(template({ method: { AuthorizationType: 'COGNITO_USER_POOLS' } }), 'T', { queueUrl: (id) => id }), apiId: 'Api', functions: new Map(), now: () => new Date(), planKeys: new Set(), throttle: true })).toThrow(
      /template: \w+Get \(API Api\): AuthorizationType COGNITO_USER_POOLS is not rehearsed/,
    );
  });

  it('an intrinsic function it cannot resolve', () => {
    const t = new Template(template({ functionEnv: { QUEUE: { 'Fn::ImportValue': 'shared-queue' } } }), 'T', { queueUrl: (id) => id });
    expect(() => t.prop('okFn', 'Environment.Variables')).toThrow('template: okFn.Environment.Variables.QUEUE: cannot resolve Fn::ImportValue');
    expect(() => t.resolve({ 'Fn::GetAtt': ['Api', 'Nonsense'] }, 'X.Y')).toThrow('template: X.Y: cannot resolve Fn::GetAtt Api.Nonsense (AWS::ApiGateway::RestApi)');
  });
});

describe('AWS_IAM methods', () => {
  it('answer an unsigned request as API Gateway does: MISSING_AUTHENTICATION_TOKEN, 403 "Missing Authentication Token" unless the template maps it', async () => {
    // https://repost.aws/knowledge-center/api-gateway-authentication-token-errors: "API requests are not signed
    // when AWS Identity and Access Management (IAM) authentication is turned on for API methods."
    const { call } = await serve(template({ method: { AuthorizationType: 'AWS_IAM' } }));
    expect(await call('/ok')).toMatchObject({ status: 403, body: '{"message":"Missing Authentication Token"}' });
  });
});

describe("the usage plan's quota and throttle, as the template sets them", () => {
  const plan = (usagePlan: Json) => template({ method: { ApiKeyRequired: true }, usagePlan });

  it('counts a key per quota period; past the limit QUOTA_EXCEEDED (429 "Limit Exceeded"); an unknown key INVALID_API_KEY (403)', async () => {
    const { call } = await serve(plan({ Quota: { Limit: 2, Period: 'DAY' } }), { planKeys: ['k1'] });
    const key = { 'x-api-key': 'k1' };
    expect([(await call('/ok', key)).status, (await call('/ok', key)).status]).toEqual([200, 200]);
    expect(await call('/ok', key)).toMatchObject({ status: 429, body: '{"message":"Limit Exceeded"}' });
    expect(await call('/ok', { 'x-api-key': 'other' })).toMatchObject({ status: 403, body: '{"message":"Forbidden"}' });
  });

  it('throttles a key past its burst: THROTTLED (429 "Too Many Requests")', async () => {
    // The buckets' clock held still: three requests in no time, however long a busy machine takes to send them.
    const { call } = await serve(plan({ Throttle: { RateLimit: 1, BurstLimit: 2 } }), { planKeys: ['k1'], throttleClockMs: () => 0 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call('/ok', { 'x-api-key': 'k1' })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
