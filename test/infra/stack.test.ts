/**
 * The CDK stack, checked with aws-cdk-lib/assertions. Expectations are derived
 * from the route table and the table module, so the infrastructure cannot
 * drift from what the handlers and the store expect.
 */
import { describe, expect, it } from '@jest/globals';
import { Match } from 'aws-cdk-lib/assertions';
import { EVENT_INDEX_ATTRIBUTES, INDEXES, USER_LIST_ATTRIBUTES, createTableInput } from '../../lambdas/store/table/table.js';
import { SURFACES, TABLE_READS, routes, type RouteDefinition } from '../../lambdas/routes.js';
import { DAILY_QUOTA } from '../../lib/gateway-responses.js';
import { PER_KEY_THROTTLE, EMBED_STAGE_THROTTLE } from '../../lib/rest-apis.js';
import { resources, synthApp, synthesized } from './support.js';
import { CURSOR_KEY_READS, INGEST_PARTITIONS, READ_ROUTE_PARTITIONS } from '../../lib/route-function.js';
import { INGEST } from '../../lib/ingest.js';
import { QUEUE_VISIBILITY_SECONDS } from '../../lambdas/core/retry-backoff.js';

const POWERTOOLS_VARIABLES = ['POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_LOGGER_SAMPLE_RATE'];

const staging = synthesized();
const production = synthesized({ stage: 'production' });
const t = staging.template;
const table: readonly RouteDefinition[] = routes;

const restApiId = (name: string) => resources(t, 'AWS::ApiGateway::RestApi').find(([id]) => id.includes(name))![0];
const publicApiId = restApiId('PublicApi');
const embedApiId = restApiId('EmbedApi');

/** Full path of an AWS::ApiGateway::Resource, following ParentId refs. */
function resourcePathOf(logicalId: string): string {
  const all = Object.fromEntries(resources(t, 'AWS::ApiGateway::Resource'));
  const parts: string[] = [];
  let current: string | undefined = logicalId;
  while (current && all[current]) {
    parts.unshift(all[current]!.Properties.PathPart);
    current = all[current]!.Properties.ParentId?.Ref;
  }
  return `/${parts.join('/')}`;
}

const methods = resources(t, 'AWS::ApiGateway::Method').map(([, m]) => ({
  api: m.Properties.RestApiId.Ref as string,
  verb: m.Properties.HttpMethod as string,
  path: m.Properties.ResourceId.Ref ? resourcePathOf(m.Properties.ResourceId.Ref) : '/',
  props: m.Properties,
}));

