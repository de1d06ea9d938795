/**
 * The key-management API in the synthesized template: reachable only with
 * AWS IAM (every method AWS_IAM, its own REST API, no Public or Embed method
 * and no OpenAPI document reaches it), and its function's role allows exactly
 * what key management does. "Exactly" is checked both ways: the key manager
 * runs every path (create, a retried create, a refused one, list, revoke, a
 * repeated revoke, both compensations) against dynalite and a mocked API
 * Gateway, each call is evaluated against the role's statements by
 * iam-simulate (local/rehearsal/iam.ts, the rehearsal's evaluator: actions,
 * resources, dynamodb:LeadingKeys and tag conditions, as IAM evaluates them),
 * and every statement must allow some call on its own. Its webhooks (PRODUCT
 * P18) are run the same way: a create at the scope's next change, one with a
 * backfill (its first page read as a pull reads it), one from a start
 * cursor, list, get, a rotation, a resume, a delete, and the key's revoke
 * closing the rest; its KMS calls are the key policy's to allow
 * (test/infra/webhooks.test.ts), not this role's.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { APIGatewayClient, CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteApiKeyCommand, GetApiKeysCommand } from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { fixedClock } from '../../lambdas/core/clock.js';
import { KEY_ADMIN_BASE_PATH, KEY_ADMIN_ROUTES } from '../../lambdas/key-admin/routes.js';
import { routes, SURFACES } from '../../lambdas/routes.js';
import { INDEXES } from '../../lambdas/store/table/table.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { WebhookManager } from '../../lambdas/key-admin/webhook-manager.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { DeliveryState } from '../../lambdas/store/webhooks/delivery-state.js';
import { localSecretBox } from '../../lambdas/store/webhooks/secret-box.js';
import { feedScopes, sealCursor, staticKeyring } from '../../lambdas/core/feed-cursor.js';
import { sweepPlanKeys } from '../../lambdas/store/keys/plan-key-sweep.js';
import { ApiGatewayPlanKeys, USAGE_PLAN_TAG } from '../../lambdas/key-admin/usage-plan.js';
import { tagOnCreateResource } from '../../local/rehearsal/api-keys.js';
import { evaluate, evaluateAs, type PolicyDocument } from '../../local/rehearsal/iam.js';
import { demoDataset } from '../support/fixtures.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { resources, synthApp, synthesized } from './support.js';

const { template: t } = synthesized();
const logicalId = (type: string, prefix: string) => resources(t, type).find(([id]) => id.startsWith(prefix))![0];
const keyAdminApi = logicalId('AWS::ApiGateway::RestApi', 'KeyAdminApi');
const keyAdminFunction = logicalId('AWS::Lambda::Function', 'KeyAdminFunction');
const tableId = logicalId('AWS::DynamoDB::GlobalTable', 'EventsTable');
const usagePlanId = logicalId('AWS::ApiGateway::UsagePlan', 'ApisPublicApiDailyQuota');
const cursorSecret = logicalId('AWS::SecretsManager::Secret', 'CursorKey');
const secretArn = `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${cursorSecret}-AbCdEf`;
const queueArn = (id: string) => `arn:aws:sqs:eu-west-1:123456789012:${id}`;
const wakeUpQueue = queueArn(logicalId('AWS::SQS::Queue', 'WebhooksWakeUps'));

/** CloudFormation values as strings IAM would see, with references named (the evaluation below only compares them). */
function resolve(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (v.Ref === 'AWS::Partition') return 'aws';
  if (v.Ref === 'AWS::Region') return 'eu-west-1';
  if (v.Ref === 'AWS::AccountId') return '123456789012';
  if (typeof v.Ref === 'string') return v.Ref === cursorSecret ? secretArn : `REF(${v.Ref})`;
  if (Array.isArray(v['Fn::GetAtt'])) {
    const [id, attribute] = v['Fn::GetAtt'] as [string, string];
    // IAM needs an ARN where the template has the table's or a queue's: the account's ARN named by its logical id.
    if (attribute === 'Arn' && resources(t, 'AWS::SQS::Queue').some(([q]) => q === id)) return queueArn(id);
    return id === tableId && attribute === 'Arn' ? `arn:aws:dynamodb:eu-west-1:123456789012:table/${id}` : `GETATT(${id})`;
  }
  if (Array.isArray(v['Fn::Join'])) {
    const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(resolve).join(sep);
  }
  throw new Error(`cannot resolve ${JSON.stringify(value)}`);
}

interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
const role = logicalId('AWS::IAM::Role', 'KeyAdminFunctionRole');
const statements: Statement[] = resources(t, 'AWS::IAM::Policy')
  .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
  .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
const keyStatements = statements.filter((s) => ![s.Action].flat().every((a) => a.startsWith('logs:')));

interface Call {
  action: string;
  resource: string;
  leadingKey?: string;
  requestTags?: Record<string, string>;
  resourceTags?: Record<string, string>;
}

/** A policy value with every CloudFormation intrinsic resolved (what IAM holds once deployed). */
function resolveDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolveDeep);
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::'))) return resolve(value);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveDeep(v)]));
  }
  return value;
}
const policyOf = (s: Statement[]): PolicyDocument => ({ Version: '2012-10-17', Statement: resolveDeep(s) });

/** What IAM's request context holds for a call: dynamodb:LeadingKeys, aws:RequestTag/*, aws:TagKeys, aws:ResourceTag/*. */
function contextOf(call: Call): Record<string, string | string[]> {
  const tags = call.requestTags ?? {};
  return {
    ...(call.leadingKey !== undefined ? { 'dynamodb:LeadingKeys': [call.leadingKey] } : {}),
    ...Object.fromEntries(Object.entries(tags).map(([k, v]) => [`aws:RequestTag/${k}`, v])),
    ...(Object.keys(tags).length ? { 'aws:TagKeys': Object.keys(tags) } : {}),
    ...Object.fromEntries(Object.entries(call.resourceTags ?? {}).map(([k, v]) => [`aws:ResourceTag/${k}`, v])),
  };
}

/** Whether these statements allow the call, as iam-simulate (a real IAM evaluator) decides; a call it cannot evaluate fails the test, never counts as refused. */
async function allowedBy(s: Statement[], call: Call): Promise<boolean> {
  const { allowed, decision } = await evaluate({ fn: 'KeyAdminFunction', action: call.action, resource: call.resource, context: contextOf(call) }, role, [policyOf(s)]);
  if (decision.startsWith('simulation error')) throw new Error(`${call.action} on ${call.resource}: ${decision}`);
  return allowed;
}

