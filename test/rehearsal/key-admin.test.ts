/**
 * The key-management API in the rehearsal of the staging template: its
 * AWS_IAM methods verify SigV4 and evaluate execute-api:Invoke against the
 * web product's documented grant (the stand-in principal signs with the
 * local key pair), the key-admin bundle runs from cdk.out, and its API
 * Gateway calls are evaluated against its role and served by the same
 * in-memory key store the Public API's usage plan reads. So a key made
 * through the admin client works on the rehearsed Public API at once and is
 * refused at once after revoke, with no IAM denial on the way.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { KeyAdminClient, KeyAdminError, type CreatedKey } from '../../keys/admin-client.js';
import { USAGE_PLAN_TAG } from '../../lambdas/key-admin/usage-plan.js';
import { KEY_ADMIN_BASE_PATH } from '../../lambdas/key-admin/routes.js';
import { REHEARSAL_STAGES, rehearsalRequests } from '../../local/rehearsal/checks.js';
import { foreignKeysRefused, keyAdminRoundTrip } from '../../local/rehearsal/key-admin-check.js';
import { REGION } from '../../local/rehearsal/iam.js';
import { startRehearsal, type Rehearsal } from '../../local/rehearsal/rehearsal.js';
import { DEMO_FILE, NOW } from '../support/fixtures.js';

let rehearsal: Rehearsal;
/** The rehearsal's clock: NOW, moved on only by the sweep's test (an API key is swept once a minute old). */
let clockNow = Date.parse(NOW);
let base: string;
let admin: KeyAdminClient;
const logs: string[] = [];

beforeAll(async () => {
  rehearsal = await startRehearsal({ context: REHEARSAL_STAGES.staging!, dataFile: DEMO_FILE, now: () => new Date(clockNow), onLog: (fn, line) => fn.startsWith('KeyAdmin') && logs.push(line) });
  const api = rehearsal.apis.find((a) => a.id.startsWith('KeyAdminApi'));
  if (!api) throw new Error('no key-management API in the template');
  base = `${api.url}${KEY_ADMIN_BASE_PATH}`;
  const { accessKeyId, secretAccessKey } = rehearsal.webProduct;
  admin = new KeyAdminClient({ baseUrl: base, region: REGION, credentials: { accessKeyId, secretAccessKey } });
}, 120_000);
afterAll(async () => rehearsal?.close());

const keyAdminFunction = () => rehearsal.endpoint.calls.filter((c) => c.fn.startsWith('KeyAdminFunction'));
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as KeyAdminError,
  );
/** One keyed Public API route, with the key given. */
const publicGet = (key: string) => {
  const keyed = rehearsalRequests(key, rehearsal.cursorKey).find((r) => r.headers['x-events-api-key'] && r.path.startsWith('/api/public/'))!;
  return fetch(rehearsal.urlFor(keyed.path), { headers: keyed.headers });
};