describe('table', () => {
  const expected = createTableInput('unused');
  it('has exactly the keys and GSIs of lambdas/store/table/table.ts', () => {
    t.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: expected.KeySchema,
      AttributeDefinitions: Match.arrayEquals(expected.AttributeDefinitions!),
      GlobalSecondaryIndexes: expected.GlobalSecondaryIndexes!.map((gsi) => ({ IndexName: gsi.IndexName, KeySchema: gsi.KeySchema, Projection: gsi.Projection })),
      BillingMode: 'PAY_PER_REQUEST',
      SSESpecification: { SSEEnabled: true },
      Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
    });
  });
  it("projects discovery's three place indexes keys only, the event and list indexes what their reads use, guest-index ALL", () => {
    const table = resources(t, 'AWS::DynamoDB::GlobalTable')[0]![1];
    const gsis = table.Properties.GlobalSecondaryIndexes as { IndexName: string; Projection: { ProjectionType: string; NonKeyAttributes?: string[] } }[];
    const projections = Object.fromEntries(gsis.map((g) => [g.IndexName, g.Projection.ProjectionType]));
    expect(projections).toEqual({ 'event-index': 'INCLUDE', 'user-events-index': 'INCLUDE', 'guest-index': 'ALL', 'user-created-index': 'INCLUDE', 'place-index': 'KEYS_ONLY', 'country-index': 'KEYS_ONLY', 'city-index': 'KEYS_ONLY' });
    const copied = Object.fromEntries(gsis.filter((g) => g.Projection.NonKeyAttributes).map((g) => [g.IndexName, g.Projection.NonKeyAttributes]));
    expect(copied).toEqual({ 'event-index': [...EVENT_INDEX_ATTRIBUTES], 'user-events-index': [...USER_LIST_ATTRIBUTES], 'user-created-index': [...USER_LIST_ATTRIBUTES] });
    // DynamoDB's limits: at most 20 an index, 100 over all of a table's indexes.
    for (const list of Object.values(copied)) expect(list!.length).toBeLessThanOrEqual(20);
    expect(Object.values(copied).flat().length).toBeLessThanOrEqual(100);
  });
  it('adds the place indexes one deploy at a time with placeIndexes (DynamoDB creates one index per table update)', () => {
    for (const [count, names] of [[0, []], [1, ['place-index']], [2, ['place-index', 'country-index']]] as const) {
      const table = resources(synthesized({ placeIndexes: String(count) }).template, 'AWS::DynamoDB::GlobalTable')[0]![1];
      const indexes = (table.Properties.GlobalSecondaryIndexes as { IndexName: string }[]).map((g) => g.IndexName);
      expect(indexes).toEqual(['event-index', 'user-events-index', 'guest-index', 'user-created-index', ...names]);
    }
  });
  it('lets a stack deployed with the last release take this version: with its keep contexts, no index changes', () => {
    // Every index as the last release's table has it (CloudFormation's GlobalSecondaryIndexes). DynamoDB cannot change
    // an index's keys or projection in place, and CloudFormation refuses such an update ("Cannot update GSI's
    // properties other than Provisioned Throughput"): a changed definition needs a context that keeps the released one
    // (docs/deploy.md, "Upgrading a table loaded by an earlier version"), or a new index under a new name.
    const keys = (n: number) => [{ AttributeName: `gsi${n}pk`, KeyType: 'HASH' }, { AttributeName: `gsi${n}sk`, KeyType: 'RANGE' }];
    const released = [
      { IndexName: 'event-index', KeySchema: keys(1), Projection: { ProjectionType: 'ALL' } },
      { IndexName: 'user-events-index', KeySchema: keys(2), Projection: { ProjectionType: 'ALL' } },
      { IndexName: 'guest-index', KeySchema: keys(3), Projection: { ProjectionType: 'ALL' } },
      { IndexName: 'user-created-index', KeySchema: keys(4), Projection: { ProjectionType: 'ALL' } },
      { IndexName: 'place-index', KeySchema: keys(5), Projection: { ProjectionType: 'KEYS_ONLY' } },
      { IndexName: 'country-index', KeySchema: keys(6), Projection: { ProjectionType: 'KEYS_ONLY' } },
      { IndexName: 'city-index', KeySchema: keys(7), Projection: { ProjectionType: 'KEYS_ONLY' } },
    ];
    const gsis = (template: typeof t) => resources(template, 'AWS::DynamoDB::GlobalTable')[0]![1].Properties.GlobalSecondaryIndexes as { IndexName: string }[];
    expect(gsis(synthesized({ indexProjection: 'ALL' }).template)).toEqual(released);
    // A new stack gets what the code defines; only the indexes a keep context covers differ from the release.
    const fresh = gsis(t);
    expect(fresh.map((g) => g.IndexName)).toEqual(released.map((g) => g.IndexName));
    expect(fresh.filter((g, i) => JSON.stringify(g) !== JSON.stringify(released[i])).map((g) => g.IndexName)).toEqual([INDEXES.event.name, INDEXES.userEvents.name, INDEXES.userCreated.name]);
    expect(() => synthApp({ indexProjection: 'KEYS_ONLY' })).toThrow(/indexProjection/);
  });
  it('is retained and deletion-protected in production only', () => {
    production.template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ Replicas: [Match.objectLike({ DeletionProtectionEnabled: true })] }),
    });
    t.hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Delete' });
  });
});

/** The key-management API's resources and the webhooks' have their own files (key-admin.test.ts, webhooks.test.ts); these tests are about the rest. */
const notKeyAdmin = ([id]: [string, unknown]) => !/^(KeyAdmin|MonitoringKeyAdmin|MonitoringKeyCreates|Webhooks|MonitoringWebhook)/.test(id);