describe('the key-management API', () => {
  const methods = resources(t, 'AWS::ApiGateway::Method');

  it('has exactly the key-management routes, each with AWS_IAM authorization', () => {
    const own = methods.filter(([, m]) => m.Properties.RestApiId.Ref === keyAdminApi);
    expect(own.map(([, m]) => m.Properties.HttpMethod).sort()).toEqual(KEY_ADMIN_ROUTES.map((r) => r.method).sort());
    for (const [, m] of own) expect(m.Properties.AuthorizationType).toBe('AWS_IAM');
  });

  it('is reached by no Public or Embed method, and only its own API (and the sweep\'s schedule) may invoke its function', () => {
    const invoking = methods.filter(([, m]) => JSON.stringify(m.Properties.Integration ?? {}).includes(keyAdminFunction));
    expect(invoking.length).toBe(KEY_ADMIN_ROUTES.length);
    for (const [, m] of invoking) expect(m.Properties.RestApiId.Ref).toBe(keyAdminApi);
    const permissions = resources(t, 'AWS::Lambda::Permission').filter(([, p]) => JSON.stringify(p.Properties.FunctionName).includes(keyAdminFunction));
    expect(permissions.length).toBeGreaterThan(0);
    const sweep = logicalId('AWS::Events::Rule', 'KeyAdminSweep');
    for (const [, p] of permissions) {
      if (p.Properties.Principal === 'events.amazonaws.com') expect(p.Properties.SourceArn).toEqual({ 'Fn::GetAtt': [sweep, 'Arn'] });
      else expect(resolve(p.Properties.SourceArn)).toContain(`REF(${keyAdminApi})`);
    }
    expect(permissions.filter(([, p]) => p.Properties.Principal === 'events.amazonaws.com')).toHaveLength(1);
  });

  it('is in neither route table nor OpenAPI document', () => {
    expect(routes.filter((r) => `${SURFACES[r.surface]}${r.path}`.includes(KEY_ADMIN_BASE_PATH))).toEqual([]);
    for (const doc of ['public', 'embed']) expect(readFileSync(new URL(`../../docs/openapi/${doc}.json`, import.meta.url), 'utf8')).not.toContain('/keys');
  });

  it('outputs its URL and the ARN the web product is granted execute-api:Invoke on', () => {
    expect(resolve(t.findOutputs('KeyAdminApiUrl').KeyAdminApiUrl!.Value)).toMatch(new RegExp(`^https://REF\\(${keyAdminApi}\\)\\.execute-api\\.eu-west-1\\..*/REF\\(KeyAdminApiDeploymentStage\\w+\\)/admin/v1$`));
    expect(resolve(t.findOutputs('KeyAdminInvokeArn').KeyAdminInvokeArn!.Value)).toBe(`arn:aws:execute-api:eu-west-1:123456789012:REF(${keyAdminApi})/staging/*/admin/v1/*`);
  });

  it('throttles its stage and logs the IAM caller of every request', () => {
    const [[, stage]] = resources(t, 'AWS::ApiGateway::Stage').filter(([, s]) => s.Properties.RestApiId.Ref === keyAdminApi) as [ReturnType<typeof resources>[number]];
    expect(stage.Properties.MethodSettings).toEqual([expect.objectContaining({ ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 })]);
    expect(JSON.parse(stage.Properties.AccessLogSetting.Format)).toMatchObject({ caller: '$context.identity.caller', userArn: '$context.identity.userArn' });
  });

  it("logs each request's route template, never its path (a path names a user id)", () => {
    const [[, stage]] = resources(t, 'AWS::ApiGateway::Stage').filter(([, s]) => s.Properties.RestApiId.Ref === keyAdminApi) as [ReturnType<typeof resources>[number]];
    const format = stage.Properties.AccessLogSetting.Format as string;
    expect(JSON.parse(format)).toMatchObject({ resource: '$context.resourcePath' });
    // No variable that carries the request's path or its parameters.
    expect(format.match(/\$context\.[\w.]+/g)!.filter((v) => /\.path$|requestOverride|\.params/i.test(v) || v === '$context.path')).toEqual([]);
  });

  it('sweeps plan keys every 5 minutes, each run a bounded share of a pass: an EventBridge rule invoking the function with the sweep task', () => {
    const rules = resources(t, 'AWS::Events::Rule');
    expect(rules).toHaveLength(1);
    const [[, rule]] = rules as [ReturnType<typeof resources>[number]];
    expect(rule.Properties.ScheduleExpression).toBe('rate(5 minutes)');
    expect(rule.Properties.Targets).toEqual([expect.objectContaining({ Arn: { 'Fn::GetAtt': [expect.stringMatching(/^KeyAdminFunction/), 'Arn'] }, Input: JSON.stringify({ task: 'sweep' }) })]);
  });

  it("lets the ingest invoke this function and nothing else of keys: its ARN in the ingest's environment, lambda:InvokeFunction on it alone", () => {
    const [[ingestId, ingest]] = resources(t, 'AWS::Lambda::Function').filter(([id]) => id.startsWith('IngestFunction')) as [ReturnType<typeof resources>[number]];
    expect(ingest.Properties.Environment.Variables.KEY_ADMIN_FUNCTION_ARN).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^KeyAdminFunction/), 'Arn'] });
    const roleId = ingest.Properties.Role['Fn::GetAtt'][0] as string;
    const statements = resources(t, 'AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
    const invokes = statements.filter((st) => [st.Action].flat().some((a) => a.startsWith('lambda:')));
    expect({ ingestId, invokes }).toEqual({ ingestId, invokes: [expect.objectContaining({ Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [expect.stringMatching(/^KeyAdminFunction/), 'Arn'] } })] });
    expect(statements.filter((st) => [st.Action].flat().some((a) => a.startsWith('apigateway:')))).toEqual([]);
  });
});