describe('the key-management API, rehearsed: API Gateway refuses what IAM refuses, before the function runs', () => {
  it('an unsigned create is 403 MISSING_AUTHENTICATION_TOKEN, and nothing runs', async () => {
    const invoked = rehearsal.invocations.length;
    const res = await fetch(`${base}/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ idempotencyKey: 'unsigned-0001', userId: 'usr_frank', name: 'x' }) });
    expect([res.status, res.headers.get('x-amzn-errortype'), await res.json()]).toEqual([403, 'MISSING_AUTHENTICATION_TOKEN', { message: 'Missing Authentication Token' }]);
    expect(rehearsal.invocations.length).toBe(invoked);
  });

  it.each([
    ['a wrong secret', { accessKeyId: 'AKIALOCALKEYADMIN000', secretAccessKey: 'not-the-secret' }, /signature we calculated does not match/],
    ['an unknown access key', { accessKeyId: 'AKIAUNKNOWN000000000', secretAccessKey: 'whatever' }, /security token included in the request is invalid/],
  ])('a create signed with %s is 403 INVALID_SIGNATURE, and nothing runs', async (_case, credentials, message) => {
    const invoked = rehearsal.invocations.length;
    const wrong = new KeyAdminClient({ baseUrl: base, region: REGION, credentials });
    const e = await refusal(wrong.create({ idempotencyKey: 'wrongly-signed-0001', userId: 'usr_frank', name: 'x' }));
    expect([e.status, e.message]).toEqual([403, expect.stringMatching(message)]);
    expect(rehearsal.invocations.length).toBe(invoked);
    expect(rehearsal.apiKeys.list()).toEqual([]);
  });

  it('a request signed for a path of the API but altered after signing is 403', async () => {
    const fetchAltered: typeof fetch = (input, init) => fetch(String(input).replace('/users/usr_frank/', '/users/usr_alice/'), init);
    const altered = new KeyAdminClient({ baseUrl: base, region: REGION, credentials: rehearsal.webProduct, fetch: fetchAltered });
    expect((await refusal(altered.list('usr_frank'))).status).toBe(403);
  });
});

describe('create → use on the Public API → revoke, through the rehearsed stack', () => {
  let created: CreatedKey;

  it('creates a key whose API Gateway key is tagged with the usage plan and attached to it; the key works on the Public API at once', async () => {
    const answer = await admin.create({ idempotencyKey: 'rehearsal-create-0001', userId: 'usr_frank', name: 'Website', scopes: ['events:read', 'guests:read'] });
    expect(answer.replayed).toBe(false);
    created = answer as CreatedKey;
    expect(created.key).toMatch(/^pk_/);
    const [apiKey, ...others] = rehearsal.apiKeys.list();
    expect(others).toEqual([]);
    expect(apiKey).toMatchObject({ name: `usr_frank/${created.keyId}`, enabled: true, tags: { [USAGE_PLAN_TAG]: expect.stringMatching(/UsagePlan|DailyQuota/) } });
    expect(rehearsal.apiKeys.planKeys.has(apiKey!.value)).toBe(true);
    expect((await publicGet(created.key)).status).toBe(200);
  });

  it('a retried create (same idempotency key) answers the same key id without the key, and makes no second API key', async () => {
    const again = await admin.create({ idempotencyKey: 'rehearsal-create-0001', userId: 'usr_frank', name: 'Website', scopes: ['events:read', 'guests:read'] });
    expect(again).toMatchObject({ keyId: created.keyId, replayed: true });
    expect(again).not.toHaveProperty('key');
    expect(rehearsal.apiKeys.list()).toHaveLength(1);
  });

  it('audits the IAM caller API Gateway verified (requestContext.identity.userArn), never the key', () => {
    const text = logs.join('\n');
    expect(text).toContain(rehearsal.webProduct.principalArn);
    expect(text).toContain(created.keyId);
    expect(text).not.toContain(created.key);
  });

  it('revoke is immediate: the next Public request with the key is 401, and its API Gateway key is gone', async () => {
    const revoked = await admin.revoke('usr_frank', created.keyId);
    expect(revoked).toMatchObject({ keyId: created.keyId, revoked: true });
    expect((await publicGet(created.key)).status).toBe(401);
    expect(rehearsal.apiKeys.list()).toEqual([]);
    const e = await refusal(admin.revoke('usr_frank', created.keyId));
    expect([e.status, e.field, e.code]).toEqual([409, 'keyId', 'ALREADY_REVOKED']);
  });

  it('the round trip `npm run rehearse` runs passes every check, and leaves no API key behind', async () => {
    const lines = await keyAdminRoundTrip(rehearsal);
    expect(lines.map((l) => l.line.replace(/key_\w+/g, 'KEY_ID'))).toEqual([
      '403 key admin: unsigned create refused',
      '201 key admin: signed create made KEY_ID',
      '200 key admin: the new key on the Public API',
      '200 key admin: retried create replayed KEY_ID without the key',
      '401 key admin: the revoked key on the Public API',
    ]);
    expect(lines.every((l) => l.ok)).toBe(true);
    expect(rehearsal.apiKeys.list()).toEqual([]);
  });

  it("every call the key-admin function made was allowed by its role, API Gateway's create, attach and delete included", () => {
    const actions = new Set(keyAdminFunction().map((c) => `${c.action} ${c.resource.replace(/\/apikeys\/[^/]+$/, '/apikeys/{id}').replace(/\/tags\/.*$/, '/tags/{arn}')}`));
    expect([...actions].filter((a) => a.startsWith('apigateway:')).sort()).toEqual([
      `apigateway:DELETE arn:aws:apigateway:${REGION}::/apikeys/{id}`,
      `apigateway:POST arn:aws:apigateway:${REGION}::/apikeys`,
      expect.stringMatching(new RegExp(`^apigateway:POST arn:aws:apigateway:${REGION}::/usageplans/[^/]+/keys$`)),
      `apigateway:PUT arn:aws:apigateway:${REGION}::/tags/{arn}`,
    ]);
    expect(keyAdminFunction().filter((c) => !c.allowed)).toEqual([]);
    expect(rehearsal.problems()).toEqual([]);
  });
});

// Before the roles' evaluation below: its ~20 s of evaluation in this process outlast the client's idle connections.
describe("a user's deletion through the rehearsed ingest", () => {
  it("closes the user's keys at once through the key-management function the ingest invokes: 401 on the Public API, the API Gateway key deleted under the key manager's role, one audit line, nothing denied", async () => {
    const made = (await admin.create({ idempotencyKey: 'rehearsal-deleted-0001', userId: 'usr_eve', name: 'Before deletion' })) as CreatedKey;
    expect((await publicGet(made.key)).status).toBe(200);
    expect(rehearsal.apiKeys.list()).toHaveLength(1);
    const queue = [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestQueue'))!;
    const before = rehearsal.invocations.length;
    rehearsal.send(queue, JSON.stringify({ type: 'user.deleted', version: 1000, user_id: 'usr_eve' }));
    expect(await rehearsal.drain()).toMatchObject({ failures: 0, deadLettered: 0 });
    // The ingest ran, and from inside it the key-management function (its `close` task). (The table's stream runs the
    // webhooks' fan-out on the change's feed writes, as on any: test/rehearsal/webhooks.test.ts.)
    expect(rehearsal.invocations.slice(before).map((f) => f.replace(/[0-9A-F]{8}$/, '')).filter((f) => f !== 'WebhooksFanOutFunction')).toEqual(['IngestFunction', 'KeyAdminFunction']);
    expect((await publicGet(made.key)).status).toBe(401);
    expect(rehearsal.apiKeys.list()).toEqual([]);
    expect((await refusal(admin.list('usr_eve'))).code).toBe('UNKNOWN_USER');
    const ingestCalls = rehearsal.endpoint.calls.filter((c) => c.fn.startsWith('IngestFunction'));
    // The ingest touched no key item and no API Gateway key: it invoked the key-management function, which did.
    expect(ingestCalls.filter((c) => c.action.startsWith('apigateway:') || /APIKEY#|USERKEYS#/.test(c.resource))).toEqual([]);
    expect(ingestCalls.filter((c) => c.action === 'lambda:InvokeFunction').map((c) => [c.resource.split(':').pop()!.replace(/[0-9A-F]{8}$/, ''), c.allowed])).toEqual([['KeyAdminFunction', true]]);
    const deleted = rehearsal.endpoint.calls.filter((c) => c.action === 'apigateway:DELETE' && c.fn.startsWith('KeyAdminFunction'));
    expect(deleted.at(-1)?.allowed).toBe(true);
    const audit = logs.flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : [])).filter((l) => l.message === 'Key revoked' && l.keyId === made.keyId);
    expect(audit).toEqual([expect.objectContaining({ userId: 'usr_eve', keyId: made.keyId, by: 'user deleted', caller: 'task:close' })]);
    expect(rehearsal.problems()).toEqual([]);
    // Two bundles start cold here (the ingest, then the key-management function from inside it).
  }, 60_000);

  it("while Lambda throttles the ingest's invoke of the key-management function: 401 on the Public API from the first delivery, the record sent again as a new message, delayed, its throttles counted; applied when the throttle ends, nothing dead-lettered", async () => {
    const made = (await admin.create({ idempotencyKey: 'rehearsal-throttled-0001', userId: 'usr_dave', name: 'Before a throttled deletion' })) as CreatedKey;
    expect((await publicGet(made.key)).status).toBe(200);
    const queue = [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestQueue'))!;
    // The first delivery's invoke and the SDK's two retries of it: refused as past the account's concurrency.
    rehearsal.throttleInvokes(3);
    rehearsal.send(queue, JSON.stringify({ type: 'user.deleted', version: 1000, user_id: 'usr_dave' }));
    expect(await rehearsal.drain({ maxBatches: 1 })).toEqual({ batches: 1, failures: 0, deadLettered: 0 });
    // Nothing of the key is closed yet (its API Gateway key is still there), and it is refused all the same: the authorizer reads its user's tombstone.
    expect(rehearsal.apiKeys.list().map((k) => k.name)).toEqual([`usr_dave/${made.keyId}`]);
    expect((await publicGet(made.key)).status).toBe(401);
    // Its next try: a new message (a fresh receive count), delayed by the backoff, carrying its throttles.
    expect(rehearsal.queues.get(queue)).toEqual([expect.objectContaining({ receiveCount: 0, delaySeconds: expect.any(Number), messageAttributes: { throttles: { DataType: 'Number', StringValue: '1' } } })]);
    expect(rehearsal.queues.get(queue)![0]!.delaySeconds).toBeGreaterThanOrEqual(1);
    expect(await rehearsal.drain()).toMatchObject({ failures: 0, deadLettered: 0 });
    expect(rehearsal.apiKeys.list()).toEqual([]);
    expect((await publicGet(made.key)).status).toBe(401);
    expect(rehearsal.problems()).toEqual([]);
  }, 60_000);
});

describe("the sweep task, run by the key-management bundle under its role (as its EventBridge schedule invokes it)", () => {
  it("lists the plan's API keys, reads their records in one BatchGetItem round, keeps the live key's, saves its pass: every call allowed", async () => {
    const made = (await admin.create({ idempotencyKey: 'rehearsal-sweep-0001', userId: 'usr_frank', name: 'Swept, kept' })) as CreatedKey;
    clockNow += 5 * 60_000;
    const before = rehearsal.endpoint.calls.length;
    const keyAdmin = [...rehearsal.roles.keys()].find((id) => id.startsWith('KeyAdminFunction'))!;
    const ingest = [...rehearsal.roles.keys()].find((id) => id.startsWith('IngestFunction'))!;
    // Lambda's Invoke, signed as the one function whose role may invoke it besides EventBridge's rule (the ingest).
    const lambda = new LambdaClient({ region: REGION, endpoint: rehearsal.endpoint.url, credentials: { accessKeyId: ingest, secretAccessKey: 'rehearsal' } });
    const out = await lambda.send(new InvokeCommand({ FunctionName: keyAdmin, Payload: new TextEncoder().encode(JSON.stringify({ task: 'sweep' })) }));
    lambda.destroy();
    expect(out.FunctionError).toBeUndefined();
    const report = JSON.parse(new TextDecoder().decode(out.Payload)) as { task: string; kept: number; deleted: string[]; pages: number; passEnded: boolean };
    expect(report).toMatchObject({ task: 'sweep', kept: rehearsal.apiKeys.list().length, deleted: [], pages: 1, passEnded: true });
    expect(rehearsal.apiKeys.list().map((k) => k.name)).toContain(`usr_frank/${made.keyId}`);
    const sweepCalls = rehearsal.endpoint.calls.slice(before).filter((c) => c.fn.startsWith('KeyAdminFunction'));
    expect(sweepCalls.filter((c) => ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'apigateway:GET'].includes(c.action)).map((c) => [c.action, c.allowed])).toEqual(
      expect.arrayContaining([
        ['apigateway:GET', true],
        ['dynamodb:BatchGetItem', true],
        ['dynamodb:PutItem', true],
      ]),
    );
    expect(sweepCalls.every((c) => c.allowed)).toBe(true);
    expect(rehearsal.problems()).toEqual([]);
  }, 60_000);
});

describe("the roles that may delete this stack's API Gateway keys, evaluated as the rehearsal evaluates every call", () => {
  it('the key-management function and the ingest are refused every action on a foreign key, stage or plan, and on their tags (the ingest on its own plan\'s keys too)', async () => {
    const lines = await foreignKeysRefused(rehearsal);
    expect(lines.map((l) => l.line.replace(/^(\w+?Function)\w*:/, '$1:').replace(/\d+ of \d+/, 'all')).sort()).toEqual([
      "IngestFunction: all API Gateway actions on a foreign key, stage or plan (and their tags) refused; its own plan's key may not be deleted either",
      "KeyAdminFunction: all API Gateway actions on a foreign key, stage or plan (and their tags) refused; its own plan's key may be deleted",
    ]);
    // Every action on every foreign resource, with and without the plan tag, was asked (none left out as unknown to IAM but a few).
    for (const l of lines) expect(Number(/(\d+) of (\d+)/.exec(l.line)![2])).toBeGreaterThan(100);
    expect(lines.every((l) => l.ok)).toBe(true);
  });
});

describe("the API's resource policy, rehearsed: only the role keyAdminCallers names gets in", () => {
  let other: Rehearsal;
  // `any`: CloudFormation JSON, edited by key. The policy names another role than the rehearsal's web product.
  const elsewhere = (t: Record<string, any>) => {
    const [apiId] = Object.keys(t.Resources).filter((id) => id.startsWith('KeyAdminApi') && t.Resources[id].Type === 'AWS::ApiGateway::RestApi');
    t.Resources[apiId!].Properties.Policy = JSON.parse(JSON.stringify(t.Resources[apiId!].Properties.Policy).replaceAll('role/web-product', 'role/another-product'));
  };
  beforeAll(async () => {
    other = await startRehearsal({ context: REHEARSAL_STAGES.staging!, dataFile: DEMO_FILE, now: new Date(NOW), amendTemplate: elsewhere });
  }, 120_000);
  afterAll(async () => other?.close());

  it('the web product, with its documented grant, is 403 ACCESS_DENIED when the policy names another role, and nothing runs', async () => {
    const api = other.apis.find((a) => a.id.startsWith('KeyAdminApi'))!;
    const client = new KeyAdminClient({ baseUrl: `${api.url}${KEY_ADMIN_BASE_PATH}`, region: REGION, credentials: other.webProduct });
    const invoked = other.invocations.length;
    const e = await refusal(client.create({ idempotencyKey: 'elsewhere-0001', userId: 'usr_frank', name: 'x' }));
    expect([e.status, e.message]).toEqual([403, expect.stringMatching(/is not authorized to perform: execute-api:Invoke/)]);
    expect(other.invocations.length).toBe(invoked);
  });
});

describe('the same stack with a narrower grant and a statement removed from the function role', () => {
  let narrowed: Rehearsal;
  let narrowedAdmin: KeyAdminClient;
  // `any`: CloudFormation JSON, edited by key.
  const amend = (t: Record<string, any>) => {
    const [apiId] = Object.keys(t.Resources).filter((id) => id.startsWith('KeyAdminApi') && t.Resources[id].Type === 'AWS::ApiGateway::RestApi');
    t.Outputs.KeyAdminInvokeArn.Value = { 'Fn::Join': ['', [`arn:aws:execute-api:${REGION}:123456789012:`, { Ref: apiId }, '/staging/POST/admin/v1/*']] };
    // The resource policy's own allow narrowed the same way (in the stack's account either one lets the role in).
    for (const st of t.Resources[apiId!].Properties.Policy.Statement) if (st.Effect === 'Allow') st.Resource = 'execute-api:/staging/POST/admin/v1/*';
    // `any`: each resource's CloudFormation JSON, edited by key.
    for (const [, r] of Object.entries<Record<string, any>>(t.Resources)) {
      if (r.Type !== 'AWS::IAM::Policy') continue;
      r.Properties.PolicyDocument.Statement = r.Properties.PolicyDocument.Statement.filter((s: { Sid?: string }) => s.Sid !== 'AttachToThisUsagePlan');
    }
  };
  beforeAll(async () => {
    narrowed = await startRehearsal({ context: REHEARSAL_STAGES.staging!, dataFile: DEMO_FILE, now: new Date(NOW), amendTemplate: amend });
    const api = narrowed.apis.find((a) => a.id.startsWith('KeyAdminApi'))!;
    narrowedAdmin = new KeyAdminClient({ baseUrl: `${api.url}${KEY_ADMIN_BASE_PATH}`, region: REGION, credentials: narrowed.webProduct });
  }, 120_000);
  afterAll(async () => narrowed?.close());

  it('a validly signed request outside the grant is 403 ACCESS_DENIED naming execute-api:Invoke and the method ARN', async () => {
    const e = await refusal(narrowedAdmin.list('usr_frank'));
    expect([e.status, e.message]).toEqual([403, expect.stringMatching(/is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:.*\/staging\/GET\/admin\/v1\/users\/usr_frank\/keys$/)]);
  });

  it('without the attach statement, a create fails, the denial is named, and the compensation leaves no API key behind', async () => {
    const e = await refusal(narrowedAdmin.create({ idempotencyKey: 'narrowed-create-0001', userId: 'usr_frank', name: 'Website' }));
    expect(e.status).toBe(500);
    // The same denial may be recorded twice: the function's SDK may retry the refused call once (a retry after it
    // corrects its clock offset from the answer's Date, the rehearsal pinning the functions' clock to the test's day).
    expect([...new Set(narrowed.problems())]).toEqual([expect.stringMatching(/^denied: KeyAdminFunction\w* may not apigateway:POST on arn:aws:apigateway:[^:]+::\/usageplans\/[^/]+\/keys/)]);
    expect(narrowed.apiKeys.list()).toEqual([]);
  });
});