describe('functions', () => {
  const fns = resources(t, 'AWS::Lambda::Function').filter(notKeyAdmin);

  it('has one function per route plus the authorizer, the old-prefix redirect and the ingest function', () => {
    expect(fns).toHaveLength(routes.length + 3);
    expect(fns.some(([, f]) => f.Properties.Description === 'ANY /api/ext/v1/… → 308 /api/public/v1/…')).toBe(true);
    for (const route of routes) {
      expect(fns.some(([, f]) => f.Properties.Description === `${route.method} ${SURFACES[route.surface]}${route.path}`)).toBe(true);
    }
  });

  const isIngest = ([, f]: (typeof fns)[number]) => String(f.Properties.Description).startsWith('Applies change records');
  const readsCursorKey = ([, f]: (typeof fns)[number]) => table.some((r) => r.cursorKey === true && f.Properties.Description === `${r.method} ${SURFACES[r.surface]}${r.path}`);
  it('runs Node 24 on arm64 with the configuration the handlers parse', () => {
    for (const entry of fns.filter((e) => !isIngest(e))) {
      const [, f] = entry;
      expect(f.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        MemorySize: 512,
        Timeout: 6,
        Handler: 'index.handler',
      });
      // The cursor key's ARN only where the route declares it (lambdas/routes.ts, `cursorKey`).
      expect(Object.keys(f.Properties.Environment.Variables).sort()).toEqual(
        ['EMBED_CACHE_MAX_AGE', 'NODE_OPTIONS', 'SERVICE_NAME', 'SITE_URL', 'TABLE_NAME', 'USER_EVENTS_VARIANT', ...POWERTOOLS_VARIABLES, ...(readsCursorKey(entry) ? ['CURSOR_SECRET_ARN'] : [])].sort(),
      );
      // Text: Lambda's JSON format would impose its own log level over Powertools' (lib/route-function.ts).
      expect(f.Properties.LoggingConfig).toEqual({ LogFormat: 'Text', LogGroup: { Ref: expect.any(String) } });
    }
  });

  it('gives every function its own log group with a retention', () => {
    const groups = resources(t, 'AWS::Logs::LogGroup').filter(notKeyAdmin);
    // One per function, plus one access log per API.
    expect(groups).toHaveLength(routes.length + 3 + 2);
    for (const [, g] of groups) expect(g.Properties.RetentionInDays).toBe(30);
    for (const [, g] of resources(production.template, 'AWS::Logs::LogGroup')) expect(g.Properties.RetentionInDays).toBe(90);
  });
});

