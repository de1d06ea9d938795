/**
 * One REST API of the template, served over HTTP: its resources, methods and
 * path parameters from `AWS::ApiGateway::*`, its authorizer, usage plans,
 * stage throttle and gateway responses as the template sets them, each
 * method's integration invoking its function's bundled asset (lambda-host.ts).
 * Checks run in API Gateway's order: size limits → resource and method →
 * stage throttle → authorization → API key, plan throttle and quota →
 * integration.
 *
 * What the template holds that this cannot serve fails at start, naming the
 * method: an integration type other than AWS_PROXY and MOCK, an authorizer
 * type other than REQUEST, an AuthorizationType other than NONE, CUSTOM and
 * AWS_IAM. AWS_IAM is served as API Gateway authorizes it
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/permissions.html):
 * the SigV4 signature is verified (local/sigv4-check.ts; the documented local
 * key pair stands in for the web product's IAM credentials), then the
 * signer's identity policies, with the API's resource policy, must allow
 * `execute-api:Invoke` on the method's ARN
 * (`arn:aws:execute-api:{region}:{account}:{api}/{stage}/{METHOD}/{path}`),
 * evaluated with iam-simulate against the grant the rehearsal gives the web
 * product (web-product.ts) and the template's `Policy` of the API. No
 * signature: MISSING_AUTHENTICATION_TOKEN; a bad one: INVALID_SIGNATURE; not
 * allowed: ACCESS_DENIED (each 403 unless the template's gateway responses
 * say otherwise). The caller is put in
 * requestContext.identity as API Gateway does.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { headersOf, queryOf } from '../gateway.js';
import { methodArnTooLong, sizeLimitBreach } from '../request-limits.js';
import { parseRequestTarget } from '../request-target.js';
import { verifySigV4 } from '../sigv4-check.js';
import { ACCOUNT, REGION, evaluateAs, type PolicyDocument } from './iam.js';
import { watchLimit } from './contention.js';
import type { LambdaHost } from './lambda-host.js';
import { Template, TemplateError, type Json } from './template.js';
import type { WebProduct } from './web-product.js';

/** API Gateway's default status and message per gateway response type (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html). */
const RESPONSE_TYPES: Record<string, { status: number; message: string }> = {
  ACCESS_DENIED: { status: 403, message: 'User is not authorized to access this resource' },
  API_CONFIGURATION_ERROR: { status: 500, message: 'Internal server error' },
  AUTHORIZER_CONFIGURATION_ERROR: { status: 500, message: 'Internal server error' },
  AUTHORIZER_FAILURE: { status: 500, message: 'Internal server error' },
  INTEGRATION_FAILURE: { status: 504, message: 'Internal server error' },
  INTEGRATION_TIMEOUT: { status: 504, message: 'Endpoint request timed out' },
  INVALID_SIGNATURE: { status: 403, message: 'The request signature we calculated does not match the signature you provided.' },
  INVALID_API_KEY: { status: 403, message: 'Forbidden' },
  MISSING_AUTHENTICATION_TOKEN: { status: 403, message: 'Missing Authentication Token' },
  QUOTA_EXCEEDED: { status: 429, message: 'Limit Exceeded' },
  REQUEST_TOO_LARGE: { status: 413, message: 'Request Too Long' },
  RESOURCE_NOT_FOUND: { status: 404, message: 'Not Found' },
  THROTTLED: { status: 429, message: 'Too Many Requests' },
  UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  /** Not a type of its own: a Lambda proxy integration whose function fails answers 502 "Internal server error", under DEFAULT_5XX. */
  LAMBDA_ERROR: { status: 502, message: 'Internal server error' },
};

/**
 * API Gateway's integration timeout for REST APIs, 29 s by default: past it the
 * client gets 504 INTEGRATION_TIMEOUT whatever the function's own Timeout
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html).
 * Counted in wall time stretched by the machine's contention (contention.ts).
 */
export const INTEGRATION_TIMEOUT_MS = 29_000;

