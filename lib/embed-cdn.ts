/**
 * CloudFront in front of the Embed API: a widget on a popular page sends
 * every view to the edge, and only cache misses reach API Gateway, Lambda and
 * DynamoDB. The origin decides what is cached and for how long
 * (`Cache-Control: public, max-age=…` on answers, `no-store` on errors), so
 * the cache policy only keys and bounds:
 *
 * - cache key: path and query string only (no header, no cookie): every
 *   Embed answer is public and the same for every viewer, CORS included
 *   (`Access-Control-Allow-Origin: *` never depends on the request's Origin);
 *   with compression on, CloudFront also keys on the normalised
 *   Accept-Encoding (gzip/br), which is how it serves compressed copies;
 * - min TTL 0, so `no-store`/`max-age=0` are honoured; default TTL 0, so an
 *   answer without Cache-Control is not cached; max TTL one day;
 * - an optional web ACL (WAF for CloudFront exists only in us-east-1: see
 *   EmbedWafStack and docs/deploy.md).
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
} from 'aws-cdk-lib/aws-cloudfront';
import { RestApiOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

export interface EmbedCdnProps {
  readonly embedApi: RestApi;
  /** ARN of an existing CloudFront-scope (us-east-1) web ACL to attach. */
  readonly webAclArn?: string;
}

/** The bounds on what the origin may ask for; the origin's Cache-Control picks within them. */
export const EMBED_CACHE_TTL = { min: Duration.seconds(0), default: Duration.seconds(0), max: Duration.days(1) };

export class EmbedCdn extends Construct {
  readonly distribution: Distribution;
  readonly logBucket: Bucket;

  constructor(scope: Construct, id: string, props: EmbedCdnProps) {
    super(scope, id);
    const cachePolicy = new CachePolicy(this, 'PathAndQuery', {
      comment: 'Embed API: path + query string; the origin Cache-Control decides',
      minTtl: EMBED_CACHE_TTL.min,
      defaultTtl: EMBED_CACHE_TTL.default,
      maxTtl: EMBED_CACHE_TTL.max,
      headerBehavior: CacheHeaderBehavior.none(),
      cookieBehavior: CacheCookieBehavior.none(),
      queryStringBehavior: CacheQueryStringBehavior.all(),
      enableAcceptEncodingGzip: true,
      enableAcceptEncodingBrotli: true,
    });
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
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Public Events Embed API',
      defaultBehavior: {
        origin: new RestApiOrigin(props.embedApi),
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        // OPTIONS passes through to the API's preflight answer; only GET/HEAD are cached.
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
        cachedMethods: CachedMethods.CACHE_GET_HEAD,
        cachePolicy,
        compress: true,
      },
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'embed/',
      ...(props.webAclArn ? { webAclId: props.webAclArn } : {}),
    });
  }
}
