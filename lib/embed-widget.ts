/**
 * Where the embed widget lives in AWS: on the Embed distribution, beside the
 * API it calls. The widget's default API address is its script's origin +
 * `/api/embed/v1` (widget/src/widget.ts), so a host page that loads it from
 * the distribution needs no `data-api`.
 *
 * - Each release is one object, `embed/widget.{content hash}.js`
 *   (lib/widget-bundle.ts: the bundle the local server serves and the tests
 *   load), in a private bucket, uploaded by a BucketDeployment with
 *   `Cache-Control: public, max-age=31536000, immutable`: a name never
 *   changes its content, so browsers and the edge keep it a year and never
 *   revalidate it. Earlier releases stay (`prune: false`): a host page pins a
 *   name and its Subresource Integrity hash, and must keep working after the
 *   next deploy. The bucket is retained with the stack for the same reason.
 * - CloudFront reads the bucket through Origin Access Control: the bucket
 *   blocks all public access and its policy lets in only
 *   `cloudfront.amazonaws.com` for this distribution (AWS:SourceArn), for
 *   `s3:GetObject` (AWS, "Restrict access to an Amazon S3 origin":
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-restricting-access-to-s3.html).
 *   Without `s3:ListBucket` a name that is not there answers 403, which the
 *   distribution does not cache (its error TTLs: lib/embed-cdn.ts).
 * - The `/embed/*` behavior uses the managed CachingOptimized cache policy
 *   (no query string, header or cookie in the key or sent to the bucket;
 *   gzip and Brotli; TTLs up to a year, so the object's max-age decides:
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/using-managed-cache-policies.html),
 *   GET and HEAD only, HTTPS only.
 * - A response headers policy adds `Access-Control-Allow-Origin: *` to CORS
 *   requests (a script tag with `crossorigin="anonymous"`, which SRI needs
 *   for a script of another origin) and `X-Content-Type-Options: nosniff` to
 *   every answer (AWS, "Understand response headers policies":
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/understanding-response-headers-policies.html).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AllowedMethods, CachedMethods, CachePolicy, ResponseHeadersPolicy, ViewerProtocolPolicy, type Distribution } from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, CfnBucket, ObjectOwnership, type IBucket } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { WIDGET_CONTENT_TYPE, WIDGET_DIR, WIDGET_RELEASE_CACHE_CONTROL, widgetRelease, type WidgetRelease } from './widget-bundle.js';

/** The widget bucket's logical id in the template. */
export const WIDGET_BUCKET_ID = 'EmbedWidgetBucket';

/** The distribution's path pattern for the widget's files. */
export const WIDGET_PATH_PATTERN = `${WIDGET_DIR}*`;

export interface EmbedWidgetProps {
  readonly distribution: Distribution;
  /** Where the bucket's server access logs go (the distribution's log bucket). */
  readonly logBucket: IBucket;
  readonly logRetention: RetentionDays;
  readonly retainLogs: boolean;
}

export class EmbedWidget extends Construct {
  readonly bucket: Bucket;
  readonly release: WidgetRelease;
  /** The deployment's copier role (deploy time only): its log group, and what BucketDeployment grants on the two buckets. */
  readonly deploymentRole: Role;

  constructor(scope: Construct, id: string, props: EmbedWidgetProps) {
    super(scope, id);
    this.release = widgetRelease();
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      serverAccessLogsBucket: props.logBucket,
      serverAccessLogsPrefix: 'widget-bucket/',
      // Pinned releases outlive the stack too (file comment).
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // A fixed logical id: the bucket is retained, so a renamed construct must not make CloudFormation create another
    // (and lib/nag.ts names it in an acknowledgement).
    (this.bucket.node.defaultChild as CfnBucket).overrideLogicalId(WIDGET_BUCKET_ID);
    // An own role instead of AWSLambdaBasicExecutionRole: it may write only to its log group. BucketDeployment adds
    // read of the staged asset and read/write of the widget bucket to it, and nothing else.
    const logGroup = new LogGroup(this, 'DeploymentLogs', { retention: props.logRetention, removalPolicy: props.retainLogs ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY });
    this.deploymentRole = new Role(this, 'DeploymentRole', { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: 'Embed widget: copies a release into its bucket at deploy time' });
    this.deploymentRole.addToPolicy(new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
    new BucketDeployment(this, 'Release', {
      sources: [Source.data(this.release.fileName, this.release.body)],
      destinationBucket: this.bucket,
      destinationKeyPrefix: WIDGET_DIR.slice(1),
      prune: false,
      retainOnDelete: true,
      cacheControl: [CacheControl.fromString(WIDGET_RELEASE_CACHE_CONTROL)],
      contentType: WIDGET_CONTENT_TYPE,
      logGroup,
      role: this.deploymentRole,
    });
    const headers = new ResponseHeadersPolicy(this, 'Headers', {
      comment: 'Embed widget: CORS for crossorigin script tags (SRI), nosniff',
      corsBehavior: {
        accessControlAllowOrigins: ['*'],
        accessControlAllowMethods: ['GET', 'HEAD'],
        accessControlAllowHeaders: ['Content-Type'],
        accessControlAllowCredentials: false,
        accessControlMaxAge: Duration.days(1),
        originOverride: true,
      },
      securityHeadersBehavior: { contentTypeOptions: { override: true } },
    });
    props.distribution.addBehavior(WIDGET_PATH_PATTERN, S3BucketOrigin.withOriginAccessControl(this.bucket), {
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      cachedMethods: CachedMethods.CACHE_GET_HEAD,
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: headers,
      compress: true,
    });
  }
}
