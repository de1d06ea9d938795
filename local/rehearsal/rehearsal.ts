/**
 * The rehearsal of a deployment: the cloud assembly `cdk deploy` would ship,
 * served offline. Every API of the template on its own loopback port
 * (rest-api.ts), every function run from its bundled asset (lambda-host.ts)
 * with its template environment, every AWS call checked against its role
 * (aws-endpoint.ts), the table in dynalite with its stream (streams.ts), the
 * queues in memory and the KMS keys (kms.ts), each event source mapping
 * (SQS standard and FIFO, the table's stream) delivering batches as Lambda
 * does (event-sources.ts), and each CloudFront distribution routing to its
 * API and bucket origins (distribution.ts; the buckets hold what the
 * template's BucketDeployments copy there, which the rehearsal does itself
 * instead of hosting their copier function). Generic over the template: a
 * new function, API or queue is served without a change here, and what
 * cannot be served fails at start.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { createTableInput } from '../../lambdas/store/table/table.js';
import type { WriteSummary } from '../../lambdas/store/changes/writer.js';
import { startDynalite } from '../dynalite.js';
import { KEEP_ALIVE_MS, servingWhenReady } from '../http-server.js';
import { readDataset, writeDataset } from '../loader.js';
import { withDemoKey, type LocalServer } from '../server.js';
import { LOCAL_KEY_ADMIN_PRINCIPAL } from '../sigv4-check.js';
import { synthesizeAssembly, withCdkJsonContext, type Assembly } from './assembly.js';
import { ApiKeyStore } from './api-keys.js';
import { DistributionRehearsal, deployedObjects, interpretedFunctions } from './distribution.js';
import { startAwsEndpoint, type AwsEndpoint, type KeySchema } from './aws-endpoint.js';
import { EventSources, type DrainResult, type SqsMessage } from './event-sources.js';
import { KmsStandIn } from './kms.js';
import { TableStream } from './streams.js';
import { ALLOW_LOOPBACK_SETTING } from '../../lambdas/delivery/settings.js';
import { ACCOUNT, REGION, describeDenial, type PolicyDocument } from './iam.js';
import { LambdaHost, type FunctionSpec } from './lambda-host.js';
import { RestApiRehearsal } from './rest-api.js';
import { Template, TemplateError, type Json } from './template.js';
import { webProductGrant, type WebProduct } from './web-product.js';

export interface RehearsalOptions {
  /** CDK context: `stage` and any key of bin/app.ts (cdk.json's context is merged under it). */
  readonly context: Record<string, string>;
  readonly dataFile: string;
  /** Pins the functions' clock (and the quota's period) to this instant, or to what this clock says at each invocation; default: real time. */
  readonly now?: Date | (() => Date);
  /** Each line a function writes (its logs), with the function's logical id. */
  readonly onLog?: (fn: string, line: string) => void;
  /**
   * The template's throttles (stage and usage plan), on unless false. Test
   * suites that send requests faster than a key's rate turn them off and say
   * so; test/rehearsal/ checks them on.
   */
  readonly throttle?: boolean;
  /** What the throttles' token buckets refill by, in ms (rest-api.ts); a test holds it still so that a busy machine's slow sends refill nothing. */
  readonly throttleClockMs?: () => number;
  /** Edits a copy of the synthesized template before it is served: tests show what a missing statement or a narrower grant does. */
  readonly amendTemplate?: (template: Json) => void;
  /**
   * Gives the queues a clock (`now`): a message made invisible comes back
   * once `now` reaches it, and drain() ends when nothing is due. Without it a
   * failed message is given out again at the next round (event-sources.ts).
   */
  readonly queueClock?: boolean;
  /**
   * Sets the local setting that lets the webhooks' outbound guard deliver to
   * loopback receivers (lambdas/delivery/settings.ts) on every function it
   * runs, as `npm start -- --allow-loopback-webhooks` does for the local
   * server: the template never sets it (test/infra/webhooks.test.ts).
   */
  readonly allowLoopbackWebhooks?: boolean;
}

export type { SqsMessage, DrainResult };