describe('IAM: read-only, and only what each function needs', () => {
  const policies = resources(t, 'AWS::IAM::Policy').filter(notKeyAdmin);
  type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
  const statements = policies.flatMap(([id, p]) => (p.Properties.PolicyDocument.Statement as Statement[]).map((s) => ({ id, ...s })));

  const ingestStatements = statements.filter((s) => s.id.startsWith('Ingest'));
  const otherStatements = statements.filter((s) => !s.id.startsWith('Ingest'));

  it('grants the HTTP functions and the authorizer no DynamoDB action but the three reads, and no wildcard action', () => {
    const actions = new Set(otherStatements.flatMap((s) => [s.Action].flat()));
    expect([...actions].sort()).toEqual([...TABLE_READS, 'logs:CreateLogStream', 'logs:PutLogEvents', ...CURSOR_KEY_READS].sort());
  });

  it("lets exactly the feed functions read the cursor key, and nothing else of Secrets Manager", () => {
    const secrets = resources(t, 'AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(1);
    const [secretId] = secrets[0]!;
    const reading = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('secretsmanager:')));
    // Which version holds which stage (DescribeSecret: one answer, a snapshot) and the values, on that secret alone.
    expect(reading.every((s) => JSON.stringify([s.Action].flat().sort()) === JSON.stringify([...CURSOR_KEY_READS].sort()) && JSON.stringify(s.Resource) === JSON.stringify({ Ref: secretId }))).toBe(true);
    const readers = reading.map((s) => s.id.replace(/Role.*$/, '')).sort();
    expect(readers).toEqual(table.filter((r) => r.cursorKey).map((r) => r.id).sort());
  });

  it('lets only the ingest function write event data: on the base table, deleting only feed items, no wildcard', () => {
    const writes = statements.filter((s) => [s.Action].flat().some((a) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(a)));
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.every((s) => s.id.startsWith('Ingest'))).toBe(true);
    const tableActions = ingestStatements.flatMap((s) => [s.Action].flat()).filter((a) => a.startsWith('dynamodb:'));
    expect(tableActions.sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(JSON.stringify(ingestStatements.filter((s) => [s.Action].flat().includes('dynamodb:PutItem')).map((s) => s.Resource))).not.toContain('/index/');
    // Event data, and of key management's items only those a user's deletion closes (never a create request).
    for (const s of ingestStatements.filter((x) => [x.Action].flat().includes('dynamodb:PutItem'))) expect(s.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...INGEST_PARTITIONS] } });
    // A delete only of the changes feeds' items (a member leaving a scope's list), never of event data.
    expect(ingestStatements.filter((s) => [s.Action].flat().includes('dynamodb:DeleteItem'))).toEqual([
      expect.objectContaining({ Action: 'dynamodb:DeleteItem', Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['FEED#*'] } } }),
    ]);
    expect(ingestStatements.flatMap((s) => [s.Action].flat()).some((a) => a.endsWith('*'))).toBe(false);
  });

  it("grants each HTTP function exactly the read actions its route declares (tableReads), no write action", () => {
    const policies = resources(t, 'AWS::IAM::Policy');
    for (const route of table) {
      const own = policies.filter(([pid]) => pid.startsWith(`${route.id}Role`));
      const actions = own.flatMap(([, p]) => (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => [s.Action].flat()));
      expect([route.id, [...new Set(actions.filter((a) => a.startsWith('dynamodb:')))].sort()]).toEqual([route.id, [...route.tableReads].sort()]);
      for (const a of route.tableReads) expect(TABLE_READS).toContain(a);
    }
  });

  it("scopes table reads to event data's partitions of the base table (dynamodb:LeadingKeys) and Query on its indexes by name", () => {
    const reads = otherStatements.filter((s) => [s.Action].flat().some((a: string) => a.startsWith('dynamodb:')) && !s.id.startsWith('Authorizer'));
    const onIndexes = reads.filter((s) => JSON.stringify(s.Resource).includes('/index/'));
    const onTable = reads.filter((s) => !JSON.stringify(s.Resource).includes('/index/'));
    const reading = table.filter((r) => r.tableReads.length > 0);
    expect(onTable).toHaveLength(reading.length);
    for (const s of onTable) expect(s.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...READ_ROUTE_PARTITIONS] } });
    expect(onIndexes).toHaveLength(reading.filter((r) => (r.tableReads as readonly string[]).includes('dynamodb:Query')).length);
    for (const s of onIndexes) {
      expect(s.Action).toBe('dynamodb:Query');
      const joined = JSON.stringify(s.Resource);
      for (const index of Object.values(INDEXES)) expect(joined).toContain(`/index/${index.name}`);
      expect(joined).not.toContain('/index/*');
    }
  });

  it('lets the authorizer read API key items and user items only (GetItem)', () => {
    const authorizerReads = statements.filter((s) => s.id.startsWith('Authorizer') && [s.Action].flat().includes('dynamodb:GetItem'));
    expect(authorizerReads).toEqual([
      expect.objectContaining({ Action: 'dynamodb:GetItem', Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APIKEY#*', 'USER#*'] } } }),
    ]);
  });

  it('attaches no managed policy to function roles', () => {
    for (const [id, role] of resources(t, 'AWS::IAM::Role')) {
      if (id.includes('CloudWatchRole')) continue; // API Gateway's account logging role (see lib/nag.ts)
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('Public REST API', () => {
  const publicMethods = methods.filter((m) => m.api === publicApiId);

  const legacy = ['ANY /api/ext/v1', 'ANY /api/ext/v1/{proxy+}'];

  it('has one GET method per Public route, the old-prefix redirect, and nothing else', () => {
    const expected = routes.filter((r) => r.surface === 'public').map((r) => `GET ${SURFACES.public}${r.path}`);
    expect(publicMethods.map((m) => `${m.verb} ${m.path}`).sort()).toEqual([...expected, ...legacy].sort());
  });

  it("puts CUSTOM auth and an API key on every 'key' route, and neither on the document (PRODUCT P15)", () => {
    for (const route of table.filter((r) => r.surface === 'public')) {
      const method = publicMethods.find((m) => m.verb === 'GET' && m.path === `${SURFACES.public}${route.path}`)!;
      if (route.auth === 'key') expect(method.props).toMatchObject({ AuthorizationType: 'CUSTOM', ApiKeyRequired: true });
      else {
        expect(method.props).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false });
        expect(method.props.AuthorizerId).toBeUndefined();
      }
    }
  });

  it('redirects /api/ext/v1 and everything below it, with or without a key, through the redirect function', () => {
    const redirectFn = resources(t, 'AWS::Lambda::Function').find(([, f]) => String(f.Properties.Description).startsWith('ANY /api/ext/v1'))![0];
    for (const m of publicMethods.filter((x) => legacy.includes(`${x.verb} ${x.path}`))) {
      expect(m.props).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false, Integration: { Type: 'AWS_PROXY' } });
      expect(JSON.stringify(m.props.Integration.Uri)).toContain(redirectFn);
    }
  });

  it('gives the documents and the redirect no table access', () => {
    const policies = resources(t, 'AWS::IAM::Policy').filter(notKeyAdmin);
    for (const id of [...table.filter((r) => r.tableReads.length === 0).map((r) => r.id), 'LegacyRedirect']) {
      const own = policies.filter(([pid]) => pid.startsWith(id));
      expect(JSON.stringify(own)).not.toContain('dynamodb:');
    }
  });

  it('uses a REQUEST authorizer with caching off and no identity source', () => {
    t.hasResourceProperties('AWS::ApiGateway::Authorizer', { Type: 'REQUEST', AuthorizerResultTtlInSeconds: 0, IdentitySource: Match.absent() });
  });

  it('takes usage-plan keys from the authorizer and meters 1000 per day per key', () => {
    t.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: Match.anyValue(), ApiKeySourceType: 'AUTHORIZER' });
    t.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Quota: { Limit: DAILY_QUOTA, Period: 'DAY' },
      Throttle: { RateLimit: PER_KEY_THROTTLE.rateLimit, BurstLimit: PER_KEY_THROTTLE.burstLimit },
    });
  });

  it('sends no CORS: no OPTIONS method', () => {
    expect(publicMethods.filter((m) => m.verb === 'OPTIONS')).toEqual([]);
  });
});