describe("the key-management API's resource policy: only the web product's role gets in", () => {
  const webProduct = 'arn:aws:iam::123456789012:role/web-product';
  const invoke = 'arn:aws:execute-api:eu-west-1:123456789012:API/staging/POST/admin/v1/keys';
  /** The API's policy as deployed (`execute-api:/*` is API Gateway's shorthand for every method of this API). */
  const policyIn = (template: typeof t): PolicyDocument => {
    const [[, api]] = resources(template, 'AWS::ApiGateway::RestApi').filter(([id]) => id.startsWith('KeyAdminApi')) as [[string, { Properties: Record<string, unknown> }]];
    const doc = resolveDeep(api.Properties.Policy) as { Statement: { Resource: string }[] };
    return { ...doc, Statement: doc.Statement.map((st) => ({ ...st, Resource: st.Resource.replace('execute-api:', 'arn:aws:execute-api:eu-west-1:123456789012:API') })) };
  };
  /** What API Gateway decides for a principal of the account holding `identity` (AWS's managed invoke-full-access grant, say). */
  const decision = async (template: typeof t, principal: string, identity: PolicyDocument[]) =>
    (await evaluateAs(principal, { action: 'execute-api:Invoke', resource: invoke, context: {} }, identity, 'caller', policyIn(template))).decision;
  const fullInvoke: PolicyDocument = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: 'arn:aws:execute-api:*:*:*' }] };

  it('with keyAdminCallers: that role gets in without a grant of its own; any other principal is refused whatever it is granted', async () => {
    const { template } = synthesized({ keyAdminCallers: webProduct });
    expect(await decision(template, 'arn:aws:sts::123456789012:assumed-role/web-product/session', [])).toBe('Allowed');
    expect(await decision(template, 'arn:aws:sts::123456789012:assumed-role/web-product/session', [fullInvoke])).toBe('Allowed');
    expect(await decision(template, 'arn:aws:sts::123456789012:assumed-role/other-app/session', [fullInvoke])).toBe('ExplicitlyDenied');
    expect(await decision(template, 'arn:aws:iam::123456789012:user/admin', [fullInvoke])).toBe('ExplicitlyDenied');
  });

  it('without it: nobody gets in', async () => {
    expect(await decision(t, 'arn:aws:sts::123456789012:assumed-role/web-product/session', [fullInvoke])).toBe('ExplicitlyDenied');
  });

  it('refuses a caller that is not an IAM role or user ARN, naming the setting', () => {
    expect(() => synthApp({ keyAdminCallers: 'web-product' })).toThrow('keyAdminCallers');
  });
});