export interface Rehearsal {
  readonly assembly: Assembly;
  /** Each REST API's logical id and its base URL. */
  readonly apis: { id: string; url: string; rest: RestApiRehearsal }[];
  /**
   * Each custom domain of the template on its own port, routing as its
   * routing rules say (priority order, base path match, the rule's API).
   */
  readonly domains: { id: string; name: string; url: string }[];
  /** Each CloudFront distribution of the template on its own port, standing for its `*.cloudfront.net` name. */
  readonly distributions: { id: string; domainName: string; url: string }[];
  /** The URL of `path` (and query) on the API that has a method for it (GET unless said). */
  urlFor(path: string, method?: string): string;
  readonly endpoint: AwsEndpoint;
  /** Each function's role, by the function's logical id: what its AWS calls are evaluated against. */
  readonly roles: ReadonlyMap<string, { roleName: string; policies: PolicyDocument[] }>;
  /** The usage plans' ids, as the template's Refs resolve them. */
  readonly usagePlanIds: string[];
  /** API Gateway's API keys and usage-plan keys, as the functions' API Gateway calls left them. */
  readonly apiKeys: ApiKeyStore;
  /**
   * The web product's IAM principal (the local key pair, in the rehearsal's
   * account) and the one statement docs/managing-keys.md grants it, on the
   * template's KeyAdminInvokeArn output; no grant when the template has none.
   */
  readonly webProduct: WebProduct;
  readonly tableName: string;
  readonly storeEndpoint: string;
  readonly demoKey: LocalServer['demoKey'];
  /** The changes feeds' cursor key the rehearsed feed functions read (the template's one secret, its current value). */
  readonly cursorKey: Uint8Array;
  readonly summary: WriteSummary;
  /**
   * Makes every API key in the table a usage-plan key, as `npm run keys`
   * does in AWS (lambdas/key-admin/key-manager.ts); a key created without it is refused
   * by API Gateway (INVALID_API_KEY), here as there.
   */
  registerPlanKeys(): Promise<void>;
  /** Functions invoked, by logical id, in order. */
  readonly invocations: string[];
  /** Queue logical id → messages waiting. */
  readonly queues: Map<string, SqsMessage[]>;
  /** Sends a message as a producer would (outside any role: the web product's own). */
  send(queueId: string, body: string): void;
  /**
   * Delivers every event source's batches to its mapped function (queues and
   * the table's stream) until nothing is left that is due (with queueClock)
   * or at all: applied, dead-lettered, or (streams) given up. Counts the
   * queues' batches; a stream's are in `invocations`. `maxBatches` stops
   * after that many queue batches.
   */
  drain(opts?: { maxBatches?: number }): Promise<DrainResult>;
  /** The next `count` Invokes of one function by another are refused as Lambda refuses one past the account's concurrency (429). */
  throttleInvokes(count: number): void;
  /** Everything that would fail in AWS so far: denials, calls not interpreted, function errors. */
  problems(): string[];
  close(): Promise<void>;
}



/**
 * In AWS a key works only once `npm run keys` has made it a usage-plan key and
 * stored the plan key's value with it (`usage_identifier`, which the
 * authorizer returns as usageIdentifierKey; lambdas/key-admin/key-manager.ts). The loader
 * does not (it has no API Gateway), so the rehearsal does that step for every
 * key of the dataset, and its usage plans know exactly these keys.
 */
async function registerPlanKeys(client: DynamoDBDocumentClient, tableName: string, planKeys: Set<string>): Promise<Set<string>> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start, FilterExpression: '#t = :k', ExpressionAttributeNames: { '#t': 'type' }, ExpressionAttributeValues: { ':k': 'API_KEY' } }));
    for (const item of page.Items ?? []) {
      const usage = `plan-key-${String(item.key_id)}`;
      await client.send(new UpdateCommand({ TableName: tableName, Key: { pk: item.pk, sk: item.sk }, UpdateExpression: 'SET usage_identifier = :u', ExpressionAttributeValues: { ':u': usage } }));
      planKeys.add(usage);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return planKeys;
}

