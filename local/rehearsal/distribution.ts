/**
 * The template's CloudFront distributions, rehearsed: each on its own
 * loopback port (standing for its `*.cloudfront.net` name), routing every
 * request as its cache behaviors say (path patterns in order, then the
 * default behavior) to one of its origins:
 *
 * - a REST API of the template (a RestApiOrigin: its execute-api host and
 *   the stage as the origin path), reached over HTTP on the API's rehearsal
 *   port, as CloudFront reaches its origin;
 * - an S3 bucket of the template (S3OriginConfig with Origin Access Control),
 *   holding what the template's BucketDeployments put there: each
 *   deployment's asset from cdk.out, under its key prefix, with its system
 *   metadata, as the custom resource copies it. A read goes through the
 *   bucket's policy, evaluated by iam-simulate for the principal
 *   `cloudfront.amazonaws.com` with this distribution's ARN as
 *   AWS:SourceArn, as OAC signs it; a denial is a problem, answered 403 as S3
 *   answers it, and so is a key that is not there (no s3:ListBucket).
 *
 * What reaches the origin is what the behavior's cache policy forwards: the
 * query parameters of its QueryStringsConfig (none, an allow list, all), no
 * viewer header (no policy here forwards one) and no cookie. The behavior's
 * response headers policy adds its CORS headers to a request that carries
 * Origin, and its X-Content-Type-Options. A method the behavior does not
 * allow is CloudFront's own 403. Not rehearsed: caching (every request goes
 * to the origin; TTLs and error caching are checked against AWS's documents
 * by test/infra/), compression, TLS. Anything else in a behavior, an origin
 * or a policy fails at start, naming it.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { join, relative } from 'node:path';
import { ACCOUNT, REGION, evaluateAs, type PolicyDocument } from './iam.js';
import { Template, TemplateError, type Json } from './template.js';

/** AWS's managed cache policies the rehearsal knows, by id: what each forwards of the query string (none of them a header or cookie). */
const MANAGED_CACHE_POLICIES: Record<string, { behavior: 'none' | 'all' }> = {
  // CachingOptimized and CachingDisabled (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/using-managed-cache-policies.html).
  '658327ea-f89d-4fab-a63d-7e88639e58f6': { behavior: 'none' },
  '4135ea2d-6df8-44a3-9df3-4b5a84be39ad': { behavior: 'none' },
};

export interface BucketObject {
  readonly body: Buffer;
  readonly metadata: Record<string, string>;
}