describe('Embed REST API', () => {
  const embedMethods = methods.filter((m) => m.api === embedApiId);

  it('has one GET per Embed route without auth', () => {
    const gets = embedMethods.filter((m) => m.verb === 'GET');
    expect(gets.map((m) => m.path).sort()).toEqual(routes.filter((r) => r.surface === 'embed').map((r) => `${SURFACES.embed}${r.path}`).sort());
    for (const m of gets) expect(m.props.AuthorizationType).toBe('NONE');
  });

  it('answers OPTIONS on every resource, a catch-all included, with 204 and the CORS headers', () => {
    const options = embedMethods.filter((m) => m.verb === 'OPTIONS');
    expect(options.map((m) => m.path)).toEqual(expect.arrayContaining(['/{proxy+}', `${SURFACES.embed}/events/{eventId}`, `${SURFACES.embed}/users/{username}/events`]));
    for (const m of options) {
      expect(m.props.Integration.Type).toBe('MOCK');
      expect(m.props.Integration.IntegrationResponses[0]).toMatchObject({
        StatusCode: '204',
        ResponseParameters: {
          'method.response.header.Access-Control-Allow-Origin': "'*'",
          'method.response.header.Access-Control-Allow-Methods': "'GET,OPTIONS'",
          'method.response.header.Access-Control-Allow-Headers': "'Content-Type'",
        },
      });
    }
  });

  it('throttles the stage to protect the table', () => {
    t.hasResourceProperties('AWS::ApiGateway::Stage', {
      RestApiId: { Ref: embedApiId },
      MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingRateLimit: EMBED_STAGE_THROTTLE.rateLimit, ThrottlingBurstLimit: EMBED_STAGE_THROTTLE.burstLimit })]),
    });
  });
});

