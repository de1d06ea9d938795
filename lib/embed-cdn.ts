/**
 * CloudFront in front of the Embed API: a widget on a popular page sends
 * every view to the edge, and only cache misses reach API Gateway, Lambda and
 * DynamoDB. The origin decides what is cached and for how long
 * (`Cache-Control: public, max-age=…` on answers, `no-store` on errors), so
 * the distribution only keys and bounds:
 *
 * - One cache behavior per Embed route (its path template with `*` for each
 *   path parameter), whose cache key, and origin request, hold the path and
 *   exactly the query parameters that route's handler reads
 *   (`whitelist`, derived from the route table by
 *   lambdas/openapi/route-queries.ts; `none` where it reads none). Any other
 *   parameter neither reaches the origin nor makes a new cache entry, so a
 *   client adding `?_=1`, `?_=2`, … is served the one cached copy (AWS,
 *   CachePolicyQueryStringsConfig:
 *   https://docs.aws.amazon.com/cloudfront/latest/APIReference/API_CachePolicyQueryStringsConfig.html).
 *   No header and no cookie is in any key: every Embed answer is public and
 *   the same for every viewer, CORS included; with compression on,
 *   CloudFront also keys on the normalised Accept-Encoding (gzip/br).
 *   Behaviors are matched in order, so the more literal patterns come first
 *   (`…/events/*\/event.ics` before `…/events/*`). The default behavior (no
 *   route: a 404 from the gateway) forwards no query string at all.
 * - TTLs: min 0 and default 0, so `no-store` and an answer without
 *   Cache-Control are not cached; max one day.
 * - Errors: CloudFront ignores `no-store` on an error answer for every code
 *   but 404, 410, 414 and 501 and keeps it for the Error Caching Minimum TTL,
 *   10 s by default (AWS, "Control how long CloudFront caches errors":
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/custom-error-pages-expiration.html,
 *   and "HTTP 4xx and 5xx status codes that CloudFront caches":
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/HTTPStatusCodes.html).
 *   Every code CloudFront may cache gets a custom error response with an
 *   Error Caching Minimum TTL of 0 and no page of its own, so no error
 *   answer is served from the edge (docs/deploy.md says so).
 * - A web ACL (lib/embed-waf-stack.ts, in us-east-1), attached by ARN.
 * - The embed widget's files under `/embed/*`, from a bucket of their own
 *   (lib/embed-widget.ts).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CacheCookieBehavior,
  CachedMethods,
  CacheHeaderBehavior,
  CachePolicy,
  CacheQueryStringBehavior,
  Distribution,
  HttpVersion,
  PriceClass,
  ViewerProtocolPolicy,
  type BehaviorOptions,
  type ErrorResponse,
  type ICachePolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { RestApiOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { UserEventsVariant } from '../lambdas/core/config.js';
import { queryParameterNames } from '../lambdas/openapi/route-queries.js';
import { resourcePath, routes, type RouteDefinition } from '../lambdas/routes.js';
import { EmbedWidget } from './embed-widget.js';

export interface EmbedCdnProps {
  readonly embedApi: RestApi;
  /** ARN of a CloudFront-scope (us-east-1) web ACL to attach (a token when it is a deploy-time parameter). */
  readonly webAclArn?: string;
  readonly userEventsVariant: UserEventsVariant;
  /** The widget deployment's logs. */
  readonly logRetention: RetentionDays;
  readonly retainLogs: boolean;
}

/** The bounds on what the origin may ask for; the origin's Cache-Control picks within them. */
export const EMBED_CACHE_TTL = { min: Duration.seconds(0), default: Duration.seconds(0), max: Duration.days(1) };

/** Every status for which CloudFront takes a custom error response (AWS::CloudFront::Distribution CustomErrorResponse, ErrorCode) but 416, which it never caches. */
export const EMBED_ERROR_CODES = [400, 403, 404, 405, 414, 500, 501, 502, 503, 504] as const;