/** Each bucket of the template (by logical id) with the objects its BucketDeployments put there. */
export function deployedObjects(template: Template, assemblyDir: string, assets: Record<string, { source: { path: string; packaging?: string } }>): Map<string, Map<string, BucketObject>> {
  const buckets = new Map<string, Map<string, BucketObject>>(template.ofType('AWS::S3::Bucket').map(([id]) => [id, new Map()]));
  for (const [did, d] of template.ofType('Custom::CDKBucketDeployment')) {
    const p = d.Properties ?? {};
    const bucket = buckets.get(Template.targetOf(p.DestinationBucketName) ?? '');
    if (!bucket) throw new TemplateError(did, 'only a deployment to a bucket of this template is rehearsed');
    for (const option of ['Exclude', 'Include', 'UserMetadata', 'DestinationBucketArn']) if (p[option] !== undefined) throw new TemplateError(did, `${option} is not rehearsed`);
    if (p.Extract === false || (p.SourceMarkers ?? []).some((m: Json) => Object.keys(m ?? {}).length)) throw new TemplateError(did, 'only extracted sources without markers are rehearsed');
    const prefix = String(template.prop(did, 'DestinationBucketKeyPrefix') ?? '');
    const metadata = Object.fromEntries(Object.entries((template.prop(did, 'SystemMetadata') ?? {}) as Record<string, Json>).map(([k, v]) => [k, String(v)]));
    for (const key of (p.SourceObjectKeys ?? []) as string[]) {
      const asset = assets[key.replace(/\.zip$/, '')];
      if (!asset || asset.source.packaging === 'file') throw new TemplateError(did, `source ${key} is not a directory asset of the assembly`);
      const dir = join(assemblyDir, asset.source.path);
      for (const file of filesUnder(dir)) bucket.set(`${prefix}${relative(dir, file)}`, { body: readFileSync(file), metadata });
    }
  }
  return buckets;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The functions behind custom resources the rehearsal carries out itself (the deployments' copier): not hosted. */
export function interpretedFunctions(template: Template): Set<string> {
  return new Set(template.ofType('Custom::CDKBucketDeployment').map(([did, d]) => Template.targetOf(d.Properties?.ServiceToken) ?? did));
}

/** A CloudFront path pattern: `*` any run of characters, `?` one, case-sensitive, the leading slash optional. */
export function matchesPathPattern(pattern: string, path: string): boolean {
  const body = pattern.replace(/^\/?/, '/').replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`).test(path);
}

interface Behavior {
  pattern?: string;
  origin: Origin;
  methods: string[];
  query: { behavior: string; names: string[] };
  headers?: Json;
}

type Origin = { kind: 'api'; url: string; path: string } | { kind: 'bucket'; id: string; objects: Map<string, BucketObject>; policy: PolicyDocument | undefined };

export class DistributionRehearsal {
  readonly domainName: string;
  private readonly behaviors: Behavior[];
  private readonly arn: string;

  constructor(
    template: Template,
    readonly id: string,
    apis: readonly { id: string; url: string }[],
    buckets: ReadonlyMap<string, Map<string, BucketObject>>,
    private readonly problems: string[],
  ) {
    this.domainName = Template.distributionDomain(id);
    this.arn = `arn:aws:cloudfront::${ACCOUNT}:distribution/${id}`;
    const where = `distribution ${id}`;
    const config = template.resource(id, where).Properties?.DistributionConfig ?? {};
    const origins = new Map<string, Origin>();
    for (const o of (config.Origins ?? []) as Json[]) {
      const oid = String(template.resolve(o.Id, `${where}.Origins`));
      const domain = String(template.resolve(o.DomainName, `${where}.Origins.${oid}`));
      const api = apis.find((a) => domain === `${a.id}.execute-api.${REGION}.amazonaws.com`);
      if (o.CustomOriginConfig && api) {
        origins.set(oid, { kind: 'api', url: api.url, path: String(template.resolve(o.OriginPath ?? '', `${where}.Origins.${oid}`)) });
      } else if (o.S3OriginConfig && o.OriginAccessControlId) {
        const bucketId = Template.targetOf(o.DomainName);
        const objects = buckets.get(bucketId ?? '');
        if (!bucketId || !objects) throw new TemplateError(where, `origin ${oid}: not a bucket of this template`);
        const policyId = template.ofType('AWS::S3::BucketPolicy').find(([, bp]) => Template.targetOf(bp.Properties?.Bucket) === bucketId)?.[0];
        origins.set(oid, { kind: 'bucket', id: bucketId, objects, policy: policyId ? (template.prop(policyId, 'PolicyDocument') as PolicyDocument) : undefined });
      } else {
        throw new TemplateError(where, `origin ${oid}: only a REST API of this template or an S3 bucket with Origin Access Control is rehearsed`);
      }
    }
    const behavior = (b: Json, label: string): Behavior => {
      for (const option of ['OriginRequestPolicyId', 'FunctionAssociations', 'LambdaFunctionAssociations', 'ForwardedValues']) if (b[option] !== undefined) throw new TemplateError(where, `${label}: ${option} is not rehearsed`);
      const origin = origins.get(String(b.TargetOriginId));
      if (!origin) throw new TemplateError(where, `${label}: no origin ${b.TargetOriginId}`);
      const headersId = Template.targetOf(b.ResponseHeadersPolicyId);
      return {
        ...(b.PathPattern !== undefined ? { pattern: String(b.PathPattern) } : {}),
        origin,
        methods: ((b.AllowedMethods ?? ['GET', 'HEAD']) as string[]).map(String),
        query: this.queryForwarded(template, b.CachePolicyId, `${where}: ${label}`),
        ...(headersId ? { headers: template.prop(headersId, 'ResponseHeadersPolicyConfig') } : {}),
      };
    };
    this.behaviors = [...((config.CacheBehaviors ?? []) as Json[]).map((b, i) => behavior(b, `behavior ${i} (${b.PathPattern})`)), behavior(config.DefaultCacheBehavior, 'default behavior')];
    for (const b of this.behaviors) checkHeadersPolicy(b.headers, where);
  }

  private queryForwarded(template: Template, policy: Json, where: string): Behavior['query'] {
    const target = Template.targetOf(policy);
    if (!target) {
      const managed = MANAGED_CACHE_POLICIES[String(policy)];
      if (!managed) throw new TemplateError(where, `cache policy ${String(policy)} is not one the rehearsal knows`);
      return { behavior: managed.behavior, names: [] };
    }
    const forwarded = template.prop(target, 'CachePolicyConfig.ParametersInCacheKeyAndForwardedToOrigin', where);
    if (forwarded.HeadersConfig?.HeaderBehavior !== 'none' || forwarded.CookiesConfig?.CookieBehavior !== 'none') throw new TemplateError(where, 'only cache policies forwarding no header and no cookie are rehearsed');
    const q = forwarded.QueryStringsConfig ?? { QueryStringBehavior: 'none' };
    if (!['none', 'whitelist', 'all'].includes(q.QueryStringBehavior)) throw new TemplateError(where, `query string behavior ${q.QueryStringBehavior} is not rehearsed`);
    return { behavior: q.QueryStringBehavior, names: ((q.QueryStrings?.Items ?? []) as string[]).map(String) };
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://distribution');
    const b = this.behaviors.find((x) => x.pattern === undefined || matchesPathPattern(x.pattern, url.pathname))!;
    const method = req.method ?? 'GET';
    if (!b.methods.includes(method)) return send(res, 403, { 'content-type': 'text/html' }, 'This distribution is not configured to allow the HTTP request method that was used for this request.');
    const query = new URLSearchParams();
    for (const [k, v] of url.searchParams) if (b.query.behavior === 'all' || (b.query.behavior === 'whitelist' && b.query.names.includes(k))) query.append(k, v);
    const search = query.toString() ? `?${query}` : '';
    const answer = b.origin.kind === 'api' ? await fromApi(b.origin, method, `${url.pathname}${search}`) : await this.fromBucket(b.origin, method, url.pathname);
    send(res, answer.status, withPolicyHeaders(b.headers, req.headers.origin, answer.headers), method === 'HEAD' ? Buffer.alloc(0) : answer.body);
  }

  private async fromBucket(origin: Extract<Origin, { kind: 'bucket' }>, method: string, path: string): Promise<Answer> {
    const key = decodeURIComponent(path.slice(1));
    const resource = `arn:aws:s3:::${origin.id}/${key}`;
    const verdict = origin.policy
      ? await evaluateAs('cloudfront.amazonaws.com', { action: 's3:GetObject', resource, context: { 'aws:SourceArn': this.arn, 'aws:SourceAccount': ACCOUNT, 'aws:SecureTransport': 'true' } }, [], 'none', origin.policy)
      : { allowed: false, decision: 'no bucket policy' };
    const object = origin.objects.get(key);
    if (!verdict.allowed) this.problems.push(`denied: CloudFront (distribution ${this.id}) may not s3:GetObject on ${resource} (${verdict.decision})`);
    if (!verdict.allowed || !object) return { status: 403, headers: { 'content-type': 'application/xml' }, body: Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>') };
    const headers: Record<string, string> = {
      'content-length': String(object.body.length),
      etag: `"${createHash('md5').update(object.body).digest('hex')}"`,
      ...object.metadata,
    };
    return { status: 200, headers, body: method === 'HEAD' ? Buffer.alloc(0) : object.body };
  }
}

interface Answer {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** The origin request to a REST API: the stage as the origin path, the forwarded query, no viewer header. */
function fromApi(origin: Extract<Origin, { kind: 'api' }>, method: string, pathAndQuery: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(`${origin.path}${pathAndQuery}`, origin.url);
    const req = httpRequest(target, { method, headers: { 'user-agent': 'Amazon CloudFront', via: '2.0 rehearsal.cloudfront.net (CloudFront)' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers as Record<string, string | string[]>, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The response headers policy settings the rehearsal applies; any other fails at start. */
function checkHeadersPolicy(policy: Json, where: string): void {
  if (!policy) return;
  for (const key of Object.keys(policy)) if (!['Comment', 'Name', 'CorsConfig', 'SecurityHeadersConfig'].includes(key)) throw new TemplateError(where, `response headers policy: ${key} is not rehearsed`);
  for (const key of Object.keys(policy.SecurityHeadersConfig ?? {})) if (key !== 'ContentTypeOptions') throw new TemplateError(where, `response headers policy: ${key} is not rehearsed`);
}

/** The answer's headers with the behavior's policy applied: CORS on a request with Origin, nosniff. */
function withPolicyHeaders(policy: Json, origin: string | undefined, headers: Answer['headers']): Answer['headers'] {
  const out = { ...headers };
  if (!policy) return out;
  const cors = policy.CorsConfig;
  const set = (name: string, value: string, override: boolean) => {
    if (override || out[name] === undefined) out[name] = value;
  };
  if (cors && origin !== undefined) {
    const allowed = (cors.AccessControlAllowOrigins?.Items ?? []) as string[];
    const value = allowed.includes('*') ? '*' : allowed.includes(origin) ? origin : undefined;
    if (value) set('access-control-allow-origin', value, cors.OriginOverride === true);
    if (value && cors.AccessControlAllowCredentials === true) set('access-control-allow-credentials', 'true', cors.OriginOverride === true);
    const expose = (cors.AccessControlExposeHeaders?.Items ?? []) as string[];
    if (value && expose.length) set('access-control-expose-headers', expose.join(','), cors.OriginOverride === true);
  }
  const nosniff = policy.SecurityHeadersConfig?.ContentTypeOptions;
  if (nosniff) set('x-content-type-options', 'nosniff', nosniff.Override === true);
  return out;
}

function send(res: ServerResponse, status: number, headers: Answer['headers'], body: Buffer | string): void {
  const out = { ...headers };
  delete out['transfer-encoding'];
  delete out.connection;
  delete out['keep-alive'];
  res.writeHead(status, out);
  res.end(body);
}