describe("the key-management function's role: exactly what key management does", () => {
  let store: TestStore;
  const calls: Call[] = [];
  const apiGateway = mockClient(APIGatewayClient);
  const tags = new Map<string, Record<string, string>>();
  const planId = `REF(${usagePlanId})`;
  const tableArn = `arn:aws:dynamodb:eu-west-1:123456789012:table/${tableId}`;

  beforeAll(async () => {
    store = await startTestStore(demoDataset());
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { IndexName?: string; Key?: Record<string, string>; Item?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> };
        const action = `dynamodb:${String(context.commandName).replace(/Command$/, '')}`;
        const leadingKey = input.Key?.pk ?? input.Item?.pk ?? (input.IndexName ? undefined : (input.ExpressionAttributeValues?.[':pk'] as string | undefined));
        calls.push({ action, resource: input.IndexName ? `${tableArn}/index/${input.IndexName}` : tableArn, ...(leadingKey !== undefined ? { leadingKey } : {}) });
        return next(args);
      },
      { step: 'initialize', name: 'recordCalls' },
    );
    let n = 0;
    apiGateway.on(CreateApiKeyCommand).callsFake(async (input: { tags?: Record<string, string> }) => {
      const id = `apikey${++n}`;
      tags.set(id, input.tags ?? {});
      calls.push({ action: 'apigateway:POST', resource: 'arn:aws:apigateway:eu-west-1::/apikeys', requestTags: input.tags ?? {} });
      // Tags on create are authorized as a PUT on the collection's tags too (local/rehearsal/api-keys.ts).
      if (input.tags) calls.push({ action: 'apigateway:PUT', resource: tagOnCreateResource('eu-west-1'), requestTags: input.tags });
      return { id };
    });
    let failAttach = true;
    apiGateway.on(CreateUsagePlanKeyCommand).callsFake(async (input: { usagePlanId: string }) => {
      calls.push({ action: 'apigateway:POST', resource: `arn:aws:apigateway:eu-west-1::/usageplans/${input.usagePlanId}/keys` });
      if (failAttach) {
        failAttach = false;
        throw Object.assign(new Error('Bad request'), { name: 'BadRequestException' });
      }
      return {};
    });
    apiGateway.on(DeleteApiKeyCommand).callsFake(async (input: { apiKey: string }) => {
      calls.push({ action: 'apigateway:DELETE', resource: `arn:aws:apigateway:eu-west-1::/apikeys/${input.apiKey}`, resourceTags: tags.get(input.apiKey) ?? {} });
      return {};
    });

    const manager = new KeyManager(store.client, store.tableName, {
      clock: fixedClock('2026-11-21T12:00:00.000Z'),
      planKeys: new ApiGatewayPlanKeys(new APIGatewayClient({ region: 'eu-west-1' }), planId),
      maxCreatesPerDay: 100,
    });
    // A plan key that cannot be attached: the key retired, its plan key deleted.
    await expect(manager.createOnce({ idempotencyKey: 'role-check-0', userId: 'usr_frank', name: 'fails' })).rejects.toThrow('Bad request');
    const made = await manager.createOnce({ idempotencyKey: 'role-check-1', userId: 'usr_frank', name: 'role check' });
    await manager.createOnce({ idempotencyKey: 'role-check-1', userId: 'usr_frank', name: 'role check' });
    await expect(manager.createOnce({ idempotencyKey: 'role-check-1', userId: 'usr_frank', name: 'other' })).rejects.toThrow('different name');
    await manager.listAll('usr_frank');
    await manager.revoke('usr_frank', made.info.keyId);
    await expect(manager.revoke('usr_frank', made.info.keyId)).rejects.toThrow('already revoked');
    // A create at the limit reconciles the slots first (reads each stale holder's record).
    const fills = [];
    for (let i = 0; i < 10; i++) fills.push(await manager.create({ userId: 'usr_frank', name: `fill ${i}` }));
    await expect(manager.create({ userId: 'usr_frank', name: 'eleventh' })).rejects.toThrow('active keys');
    await manager.revoke('usr_frank', fills[0]!.info.keyId);
    // Its webhooks: the cursor key read from Secrets Manager, a webhook woken on the FIFO queue (the delivery function's own
    // calls, the disable a resume needs, go through a client of their own: they are not this role's).
    const keyring = staticKeyring(Buffer.alloc(32, 7));
    const webhooks = new WebhookManager({
      client: store.client,
      tableName: store.tableName,
      keys: manager.store,
      feeds: store.repository,
      events: store.repository,
      keyring: { keys: async () => (calls.push({ action: 'secretsmanager:DescribeSecret', resource: secretArn }, { action: 'secretsmanager:GetSecretValue', resource: secretArn }), keyring.keys()), refresh: async () => false },
      secrets: localSecretBox(),
      checkUrl: async () => ({ ok: true }),
      nudge: async () => void calls.push({ action: 'sqs:SendMessage', resource: wakeUpQueue }),
      siteUrl: 'https://events.example.com',
      clock: fixedClock('2026-11-21T12:00:00.000Z'),
    });
    const hooked = await manager.createOnce({ idempotencyKey: 'role-check-3', userId: 'usr_carol', name: 'webhooks' });
    const url = 'https://hooks.example.com/in';
    const next = await webhooks.create('usr_carol', hooked.info.keyId, { url, scope: { type: 'host', userId: 'usr_alice' } });
    const backfilled = await webhooks.create('usr_carol', hooked.info.keyId, { url, scope: { type: 'guests', eventId: 'evt_jazz01' }, backfill: true });
    if (!next.created || !backfilled.created) throw new Error('webhooks not created');
    const held = await sealCursor({ scope: feedScopes.catalogue(), mode: 'entries', position: await store.repository.feedHead(feedScopes.catalogue()), after: '', asOf: Date.parse('2026-11-21T11:00:00.000Z') / 1000 }, keyring);
    await webhooks.create('usr_carol', hooked.info.keyId, { url, scope: { type: 'catalogue' }, start_cursor: held });
    await webhooks.list('usr_carol', hooked.info.keyId);
    await webhooks.get('usr_carol', hooked.info.keyId, next.info.webhookId);
    await webhooks.rotate('usr_carol', hooked.info.keyId, next.info.webhookId);
    const delivery = createDocumentClient({ endpoint: store.endpoint });
    await new DeliveryState(delivery, store.tableName).disable(backfilled.info.webhookId, 'gone', new Date('2026-11-21T12:00:00.000Z'));
    delivery.destroy();
    await webhooks.resume('usr_carol', hooked.info.keyId, backfilled.info.webhookId);
    await webhooks.delete('usr_carol', hooked.info.keyId, next.info.webhookId);
    await manager.revoke('usr_carol', hooked.info.keyId);
    // A table write that fails: the key retired, its plan key deleted, its items erased.
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand' && String((args.input as { Item?: { pk?: string } }).Item?.pk).startsWith('APIKEY#')) {
          throw Object.assign(new Error('Throttled'), { name: 'ProvisionedThroughputExceededException', $retryable: undefined });
        }
        return next(args);
      },
      { step: 'initialize', name: 'failApiKeyPut', priority: 'low' },
    );
    await expect(manager.createOnce({ idempotencyKey: 'role-check-2', userId: 'usr_frank', name: 'compensated' })).rejects.toThrow('Throttled');
    // The sweep (lambdas/store/keys/plan-key-sweep.ts): it lists the plan's API keys (GetApiKeys, apigateway:GET on the
    // collection), reads a page's records at once (BatchGetItem) and saves where it got to (the KEYSWEEP# item).
    const kept = (await manager.store.record('usr_frank', fills[1]!.info.keyId))!;
    apiGateway.on(GetApiKeysCommand).callsFake(async () => {
      calls.push({ action: 'apigateway:GET', resource: 'arn:aws:apigateway:eu-west-1::/apikeys' });
      return { items: [{ id: kept.plan_key_id, name: `usr_frank/${kept.key_id}`, createdDate: new Date('2026-11-21T11:00:00.000Z'), tags: { [USAGE_PLAN_TAG]: planId } }] };
    });
    expect((await sweepPlanKeys(manager.store)).kept).toBe(1);
  });
  afterAll(async () => {
    apiGateway.restore();
    await store?.close();
  });

  it('allows every call key management makes', async () => {
    expect(calls.length).toBeGreaterThan(20);
    const decisions = await Promise.all(calls.map(async (c) => ({ c, allowed: await allowedBy(keyStatements, c) })));
    expect(decisions.filter((d) => !d.allowed).map((d) => d.c)).toEqual([]);
  });

  it('has no statement that no call needs: each action of each statement allows some call on its own', async () => {
    for (const s of keyStatements) {
      for (const action of [s.Action].flat()) {
        const own = calls.filter((c) => c.action === action);
        const used = (await Promise.all(own.map((c) => allowedBy([s], c)))).some(Boolean);
        expect({ sid: s.Sid, action, used }).toEqual({ sid: s.Sid, action, used: true });
      }
    }
  });

  it("refuses what it must: other items, other indexes, another plan's API keys, untagged keys", async () => {
    const refusals: Call[] = [
      { action: 'dynamodb:GetItem', resource: tableArn, leadingKey: 'EVENT#evt_1' },
      { action: 'dynamodb:PutItem', resource: tableArn, leadingKey: 'USER#usr_frank' },
      // Event data is read (a webhook's first page, its scope's head), never written.
      { action: 'dynamodb:PutItem', resource: tableArn, leadingKey: 'FEED#EVENTS' },
      { action: 'dynamodb:UpdateItem', resource: tableArn, leadingKey: 'EVENT#evt_1' },
      { action: 'dynamodb:DeleteItem', resource: tableArn, leadingKey: 'FEED#EVENTS' },
      { action: 'dynamodb:BatchGetItem', resource: tableArn, leadingKey: 'APIKEY#x' },
      { action: 'dynamodb:Query', resource: tableArn, leadingKey: 'WEBHOOK#wh_x' },
      { action: 'dynamodb:Query', resource: `${tableArn}/index/${INDEXES.guest.name}` },
      { action: 'dynamodb:Query', resource: `${tableArn}/index/${INDEXES.userEvents.name}` },
      { action: 'sqs:SendMessage', resource: queueArn(logicalId('AWS::SQS::Queue', 'IngestQueue')) },
      { action: 'secretsmanager:GetSecretValue', resource: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:another-AbCdEf' },
      { action: 'dynamodb:Scan', resource: tableArn },
      { action: 'dynamodb:BatchWriteItem', resource: tableArn, leadingKey: 'APIKEY#x' },
      { action: 'apigateway:POST', resource: 'arn:aws:apigateway:eu-west-1::/apikeys', requestTags: {} },
      { action: 'apigateway:POST', resource: 'arn:aws:apigateway:eu-west-1::/apikeys', requestTags: { [USAGE_PLAN_TAG]: 'another-plan' } },
      { action: 'apigateway:POST', resource: 'arn:aws:apigateway:eu-west-1::/apikeys', requestTags: { [USAGE_PLAN_TAG]: planId, owner: 'x' } },
      { action: 'apigateway:POST', resource: 'arn:aws:apigateway:eu-west-1::/usageplans/another-plan/keys' },
      { action: 'apigateway:DELETE', resource: 'arn:aws:apigateway:eu-west-1::/apikeys/abc', resourceTags: {} },
      { action: 'apigateway:DELETE', resource: 'arn:aws:apigateway:eu-west-1::/apikeys/abc', resourceTags: { [USAGE_PLAN_TAG]: 'another-plan' } },
      { action: 'apigateway:DELETE', resource: `arn:aws:apigateway:eu-west-1::/usageplans/${planId}` },
      { action: 'apigateway:PUT', resource: 'arn:aws:apigateway:eu-west-1::/tags/arn:aws:apigateway:eu-west-1::/apikeys/abc', requestTags: { [USAGE_PLAN_TAG]: 'another-plan' } },
      { action: 'apigateway:PUT', resource: 'arn:aws:apigateway:eu-west-1::/tags/arn:aws:apigateway:eu-west-1::/apikeys/abc', requestTags: { owner: 'x' } },
      { action: 'apigateway:PATCH', resource: `arn:aws:apigateway:eu-west-1::/usageplans/${planId}` },
      { action: 'dynamodb:GetItem', resource: tableArn, leadingKey: 'KEYID#key_x' },
    ];
    const decisions = await Promise.all(refusals.map(async (c) => ({ c, allowed: await allowedBy(keyStatements, c) })));
    expect(decisions.filter((d) => d.allowed).map((d) => d.c)).toEqual([]);
  });

  it('refuses every API Gateway action on a foreign API key, stage or usage plan, and on their tags, even with this plan\'s tag in the request', async () => {
    const decisions = await decide(foreignCalls('eu-west-1', planId), (c) => evaluate({ fn: 'KeyAdminFunction', action: c.action, resource: c.resource, context: contextOf(c) }, role, [policyOf(keyStatements)]));
    expect(decisions.length).toBeGreaterThan(100);
    expect(decisions.filter((d) => d.allowed).map((d) => d.c)).toEqual([]);
  });
});