describe('gateway responses', () => {
  const responses = resources(t, 'AWS::ApiGateway::GatewayResponse').map(([, r]) => ({
    api: r.Properties.RestApiId.Ref as string,
    type: r.Properties.ResponseType as string,
    status: r.Properties.StatusCode as string | undefined,
    headers: r.Properties.ResponseParameters as Record<string, string>,
    body: r.Properties.ResponseTemplates['application/json'] as string,
  }));
  const on = (api: string, type: string) => responses.find((r) => r.api === api && r.type === type);

  it.each([
    ['UNAUTHORIZED', '401', 'Not authenticated.'],
    ['ACCESS_DENIED', '403', 'Insufficient API key scope.'],
    ['INVALID_API_KEY', '401', 'Not authenticated.'],
    ['QUOTA_EXCEEDED', '429', 'Too many requests. Please try again later.'],
    ['THROTTLED', '429', 'Too many requests. Please try again later.'],
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'Resource not found.'],
    ['RESOURCE_NOT_FOUND', '404', 'Resource not found.'],
    ['DEFAULT_5XX', '500', 'Internal server error.'],
  ])('Public %s answers %s with the envelope', (type, status, message) => {
    const r = on(publicApiId, type);
    expect(r).toMatchObject({ status, headers: expect.objectContaining({ 'gatewayresponse.header.Content-Type': "'application/json'" }) });
    expect(JSON.parse(r!.body)).toEqual({ success: false, message });
  });

  it('sends the quota headers of PRODUCT P4 that are literals by default, and maps the rest from the authorizer context only with quotaHeaders=context', () => {
    expect(on(publicApiId, 'QUOTA_EXCEEDED')!.headers).toEqual({
      'gatewayresponse.header.Content-Type': "'application/json'",
      'gatewayresponse.header.X-RateLimit-Limit': "'1000'",
      'gatewayresponse.header.X-RateLimit-Remaining': "'0'",
    });
    const withContext = resources(synthesized({ quotaHeaders: 'context' }).template, 'AWS::ApiGateway::GatewayResponse').find(
      ([, r]) => r.Properties.ResponseType === 'QUOTA_EXCEEDED',
    )!;
    expect(withContext[1].Properties.ResponseParameters).toMatchObject({
      'gatewayresponse.header.X-RateLimit-Limit': "'1000'",
      'gatewayresponse.header.X-RateLimit-Remaining': "'0'",
      'gatewayresponse.header.X-RateLimit-Reset': 'context.authorizer.rateLimitReset',
      'gatewayresponse.header.Retry-After': 'context.authorizer.retryAfter',
    });
    expect(() => synthApp({ quotaHeaders: 'dynamic' })).toThrow(/quotaHeaders/);
  });

  it("says the key's daily quota on every Public gateway response, and never on the Embed API's", () => {
    for (const r of responses.filter((x) => x.api === publicApiId)) expect(r.headers['gatewayresponse.header.X-RateLimit-Limit']).toBe("'1000'");
    for (const r of responses.filter((x) => x.api === embedApiId)) expect(r.headers['gatewayresponse.header.X-RateLimit-Limit']).toBeUndefined();
  });

  it('keeps API Gateway messages for other 4xx inside the envelope', () => {
    expect(on(publicApiId, 'DEFAULT_4XX')).toMatchObject({ status: undefined, body: '{"success":false,"message":$context.error.messageString}' });
  });

  it('gives every Embed gateway response CORS and the envelope', () => {
    const embed = responses.filter((r) => r.api === embedApiId);
    expect(embed.map((r) => r.type).sort()).toEqual(['DEFAULT_4XX', 'DEFAULT_5XX', 'MISSING_AUTHENTICATION_TOKEN', 'RESOURCE_NOT_FOUND', 'THROTTLED']);
    for (const r of embed) expect(r.headers['gatewayresponse.header.Access-Control-Allow-Origin']).toBe("'*'");
    expect(responses.filter((r) => r.api === publicApiId).some((r) => 'gatewayresponse.header.Access-Control-Allow-Origin' in r.headers)).toBe(false);
  });
});