/** A route's CloudFront path pattern: its resource path with `*` for each path parameter. */
export function pathPattern(route: Pick<RouteDefinition, 'surface' | 'path'>): string {
  return resourcePath(route).replace(/\{\w+\}/g, '*');
}

/** The Embed routes with their path patterns and query parameters, most literal pattern first (CloudFront matches in order). */
export function embedEdgeRoutes(userEventsVariant: UserEventsVariant): { id: string; pattern: string; query: string[] }[] {
  return (routes as readonly RouteDefinition[])
    .filter((r) => r.surface === 'embed')
    .map((r) => ({ id: r.id, pattern: pathPattern(r), query: queryParameterNames(r, userEventsVariant) }))
    .sort((a, b) => b.pattern.replace(/\*/g, '').length - a.pattern.replace(/\*/g, '').length || a.pattern.localeCompare(b.pattern));
}

export class EmbedCdn extends Construct {
  readonly distribution: Distribution;
  readonly logBucket: Bucket;
  readonly widget: EmbedWidget;

  constructor(scope: Construct, id: string, props: EmbedCdnProps) {
    super(scope, id);
    // One cache policy per distinct set of query parameters (CloudFront allows 20 custom policies an account).
    const policies = new Map<string, ICachePolicy>();
    const policyFor = (query: readonly string[]): ICachePolicy => {
      const key = query.join(',');
      let policy = policies.get(key);
      if (!policy) {
        const name = query.length ? `Query${query.map((q) => q[0]!.toUpperCase() + q.slice(1)).join('')}` : 'PathOnly';
        policy = new CachePolicy(this, name, {
          comment: `Embed API: path${query.length ? ` + ${query.join(', ')}` : ' only'}; the origin Cache-Control decides`,
          minTtl: EMBED_CACHE_TTL.min,
          defaultTtl: EMBED_CACHE_TTL.default,
          maxTtl: EMBED_CACHE_TTL.max,
          headerBehavior: CacheHeaderBehavior.none(),
          cookieBehavior: CacheCookieBehavior.none(),
          queryStringBehavior: query.length ? CacheQueryStringBehavior.allowList(...query) : CacheQueryStringBehavior.none(),
          enableAcceptEncodingGzip: true,
          enableAcceptEncodingBrotli: true,
        });
        policies.set(key, policy);
      }
      return policy;
    };
    // Standard logs: cache hits never reach API Gateway's access log, so they are the only record of them.
    const logs = (this.logBucket = new Bucket(this, 'Logs', {
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED, // CloudFront standard logging writes with ACLs
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      // Kept when the stack goes (a bucket with objects cannot be deleted without a custom resource); the lifecycle empties it.
      removalPolicy: RemovalPolicy.RETAIN,
    }));
    const origin = new RestApiOrigin(props.embedApi);
    const behavior = (query: readonly string[]): BehaviorOptions => ({
      origin,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      // OPTIONS passes through to the API's preflight answer; only GET/HEAD are cached.
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
      cachedMethods: CachedMethods.CACHE_GET_HEAD,
      cachePolicy: policyFor(query),
      compress: true,
    });
    const errorResponses: ErrorResponse[] = EMBED_ERROR_CODES.map((httpStatus) => ({ httpStatus, ttl: Duration.seconds(0) }));
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Public Events Embed API',
      defaultBehavior: behavior([]),
      additionalBehaviors: Object.fromEntries(embedEdgeRoutes(props.userEventsVariant).map((r) => [r.pattern, behavior(r.query)])),
      errorResponses,
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'embed/',
      ...(props.webAclArn ? { webAclId: props.webAclArn } : {}),
    });
    this.widget = new EmbedWidget(this, 'Widget', { distribution: this.distribution, logBucket: logs, logRetention: props.logRetention, retainLogs: props.retainLogs });
  }
}