describe("the ingest function's role: no API Gateway key at all (a deleted user's keys are the key-management function's to close)", () => {
  const ingestRole = logicalId('AWS::IAM::Role', 'IngestFunctionRole');
  const ingestStatements = resources(t, 'AWS::IAM::Policy')
    .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === ingestRole))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
  const planId = `REF(${usagePlanId})`;
  const evaluateCall = (call: Call) => evaluate({ fn: 'IngestFunction', action: call.action, resource: call.resource, context: contextOf(call) }, ingestRole, [policyOf(ingestStatements)]);
  const allowed = async (call: Call) => (await evaluateCall(call)).allowed;

  it('may not delete even an API key of this usage plan', async () => {
    expect(await allowed({ action: 'apigateway:DELETE', resource: 'arn:aws:apigateway:eu-west-1::/apikeys/abc', resourceTags: { [USAGE_PLAN_TAG]: planId } })).toBe(false);
  });

  it('refuses every other API Gateway action, and every action on a foreign key, stage or plan', async () => {
    const decisions = await decide([...foreignCalls('eu-west-1', planId), { action: 'apigateway:POST', resource: 'arn:aws:apigateway:eu-west-1::/apikeys', requestTags: { [USAGE_PLAN_TAG]: planId } }], evaluateCall);
    expect(decisions.length).toBeGreaterThan(100);
    expect(decisions.filter((d) => d.allowed).map((d) => d.c)).toEqual([]);
  });
});