interface Method {
  readonly id: string;
  readonly httpMethod: string;
  readonly resourcePath: string;
  readonly authorizationType: 'NONE' | 'CUSTOM' | 'AWS_IAM';
  readonly authorizer?: { fn: string; identitySources: string[] };
  readonly apiKeyRequired: boolean;
  readonly integration: { type: 'AWS_PROXY'; fn: string; timeoutMs: number } | { type: 'MOCK'; status: number; headers: Record<string, string>; body: string };
}

interface Node {
  readonly part: string;
  readonly children: Node[];
  readonly methods: Map<string, Method>;
  readonly path: string;
}

class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly clockMs: () => number,
  ) {
    this.tokens = burst;
    this.last = clockMs();
  }
  take(): boolean {
    const now = this.clockMs();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export interface RestApiOptions {
  readonly template: Template;
  readonly apiId: string;
  readonly functions: ReadonlyMap<string, LambdaHost>;
  /** The instant the usage plan's quota period is counted in. */
  readonly now: () => Date;
  /** The usage-plan keys that exist (API Gateway refuses any other value with INVALID_API_KEY). */
  readonly planKeys: ReadonlySet<string>;
  /** The IAM principal AWS_IAM methods know (its key pair signs, its policies are evaluated); absent: every signature is refused. */
  readonly iam?: WebProduct;
  /** What signatures are checked against (AWS: its own clock; the signer uses the wall clock). Default: the wall clock. */
  readonly signatureClock?: () => Date;
  /** False: the stage's and the plans' throttles are not applied (quota still is). */
  readonly throttle: boolean;
  readonly onInvoke?: (fn: string) => void;
  /** The machine's contention, read while the integration timeout runs (tests inject one); default: contention.ts's. */
  readonly contention?: () => number;
  /** What the throttles' token buckets refill by, in ms (a test holds it still: its requests then take no time); default: performance.now. */
  readonly throttleClockMs?: () => number;
}

export class RestApiRehearsal {
  readonly root: Node = { part: '', children: [], methods: new Map(), path: '/' };
  readonly stageName: string;
  readonly keySource: string;
  private readonly responses = new Map<string, { status?: number; headers: Record<string, string>; template?: string }>();
  private readonly stageThrottle?: TokenBucket;
  private readonly plans: { quota?: { limit: number; period: string }; throttle?: { rate: number; burst: number }; buckets: Map<string, TokenBucket>; used: Map<string, number> }[] = [];
  /** Function errors seen (timeouts, crashes, oversized answers): the rehearsal reports them. */
  readonly functionErrors: string[] = [];

  /**
   * The API's resource policy, if the template gives it one, with API
   * Gateway's shorthand `execute-api:/…` expanded to this API's ARN.
   */
  private resourcePolicy(): PolicyDocument | undefined {
    const policy = this.opts.template.prop(this.opts.apiId, 'Policy');
    if (policy === undefined) return undefined;
    const expand = (r: Json): Json => (typeof r === 'string' && r.startsWith('execute-api:') ? `arn:aws:execute-api:${REGION}:${ACCOUNT}:${this.opts.apiId}${r.slice('execute-api:'.length)}` : r);
    const doc = policy as { Statement: Json[] };
    return { ...doc, Statement: doc.Statement.map((st) => ({ ...st, Resource: Array.isArray(st.Resource) ? st.Resource.map(expand) : expand(st.Resource) })) };
  }

  private readonly throttleClock: () => number;

  constructor(private readonly opts: RestApiOptions) {
    this.throttleClock = opts.throttleClockMs ?? (() => performance.now());
    const t = opts.template;
    const id = opts.apiId;
    const where = (rid: string) => `${rid} (API ${id})`;
    this.keySource = String(t.prop(id, 'ApiKeySourceType') ?? 'HEADER');

    const resources = t.ofType('AWS::ApiGateway::Resource').filter(([, r]) => Template.targetOf(r.Properties?.RestApiId) === id);
    const nodes = new Map<string, Node>([[`${id}/root`, this.root]]);
    const nodeOf = (rid: string): Node => {
      const existing = nodes.get(rid);
      if (existing) return existing;
      const parentId = t.prop(rid, 'ParentId', where(rid)) as string;
      const parent = nodeOf(parentId);
      const part = String(t.prop(rid, 'PathPart', where(rid)));
      const node: Node = { part, children: [], methods: new Map(), path: `${parent.path === '/' ? '' : parent.path}/${part}` };
      parent.children.push(node);
      nodes.set(rid, node);
      return node;
    };
    for (const [rid] of resources) nodeOf(rid);

    for (const [mid, m] of t.ofType('AWS::ApiGateway::Method').filter(([, r]) => Template.targetOf(r.Properties?.RestApiId) === id)) {
      const node = nodes.get(t.prop(mid, 'ResourceId', where(mid)) as string);
      if (!node) throw new TemplateError(where(mid), 'its ResourceId is no resource of this API');
      const p = m.Properties ?? {};
      const authorizationType = String(p.AuthorizationType ?? 'NONE');
      if (!['NONE', 'CUSTOM', 'AWS_IAM'].includes(authorizationType)) throw new TemplateError(where(mid), `AuthorizationType ${authorizationType} is not rehearsed`);
      let authorizer: Method['authorizer'];
      if (authorizationType === 'CUSTOM') {
        const aid = Template.targetOf(p.AuthorizerId);
        if (!aid) throw new TemplateError(where(mid), 'CUSTOM without an AuthorizerId');
        const type = t.prop(aid, 'Type', where(aid));
        if (type !== 'REQUEST') throw new TemplateError(where(aid), `authorizer Type ${type} is not rehearsed`);
        const sources = (t.prop(aid, 'IdentitySource', where(aid)) as string | undefined) ?? '';
        authorizer = { fn: Template.functionIn(t.resource(aid, where(aid)).Properties?.AuthorizerUri, t, where(aid)), identitySources: sources.split(',').map((s) => s.trim()).filter(Boolean) };
      }
      const integrationType = String(p.Integration?.Type);
      let integration: Method['integration'];
      // TimeoutInMillis: 29 s unless the template says otherwise (API Gateway's REST default and maximum).
      if (integrationType === 'AWS_PROXY') integration = { type: 'AWS_PROXY', fn: Template.functionIn(p.Integration.Uri, t, where(mid)), timeoutMs: Number(t.prop(mid, 'Integration.TimeoutInMillis') ?? INTEGRATION_TIMEOUT_MS) };
      else if (integrationType === 'MOCK') {
        const response = (t.prop(mid, 'Integration.IntegrationResponses', where(mid)) as Json[] | undefined)?.find((r) => !r.SelectionPattern) ?? {};
        const headers = Object.fromEntries(
          Object.entries((response.ResponseParameters ?? {}) as Record<string, string>).map(([k, v]) => [k.replace('method.response.header.', ''), literal(v, where(mid))]),
        );
        integration = { type: 'MOCK', status: Number(response.StatusCode ?? 200), headers, body: String(Object.values(response.ResponseTemplates ?? {})[0] ?? '') };
      } else throw new TemplateError(where(mid), `integration type ${integrationType} is not rehearsed`);
      node.methods.set(String(p.HttpMethod), {
        id: mid,
        httpMethod: String(p.HttpMethod),
        resourcePath: node.path,
        authorizationType: authorizationType as Method['authorizationType'],
        authorizer,
        apiKeyRequired: p.ApiKeyRequired === true,
        integration,
      });
    }

    for (const [gid] of t.ofType('AWS::ApiGateway::GatewayResponse').filter(([, r]) => Template.targetOf(r.Properties?.RestApiId) === id)) {
      const params = (t.prop(gid, 'ResponseParameters', where(gid)) ?? {}) as Record<string, string>;
      const status = t.prop(gid, 'StatusCode', where(gid));
      this.responses.set(String(t.prop(gid, 'ResponseType', where(gid))), {
        status: status === undefined ? undefined : Number(status),
        headers: Object.fromEntries(Object.entries(params).map(([k, v]) => [k.replace('gatewayresponse.header.', ''), v])),
        template: (t.prop(gid, 'ResponseTemplates', where(gid)) as Record<string, string> | undefined)?.['application/json'],
      });
    }

    const stages = t.ofType('AWS::ApiGateway::Stage').filter(([, r]) => Template.targetOf(r.Properties?.RestApiId) === id);
    if (stages.length !== 1) throw new TemplateError(`API ${id}`, `expected one stage, found ${stages.length}`);
    const [stageId] = stages[0]!;
    this.stageName = String(t.prop(stageId, 'StageName'));
    const wide = ((t.prop(stageId, 'MethodSettings') ?? []) as Json[]).find((s) => s.ResourcePath === '/*' && s.HttpMethod === '*');
    if (wide?.ThrottlingRateLimit !== undefined) this.stageThrottle = new TokenBucket(Number(wide.ThrottlingRateLimit), Number(wide.ThrottlingBurstLimit), this.throttleClock);

    for (const [pid, plan] of t.ofType('AWS::ApiGateway::UsagePlan')) {
      const stagesOfPlan = (plan.Properties?.ApiStages ?? []) as Json[];
      if (!stagesOfPlan.some((s) => Template.targetOf(s.ApiId) === id)) continue;
      const quota = t.prop(pid, 'Quota');
      const throttle = t.prop(pid, 'Throttle');
      this.plans.push({
        quota: quota ? { limit: Number(quota.Limit), period: String(quota.Period) } : undefined,
        throttle: throttle?.RateLimit !== undefined ? { rate: Number(throttle.RateLimit), burst: Number(throttle.BurstLimit) } : undefined,
        buckets: new Map(),
        used: new Map(),
      });
    }
  }

  /** Every base path this API serves (its resource paths), to tell which API a URL belongs to. */
  paths(): string[] {
    const out: string[] = [];
    const walk = (n: Node) => {
      if (n.methods.size) out.push(n.path);
      n.children.forEach(walk);
    };
    walk(this.root);
    return out;
  }

  /** Whether a request of this method and path reaches one of this API's methods. */
  serves(method: string, pathname: string): boolean {
    const found = this.match(pathname.split('/').slice(1));
    return !!found && (found.node.methods.has(method) || found.node.methods.has('ANY'));
  }

  private match(segments: string[]): { node: Node; params: Record<string, string> } | undefined {
    const go = (node: Node, i: number, params: Record<string, string>): { node: Node; params: Record<string, string> } | undefined => {
      if (i === segments.length) return { node, params };
      const seg = segments[i]!;
      const decoded = (() => {
        try {
          return decodeURIComponent(seg);
        } catch {
          return seg;
        }
      })();
      const literal = node.children.find((c) => c.part === decoded);
      const viaLiteral = literal && go(literal, i + 1, params);
      if (viaLiteral) return viaLiteral;
      const param = node.children.find((c) => /^\{[^+]+\}$/.test(c.part));
      const viaParam = param && seg !== '' && go(param, i + 1, { ...params, [param.part.slice(1, -1)]: decoded });
      if (viaParam) return viaParam;
      const greedy = node.children.find((c) => /^\{.+\+\}$/.test(c.part));
      if (greedy) return { node: greedy, params: { ...params, [greedy.part.slice(1, -2)]: segments.slice(i).map((s) => decodeURIComponentSafe(s)).join('/') } };
      return undefined;
    };
    return go(this.root, 0, Object.create(null) as Record<string, string>);
  }

  private gatewayResponse(type: string, requestId: string, context: Record<string, string> = {}, messageOverride?: string, statusOverride?: number) {
    const known = statusOverride ? { status: statusOverride, message: messageOverride ?? '' } : (RESPONSE_TYPES[type] ?? { status: 500, message: 'Internal server error' });
    const fallback = known.status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX';
    const own = this.responses.get(type);
    const configured = own ?? this.responses.get(fallback);
    const message = messageOverride ?? known.message;
    const status = statusOverride ?? own?.status ?? configured?.status ?? known.status;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-amzn-requestid': requestId, 'x-amzn-errortype': type === 'LAMBDA_ERROR' ? 'InternalServerErrorException' : type };
    for (const [name, source] of Object.entries(configured?.headers ?? {})) {
      const value = source.startsWith("'") ? source.slice(1, -1) : source.startsWith('context.') ? context[source.slice('context.'.length)] : undefined;
      if (value !== undefined) headers[name.toLowerCase()] = value;
    }
    const body = configured?.template !== undefined
      ? configured.template.replace(/\$context\.error\.messageString/g, JSON.stringify(message)).replace(/\$context\.error\.message/g, message)
      : JSON.stringify({ message });
    return { statusCode: status, headers, body };
  }

  /**
   * Answers one request. The API's own URL stands for its stage's execute-api
   * URL (`https://{api}.execute-api.{region}.amazonaws.com/{stage}`), and its
   * port for that host: a path may also begin with the stage, as a Location
   * built from requestContext.path does (the old prefix's redirect); `domain`:
   * the request came through that custom domain, where API Gateway's
   * requestContext.path has no stage segment.
   */
  async handle(req: IncomingMessage, res: ServerResponse, domain?: string): Promise<void> {
    const requestId = randomUUID();
    const result = await this.answer(req, requestId, domain).catch((error: unknown) => {
      this.functionErrors.push(`gateway: ${String(error)}`);
      return this.gatewayResponse('API_CONFIGURATION_ERROR', requestId);
    });
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
    for (const [k, v] of Object.entries((result as { multiValueHeaders?: Record<string, Json[]> }).multiValueHeaders ?? {})) headers[k] = v.map(String);
    res.writeHead(result.statusCode, headers);
    res.end((result as { isBase64Encoded?: boolean }).isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
  }

  private async answer(req: IncomingMessage, requestId: string, domain: string | undefined): Promise<{ statusCode: number; headers?: Record<string, Json>; body: string }> {
    const target = req.url ?? '/';
    const breach = sizeLimitBreach(target, req.rawHeaders);
    // API Gateway's URL and header size quotas (local/request-limits.ts): 414 and 431, shaped by DEFAULT_4XX.
    if (breach) return this.gatewayResponse('DEFAULT_4XX', requestId, {}, breach.message, breach.status);
    const url = parseRequestTarget(target);
    // On the API's own port a path may begin with the stage, as on the execute-api host (a Location built from
    // requestContext.path, the old prefix's redirect, carries it), or leave it out, the port then standing for the
    // stage's URL; either way the stage is the API's one stage. Through a custom domain the mapping chose it.
    let pathname = url.pathname;
    const stagePath = `/${this.stageName}`;
    if (domain === undefined && (pathname === stagePath || pathname.startsWith(`${stagePath}/`))) pathname = pathname.slice(stagePath.length) || '/';
    const method = req.method ?? 'GET';
    const found = this.match(pathname.split('/').slice(1));
    const m = found && (found.node.methods.get(method) ?? found.node.methods.get('ANY'));
    if (!found || !m) return this.gatewayResponse('MISSING_AUTHENTICATION_TOKEN', requestId);
    if (this.opts.throttle && this.stageThrottle && !this.stageThrottle.take()) return this.gatewayResponse('THROTTLED', requestId);

    const { headers, multiValueHeaders } = headersOf(req);
    const query = queryOf(url);
    const methodArn = `arn:aws:execute-api:${REGION}:${ACCOUNT}:${this.opts.apiId}/${this.stageName}/${method}${pathname}`;
    const body = await readBody(req);
    const requestContext = {
      accountId: ACCOUNT,
      apiId: this.opts.apiId,
      stage: this.stageName,
      requestId,
      resourceId: m.id,
      resourcePath: m.resourcePath,
      httpMethod: method,
      path: domain ? pathname : `/${this.stageName}${pathname}`,
      domainName: domain ?? `${this.opts.apiId.toLowerCase()}.execute-api.${REGION}.amazonaws.com`,
      protocol: `HTTP/${req.httpVersion}`,
      requestTimeEpoch: this.opts.now().getTime(),
      identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: req.headers['user-agent'] ?? null } as Record<string, string | null>,
    };

    if (m.authorizationType === 'AWS_IAM') {
      const verdict = await verifySigV4({ method, target, headers: req.headers, body }, this.opts.iam ? [this.opts.iam] : [], (this.opts.signatureClock ?? (() => new Date()))());
      if (!verdict.ok) return this.gatewayResponse(verdict.message === 'Missing Authentication Token' ? 'MISSING_AUTHENTICATION_TOKEN' : 'INVALID_SIGNATURE', requestId, {}, verdict.message);
      const iam = this.opts.iam!;
      const decision = await evaluateAs(iam.principalArn, { action: 'execute-api:Invoke', resource: methodArn, context: {} }, iam.policies, 'web-product', this.resourcePolicy());
      if (!decision.allowed) {
        return this.gatewayResponse('ACCESS_DENIED', requestId, {}, `User: ${iam.principalArn} is not authorized to perform: execute-api:Invoke on resource: ${methodArn}`);
      }
      // What API Gateway puts there for an IAM caller; the function audits userArn.
      const roleSession = iam.principalArn.split('/').slice(-2);
      Object.assign(requestContext.identity, {
        accountId: ACCOUNT,
        accessKey: iam.accessKeyId,
        caller: `AROAREHEARSAL:${roleSession[1]}`,
        user: `AROAREHEARSAL:${roleSession[1]}`,
        userArn: iam.principalArn,
        cognitoIdentityPoolId: null,
        cognitoIdentityId: null,
        cognitoAuthenticationType: null,
        cognitoAuthenticationProvider: null,
      });
    }
    let authorizer: Record<string, string> | undefined;
    let usageKey: string | undefined = this.keySource === 'HEADER' ? (headers['x-api-key'] ?? headers['X-API-Key']) : undefined;
    if (m.authorizer) {
      const arnBreach = methodArnTooLong(methodArn);
      if (arnBreach) return this.gatewayResponse('DEFAULT_4XX', requestId, {}, arnBreach.message, arnBreach.status);
      const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
      const missing = m.authorizer.identitySources.some((s) => {
        const h = /^method\.request\.header\.(.+)$/.exec(s)?.[1];
        const q = /^method\.request\.querystring\.(.+)$/.exec(s)?.[1];
        return h ? !lower[h.toLowerCase()] : q ? !query.single?.[q] : false;
      });
      if (missing) return this.gatewayResponse('UNAUTHORIZED', requestId);
      const event = {
        type: 'REQUEST',
        methodArn,
        resource: m.resourcePath,
        path: pathname,
        httpMethod: method,
        headers,
        multiValueHeaders,
        pathParameters: found.params,
        queryStringParameters: query.single,
        multiValueQueryStringParameters: query.multi,
        stageVariables: null,
        requestContext,
      };
      const out = await this.invoke(m.authorizer.fn, event);
      if (!out.ok) {
        if (out.errorMessage === 'Unauthorized') return this.gatewayResponse('UNAUTHORIZED', requestId);
        return this.gatewayResponse('AUTHORIZER_FAILURE', requestId);
      }
      const policy = JSON.parse(out.payload) as Json;
      if (!policy?.principalId || !policy.policyDocument) return this.gatewayResponse('AUTHORIZER_CONFIGURATION_ERROR', requestId);
      const context: Record<string, string> = Object.fromEntries(Object.entries((policy.context ?? {}) as Record<string, Json>).map(([k, v]) => [k, String(v)]));
      const authContext = { ...context, principalId: String(policy.principalId) };
      if (!allows(policy.policyDocument, methodArn)) return this.gatewayResponse('ACCESS_DENIED', requestId, authContext);
      authorizer = authContext;
      if (this.keySource === 'AUTHORIZER') usageKey = policy.usageIdentifierKey === undefined ? undefined : String(policy.usageIdentifierKey);
    }
    if (m.apiKeyRequired) {
      if (!usageKey || !this.opts.planKeys.has(usageKey)) return this.gatewayResponse('INVALID_API_KEY', requestId, authorizer);
      for (const plan of this.plans) {
        if (plan.throttle && this.opts.throttle) {
          const bucket = plan.buckets.get(usageKey) ?? new TokenBucket(plan.throttle.rate, plan.throttle.burst, this.throttleClock);
          plan.buckets.set(usageKey, bucket);
          if (!bucket.take()) return this.gatewayResponse('THROTTLED', requestId, authorizer);
        }
        if (plan.quota) {
          const period = periodOf(plan.quota.period, this.opts.now());
          const key = `${usageKey}/${period}`;
          const used = plan.used.get(key) ?? 0;
          if (used >= plan.quota.limit) return this.gatewayResponse('QUOTA_EXCEEDED', requestId, authorizer);
          plan.used.set(key, used + 1);
        }
      }
    }

    if (m.integration.type === 'MOCK') return { statusCode: m.integration.status, headers: { ...m.integration.headers, 'x-amzn-requestid': requestId }, body: m.integration.body };
    const event = {
      resource: m.resourcePath,
      path: pathname,
      httpMethod: method,
      headers,
      multiValueHeaders,
      queryStringParameters: query.single,
      multiValueQueryStringParameters: query.multi,
      pathParameters: Object.keys(found.params).length ? found.params : null,
      stageVariables: null,
      body: body === '' ? null : body,
      isBase64Encoded: false,
      requestContext: { ...requestContext, authorizer },
    };
    // Wall time stretched by the machine's contention (contention.ts): the gateway waits on a function
    // whose own limit is stretched the same way.
    let stop = () => {};
    const out = await Promise.race([
      this.invoke(m.integration.fn, event),
      new Promise<'timeout'>((resolve) => (stop = watchLimit((m.integration as { timeoutMs: number }).timeoutMs, () => resolve('timeout'), { contention: this.opts.contention }))),
    ]).finally(() => stop());
    if (out === 'timeout') {
      this.functionErrors.push(`${m.integration.fn}: no answer within the integration timeout`);
      return this.gatewayResponse('INTEGRATION_TIMEOUT', requestId);
    }
    if (!out.ok) {
      this.functionErrors.push(`${m.integration.fn}: ${out.errorType}: ${out.errorMessage}`);
      return this.gatewayResponse('LAMBDA_ERROR', requestId);
    }
    const result = JSON.parse(out.payload) as Json;
    if (!result || typeof result.statusCode !== 'number' || (result.body !== undefined && typeof result.body !== 'string')) {
      this.functionErrors.push(`${m.integration.fn}: malformed Lambda proxy response`);
      return this.gatewayResponse('LAMBDA_ERROR', requestId);
    }
    return { ...result, body: result.body ?? '', headers: { ...result.headers, 'x-amzn-requestid': requestId } };
  }

  private invoke(fn: string, event: unknown) {
    const host = this.opts.functions.get(fn);
    if (!host) throw new TemplateError(fn, 'no host for this function');
    this.opts.onInvoke?.(fn);
    return host.invoke(event);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function literal(value: string, where: string): string {
  if (!value.startsWith("'") || !value.endsWith("'")) throw new TemplateError(where, `response parameter ${value} is not a literal`);
  return value.slice(1, -1);
}

/** Whether an authorizer's policy allows the method ARN (API Gateway's own matching: `*` and `?` wildcards, Deny wins). */
function allows(doc: Json, methodArn: string): boolean {
  const matches = (pattern: string) => new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(methodArn);
  const statements = [doc.Statement].flat() as Json[];
  const hit = (effect: string) => statements.some((s) => s.Effect === effect && [s.Resource].flat().some((r: string) => matches(String(r))));
  return !hit('Deny') && hit('Allow');
}

function periodOf(period: string, now: Date): string {
  const iso = now.toISOString();
  if (period === 'DAY') return iso.slice(0, 10);
  if (period === 'MONTH') return iso.slice(0, 7);
  if (period === 'WEEK') return `${iso.slice(0, 4)}-w${Math.floor((now.getTime() / 86_400_000 + 3) / 7)}`;
  throw new TemplateError('UsagePlan', `quota period ${period} is not rehearsed`);
}