describe('operations', () => {
  it('writes JSON access logs on both stages, without keys', () => {
    const stages = resources(t, 'AWS::ApiGateway::Stage').filter(notKeyAdmin);
    expect(stages).toHaveLength(2);
    for (const [, s] of stages) {
      const format = JSON.parse(s.Properties.AccessLogSetting.Format);
      expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status', keyId: '$context.authorizer.principalId' });
      expect(s.Properties.AccessLogSetting.Format).not.toMatch(/header|apiKey/i);
    }
  });

  it('alarms on 5xx rate and p99 latency per API, errors and throttles per function', () => {
    const alarms = resources(t, 'AWS::CloudWatch::Alarm').filter(notKeyAdmin);
    // Per API: 5xx rate and p99; per function (routes, authorizer, legacy redirect, ingest): errors and throttles;
    // ingest: dead letters, queue lag and change lag; DynamoDB throttles.
    expect(alarms).toHaveLength(2 * 2 + 2 * (routes.length + 3) + 3 + 1);
    const metrics = alarms.map(([, a]) => a.Properties.MetricName).sort();
    expect(metrics.filter((m) => m === '5XXError')).toHaveLength(2);
    expect(metrics.filter((m) => m === 'Latency')).toHaveLength(2);
  });

  it('sends alarms to the SNS topic given by context', () => {
    const withTopic = synthesized({ alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' });
    for (const [, a] of resources(withTopic.template, 'AWS::CloudWatch::Alarm')) {
      expect(a.Properties.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:123456789012:ops']);
    }
  });

  it('outputs both base URLs, the table name and the usage plan id', () => {
    const outputs = Object.keys(t.findOutputs('*'));
    expect(outputs).toEqual(expect.arrayContaining(['PublicApiUrl', 'EmbedApiUrl', 'TableName', 'UsagePlanId']));
    expect(JSON.stringify(t.findOutputs('PublicApiUrl'))).toContain('api/public/v1');
  });
});

describe('change-stream ingest', () => {
  const queues = resources(t, 'AWS::SQS::Queue');
  const dlq = queues.find(([id]) => id.startsWith('IngestDeadLetters'))!;
  const queue = queues.find(([id]) => id.includes('IngestQueue'))!;

  it('has an encrypted, TLS-only ingest queue with a dead-letter queue after 17 receives (backoff: as long as 10 full timeouts)', () => {
    expect(queue[1].Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 720,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq[0], 'Arn'] }, maxReceiveCount: 17 },
    });
    // The backoff's cap is the queue's timeout, six times the function's.
    expect(QUEUE_VISIBILITY_SECONDS).toBe(INGEST.timeoutSeconds * 6);
    expect(dlq[1].Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    const policies = resources(t, 'AWS::SQS::QueuePolicy').filter(notKeyAdmin).map(([, p]) => JSON.stringify(p.Properties.PolicyDocument));
    expect(policies.filter((p) => p.includes('aws:SecureTransport'))).toHaveLength(2);
  });

  it("keeps a dead-lettered record longer than the queue keeps anything: SQS counts its retention from its first send, so the dead-letter queue's must be the longer (14 days against 7: at least 7 days to redrive it)", () => {
    const sourceDays = Number(queue[1].Properties.MessageRetentionPeriod) / 86_400;
    const deadLetterDays = Number(dlq[1].Properties.MessageRetentionPeriod) / 86_400;
    expect({ sourceDays, deadLetterDays }).toEqual({ sourceDays: 7, deadLetterDays: 14 });
    expect(deadLetterDays - sourceDays).toBeGreaterThanOrEqual(7);
  });

  it('feeds the ingest function with partial batch responses', () => {
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queue[0], 'Arn'] },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const ingest = resources(t, 'AWS::Lambda::Function').find(([, f]) => String(f.Properties.Description).startsWith('Applies change records'))!;
    expect(ingest[1].Properties).toMatchObject({ Timeout: 120, Runtime: 'nodejs24.x', Environment: { Variables: { TABLE_NAME: expect.anything(), INGEST_QUEUE_URL: { Ref: queue[0] } } } });
  });

  it('lets the ingest function send its continuations to its own queue, and to no other', () => {
    const policies = resources(t, 'AWS::IAM::Policy').filter(notKeyAdmin);
    type Statement = { Action: string | string[]; Resource: unknown };
    const sends = policies.flatMap(([id, p]) => (p.Properties.PolicyDocument.Statement as Statement[]).map((st) => ({ id, ...st }))).filter((st) => [st.Action].flat().some((a) => a.startsWith('sqs:Send')));
    expect(sends.length).toBe(1);
    expect(sends[0]!.id.startsWith('Ingest')).toBe(true);
    expect(sends[0]!.Resource).toEqual({ 'Fn::GetAtt': [queue[0], 'Arn'] });
  });

  it('lets the ingest function change the visibility of its own queue\'s messages (a waiting record\'s backoff), and of no other', () => {
    const policies = resources(t, 'AWS::IAM::Policy').filter(notKeyAdmin);
    type Statement = { Action: string | string[]; Resource: unknown };
    const changes = policies.flatMap(([id, p]) => (p.Properties.PolicyDocument.Statement as Statement[]).map((st) => ({ id, ...st }))).filter((st) => [st.Action].flat().some((a) => a === 'sqs:ChangeMessageVisibility' || a === 'sqs:*'));
    expect(changes.length).toBeGreaterThan(0);
    for (const st of changes) {
      expect(st.id.startsWith('Ingest')).toBe(true);
      expect(st.Resource).toEqual({ 'Fn::GetAtt': [queue[0], 'Arn'] });
    }
  });

  it('alarms on any dead letter and on ingest lag', () => {
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 0, Namespace: 'AWS/SQS' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 300, Namespace: 'AWS/SQS' });
  });

  it('outputs the queue a web product sends to, and the DLQ', () => {
    for (const name of ['IngestQueueUrl', 'IngestQueueArn', 'IngestDeadLetterQueueUrl']) t.hasOutput(name, Match.anyValue());
  });

  it('lets derived tombstones expire (TTL)', () => {
    t.hasResourceProperties('AWS::DynamoDB::GlobalTable', { TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true } });
  });
});