/**
 * The decisions on `calls`, leaving out the action and resource pairs that do
 * not exist in AWS (the Service Authorization Reference gives the action no
 * such resource type: iam-simulate answers `no.resource.types`); any other
 * simulation error fails.
 */
async function decide(calls: Call[], run: (c: Call) => Promise<{ allowed: boolean; decision: string }>): Promise<{ c: Call; allowed: boolean }[]> {
  const out = await Promise.all(calls.map(async (c) => ({ c, ...(await run(c)) })));
  for (const d of out) if (d.decision.startsWith('simulation error') && !d.decision.includes('no.resource.types')) throw new Error(`${d.c.action} on ${d.c.resource}: ${d.decision}`);
  return out.filter((d) => !d.decision.includes('no.resource.types')).map(({ c, allowed }) => ({ c, allowed }));
}

/**
 * Every API Gateway action (the HTTP verbs IAM names them by) on resources
 * that are not this stack's keys: an API key of another product, as it is or
 * tagged with another plan's id, another API's stage, another usage plan and
 * its keys, this stack's own usage plan itself, and the tags of each (both
 * ways of writing the tagged resource's ARN), each with this plan's tag in
 * the request (what a tagging call would carry).
 */
function foreignCalls(region: string, planId: string): Call[] {
  const arn = (path: string) => `arn:aws:apigateway:${region}::${path}`;
  const foreignKey = arn('/apikeys/otherproductkey1');
  const targets = [foreignKey, arn('/restapis/abc123/stages/prod'), arn('/restapis/abc123'), arn('/usageplans/other'), arn(`/usageplans/${planId}`), arn('/usageplans/other/keys'), arn('/usageplans/other/keys/otherproductkey1')];
  const resources = targets.flatMap((r) => [r, arn(`/tags/${r}`), arn(`/tags/${encodeURIComponent(r)}`)]);
  const planTag = { [USAGE_PLAN_TAG]: planId };
  return ['apigateway:GET', 'apigateway:POST', 'apigateway:PUT', 'apigateway:PATCH', 'apigateway:DELETE'].flatMap((action) =>
    resources.flatMap((resource) => [
      { action, resource, requestTags: planTag },
      { action, resource, requestTags: planTag, resourceTags: { [USAGE_PLAN_TAG]: 'another-plan' } },
      { action, resource },
    ]),
  );
}