export async function startRehearsal(opts: RehearsalOptions): Promise<Rehearsal> {
  const assembly = synthesizeAssembly(withCdkJsonContext(opts.context));
  const loaded = await readDataset(opts.dataFile);
  const { dataset, demoKey } = withDemoKey(loaded.dataset);
  // The table's stream: every write the store answers, once the rehearsal's own load is done (streams.ts).
  let stream: TableStream | undefined;
  const store = await startDynalite(0, (keys) => {
    if (!stream) return;
    stream.append(keys.filter((k) => !k.removed), false);
    stream.append(keys.filter((k) => k.removed), true);
  });
  const client = createDocumentClient({ endpoint: store.endpoint });
  const closers: (() => Promise<unknown>)[] = [async () => client.destroy(), () => store.close()];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    let endpointUrl = '';
    const templateJson = structuredClone(assembly.template) as Json;
    opts.amendTemplate?.(templateJson);
    const template = new Template(templateJson, assembly.stackName, { queueUrl: (id) => `${endpointUrl}/${'123456789012'}/${id}` });

    // The table(s): created from the shared definition under the logical id; the key schema from the template.
    const tables = new Map<string, KeySchema>();
    for (const [tid] of [...template.ofType('AWS::DynamoDB::GlobalTable'), ...template.ofType('AWS::DynamoDB::Table')]) {
      const keySchema = template.prop(tid, 'KeySchema') as Json[];
      const hashOf = (ks: Json[]) => String(ks.find((k) => k.KeyType === 'HASH')?.AttributeName);
      const indexes = Object.fromEntries(((template.prop(tid, 'GlobalSecondaryIndexes') ?? []) as Json[]).map((i) => [String(i.IndexName), hashOf(i.KeySchema)]));
      tables.set(tid, { hash: hashOf(keySchema), indexes });
      await client.send(new CreateTableCommand(createTableInput(tid)));
    }
    if (tables.size !== 1) throw new TemplateError('DynamoDB', `expected one table, found ${tables.size}`);
    const tableName = [...tables.keys()][0]!;
    const summary = await writeDataset(client, tableName, dataset);
    // A new API key's createdDate on the rehearsal's clock, the one its functions read (the sweep compares the two).
    const apiKeys = new ApiKeyStore(
      template.ofType('AWS::ApiGateway::UsagePlan').map(([pid]) => template.ref(pid, pid)),
      () => (opts.now === undefined ? new Date() : typeof opts.now === 'function' ? opts.now() : opts.now),
    );
    let invokeThrottles = 0;
    const planKeys = await registerPlanKeys(client, tableName, apiKeys.planKeys);
    const invokeArn = templateJson.Outputs?.KeyAdminInvokeArn?.Value as Json;
    const webProduct: WebProduct = {
      ...LOCAL_KEY_ADMIN_PRINCIPAL,
      principalArn: `arn:aws:sts::${ACCOUNT}:assumed-role/web-product/rehearsal`,
      policies: invokeArn === undefined ? [] : [webProductGrant(String(template.resolve(invokeArn, 'Outputs.KeyAdminInvokeArn')))],
    };

    // Queues and the roles of every function.
    const queues = new Map<string, SqsMessage[]>(template.ofType('AWS::SQS::Queue').map(([qid]) => [qid, []]));
    /** Messages of a batch being processed, by receipt handle: the ones ChangeMessageVisibility may name. */
    const inFlight = new Map<string, SqsMessage>();
    const kms = new KmsStandIn(template.ofType('AWS::KMS::Key').map(([kid]) => ({ arn: template.getAtt(kid, 'Arn', kid), policy: template.prop(kid, 'KeyPolicy') as PolicyDocument })));
    const queueOfUrl = (url: string) => [...queues.keys()].find((qid) => url.endsWith(`/${qid}`));
    const roles = new Map<string, { roleName: string; policies: PolicyDocument[] }>();
    const specs: FunctionSpec[] = [];
    const assets = JSON.parse(readFileSync(join(assembly.dir, `${assembly.stackName}.assets.json`), 'utf8')) as { files: Record<string, { source: { path: string; packaging?: string } }> };
    const interpreted = interpretedFunctions(template);
    for (const [fid, f] of template.ofType('AWS::Lambda::Function')) {
      if (interpreted.has(fid)) continue; // a deployment's copier: its work is done by the rehearsal (distribution.ts)
      const where = `function ${fid}`;
      const p = f.Properties ?? {};
      const roleId = Template.targetOf(p.Role);
      if (!roleId) throw new TemplateError(where, 'Role is not a role of this template');
      const policies = template
        .ofType('AWS::IAM::Policy')
        .filter(([, pol]) => ((pol.Properties?.Roles ?? []) as Json[]).some((r) => Template.targetOf(r) === roleId))
        .map(([pid]) => template.prop(pid, 'PolicyDocument') as PolicyDocument);
      const inline = ((template.prop(roleId, 'Policies') ?? []) as Json[]).map((x) => x.PolicyDocument as PolicyDocument);
      if (template.prop(roleId, 'ManagedPolicyArns')) throw new TemplateError(roleId, 'managed policies are not rehearsed');
      roles.set(fid, { roleName: roleId, policies: [...policies, ...inline] });
      const key = String(template.prop(fid, 'Code.S3Key')).replace(/\.zip$/, '');
      const source = assets.files[key]?.source.path;
      if (!source) throw new TemplateError(where, `no asset ${key} in the assembly`);
      const environment = Object.fromEntries(Object.entries((template.prop(fid, 'Environment.Variables') ?? {}) as Record<string, Json>).map(([k, v]) => [k, String(v)]));
      specs.push({
        logicalId: fid,
        assetDir: join(assembly.dir, source),
        handler: String(p.Handler),
        runtime: String(p.Runtime),
        timeoutSeconds: Number(p.Timeout ?? 3),
        memoryMb: Number(p.MemorySize ?? 128),
        environment,
      });
    }

    // The template's secrets (the cursor key): a random value each, as GenerateSecretString would make.
    const secrets = new Map(template.ofType('AWS::SecretsManager::Secret').map(([sid]) => [Template.secretArn(sid), { current: randomBytes(32).toString('base64url') }]));
    // The function hosts, made once the endpoint's URL is known; a function invoking another reaches them through it.
    const hosts = new Map<string, LambdaHost>();
    const invocations: string[] = [];
    if (secrets.size !== 1) throw new TemplateError('SecretsManager', `expected one secret (the cursor key), found ${secrets.size}`);
    const endpoint = await startAwsEndpoint({
      secrets,
      dynaliteEndpoint: store.endpoint,
      tables,
      roles,
      queueArn: (url) => {
        const qid = queueOfUrl(url);
        return qid ? template.getAtt(qid, 'Arn', 'queue') : undefined;
      },
      onSend: (url, message) => sources.send(queueOfUrl(url)!, message),
      invokeThrottled: () => invokeThrottles > 0 && invokeThrottles-- > 0,
      // The receipt handle is the message id (drain); a message is in flight while its batch runs.
      onVisibility: (url, handle, seconds) => {
        const message = inFlight.get(handle);
        if (!message || queueOfUrl(url) === undefined) return false;
        message.visibilityTimeout = seconds;
        return true;
      },
      apiKeys,
      kms,
      invoke: (id) => {
        const host = hosts.get(id);
        if (!host) return undefined;
        return (event) => {
          invocations.push(id);
          return host.invoke(event);
        };
      },
    });
    endpointUrl = endpoint.url;
    closers.push(() => endpoint.close());
    const pinned = opts.now;
    const now = () => (pinned === undefined ? new Date() : typeof pinned === 'function' ? pinned() : pinned);
    const awsEnv: Record<string, string> = {
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_ENDPOINT_URL_DYNAMODB: endpoint.url,
      AWS_ENDPOINT_URL_SQS: endpoint.url,
      AWS_ENDPOINT_URL_API_GATEWAY: endpoint.url,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint.url,
      AWS_ENDPOINT_URL_LAMBDA: endpoint.url,
      AWS_ENDPOINT_URL_KMS: endpoint.url,
      ...(opts.allowLoopbackWebhooks ? { [ALLOW_LOOPBACK_SETTING]: 'true' } : {}),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...(opts.now ? { REHEARSAL_NOW: now().toISOString() } : {}),
    };
    // Environment values resolved only now: queue URLs need the endpoint's port.
    for (const spec of specs) {
      const environment = Object.fromEntries(
        Object.entries((template.prop(spec.logicalId, 'Environment.Variables') ?? {}) as Record<string, Json>).map(([k, v]) => [k, String(v)]),
      );
      hosts.set(spec.logicalId, new LambdaHost({ ...spec, environment }, { ...awsEnv, REHEARSAL_FUNCTION_ARN: template.getAtt(spec.logicalId, 'Arn', spec.logicalId) }, { clock: opts.now ? now : undefined, onLog: opts.onLog }));
    }
    closers.push(async () => Promise.all([...hosts.values()].map((h) => h.close())));

    // The stream starts now, after the rehearsal's own load (a stack is deployed, then loaded: its load would be on it too).
    const streamView = template.prop(tableName, 'StreamSpecification.StreamViewType') as string | undefined;
    if (streamView) stream = new TableStream(streamView, now);
    const sources = new EventSources({ template, queues, hosts, endpoint: () => endpoint, stream, now, clock: opts.queueClock === true, invocations, inFlight });

    const apis: Rehearsal['apis'] = [];
    for (const [apiId] of template.ofType('AWS::ApiGateway::RestApi')) {
      const rest = new RestApiRehearsal({ template, apiId, functions: hosts, now, planKeys, iam: webProduct, throttle: opts.throttle !== false, ...(opts.throttleClockMs ? { throttleClockMs: opts.throttleClockMs } : {}), onInvoke: (fn) => invocations.push(fn) });
      const server: Server = servingWhenReady(Promise.resolve((req, res) => void rest.handle(req, res)));
      await listenLocally(server, closers);
      apis.push({ id: apiId, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, rest });
    }

    // Custom domains in routing-rule mode: the rules' base paths, lowest priority first, decide the API.
    const domains: Rehearsal['domains'] = [];
    for (const [did] of template.ofType('AWS::ApiGateway::DomainName')) {
      const rules = template
        .ofType('AWS::ApiGatewayV2::RoutingRule')
        .filter(([, r]) => Template.targetOf(r.Properties?.DomainNameArn) === did)
        .map(([rid, r]) => {
          const actions = (r.Properties?.Actions ?? []) as Json[];
          const invoke = actions[0]?.InvokeApi;
          const apiId = Template.targetOf(invoke?.ApiId);
          const api = apis.find((a) => a.id === apiId);
          if (actions.length !== 1 || !api) throw new TemplateError(rid, 'only a rule invoking one REST API of this template is rehearsed');
          if (invoke.Stage !== api.rest.stageName) throw new TemplateError(rid, `stage ${invoke.Stage} is not the API's stage ${api.rest.stageName}`);
          const basePaths = ((template.prop(rid, 'Conditions') ?? []) as Json[]).flatMap((c) => {
            if (!c.MatchBasePaths) throw new TemplateError(rid, `condition ${Object.keys(c).join(', ')} is not rehearsed`);
            return c.MatchBasePaths.AnyOf as string[];
          });
          return { priority: Number(template.prop(rid, 'Priority')), basePaths, api, strip: invoke.StripBasePath === true };
        })
        .sort((a, b) => a.priority - b.priority);
      if (rules.length === 0) continue;
      const domainName = String(template.prop(did, 'DomainName'));
      const server: Server = servingWhenReady(
        Promise.resolve((req, res) => {
          const path = (req.url ?? '/').split('?')[0]!;
          const hit = rules.flatMap((r) => r.basePaths.filter((bp) => path === `/${bp}` || path.startsWith(`/${bp}/`)).map((bp) => ({ ...r, bp })))[0];
          if (!hit) {
            // No rule matches: API Gateway's own answer for a custom domain without a mapping for the path.
            res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'ForbiddenException' });
            return res.end('{"message":"Forbidden"}');
          }
          if (hit.strip) req.url = (req.url ?? '/').slice(hit.bp.length + 1) || '/';
          void hit.api.rest.handle(req, res, domainName);
        }),
      );
      await listenLocally(server, closers);
      domains.push({ id: did, name: domainName, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    }

    // CloudFront: each distribution on its own port, its buckets holding what the deployments copied.
    const distributions: Rehearsal['distributions'] = [];
    const distributionProblems: string[] = [];
    const buckets = deployedObjects(template, assembly.dir, assets.files);
    for (const [did] of template.ofType('AWS::CloudFront::Distribution')) {
      const distribution = new DistributionRehearsal(template, did, apis.map((a) => ({ id: a.id, url: a.url })), buckets, distributionProblems);
      const server: Server = servingWhenReady(Promise.resolve((req, res) => void distribution.handle(req, res).catch((error: unknown) => {
        distributionProblems.push(`distribution ${did}: ${String(error)}`);
        res.writeHead(502).end();
      })));
      await listenLocally(server, closers);
      distributions.push({ id: did, domainName: distribution.domainName, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    }

    const urlFor = (path: string, method = 'GET') => {
      const api = apis.find((a) => a.rest.serves(method, path.split('?')[0]!));
      if (!api) throw new Error(`no API of the template serves ${path}`);
      return `${api.url}${path}`;
    };

    return {
      assembly,
      apis,
      domains,
      distributions,
      urlFor,
      endpoint,
      roles,
      usagePlanIds: template.ofType('AWS::ApiGateway::UsagePlan').map(([pid]) => String(template.ref(pid, pid))),
      apiKeys,
      webProduct,
      tableName,
      storeEndpoint: store.endpoint,
      demoKey,
      cursorKey: Buffer.from([...secrets.values()][0]!.current, 'utf8'),
      summary,
      invocations,
      queues,
      registerPlanKeys: async () => {
        await registerPlanKeys(client, tableName, planKeys);
      },
      send: (queueId, body) => void sources.send(queueId, { body }),
      drain: (drainOpts) => sources.drain(drainOpts),
      throttleInvokes: (count) => void (invokeThrottles = count),
      problems: () => [
        ...endpoint.denials.map((d) => `denied: ${describeDenial(d)}`),
        ...endpoint.unsupported,
        ...apis.flatMap((a) => a.rest.functionErrors),
        ...sources.functionErrors,
        ...distributionProblems,
      ],
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Listens on a free loopback port; the server is closed, its connections cut, with the rehearsal. */
async function listenLocally(server: Server, closers: (() => Promise<unknown>)[]): Promise<void> {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
}