describe('settings from context', () => {
  it('passes serviceName, userEventsVariant, siteUrl and the Embed max-age to every HTTP function and the authorizer', () => {
    const custom = synthesized({ serviceName: 'gatherly', userEventsVariant: 'dated', siteUrl: 'https://gatherly.example', embedCacheMaxAge: '30' });
    for (const [, f] of resources(custom.template, 'AWS::Lambda::Function').filter(notKeyAdmin).filter(([, f]) => !String(f.Properties.Description).startsWith('Applies change records'))) {
      expect(f.Properties.Environment.Variables).toMatchObject({ SERVICE_NAME: 'gatherly', USER_EVENTS_VARIANT: 'dated', SITE_URL: 'https://gatherly.example', EMBED_CACHE_MAX_AGE: '30' });
    }
  });

  it('rejects a bad value by name', () => {
    expect(() => synthApp({ userEventsVariant: 'fancy' })).toThrow(/userEventsVariant/);
    expect(() => synthApp({ stage: 'dev' })).toThrow(/stage/);
    expect(() => synthApp({ domainName: 'api.example.com' })).toThrow(/certificateArn/);
  });

  it('maps a custom domain to both APIs without stripping their base paths', () => {
    const withDomain = synthesized({ domainName: 'api.example.com', certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' });
    withDomain.template.hasResourceProperties('AWS::ApiGateway::DomainName', { DomainName: 'api.example.com', RoutingMode: 'ROUTING_RULE_ONLY', SecurityPolicy: 'TLS_1_2' });
    const rules = resources(withDomain.template, 'AWS::ApiGatewayV2::RoutingRule').map(([, r]) => r.Properties);
    expect(rules.map((r) => r.Conditions[0].MatchBasePaths.AnyOf[0]).sort()).toEqual(['api/embed/v1', 'api/ext/v1', 'api/public/v1']);
    const apiOf = (path: string) => rules.find((r) => r.Conditions[0].MatchBasePaths.AnyOf[0] === path)!.Actions[0].InvokeApi.ApiId;
    expect(apiOf('api/ext/v1')).toEqual(apiOf('api/public/v1'));
    for (const r of rules) expect(r.Actions[0].InvokeApi).toMatchObject({ Stage: 'staging', StripBasePath: false });
  });
});
