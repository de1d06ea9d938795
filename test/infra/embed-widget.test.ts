/**
 * Where the widget lives in AWS (issue 58 item 5): the Embed distribution
 * serves the local server's very build (lib/widget-bundle.ts) under a
 * content-hashed name, immutable, from a private bucket read through Origin
 * Access Control, and the stack outputs the URL and the Subresource
 * Integrity hash a host page's script tag carries. Checked against AWS's
 * documents (lib/embed-widget.ts cites them); the path a host page uses is
 * followed through the rehearsal of cdk.out (test/rehearsal/stages.test.ts).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { WIDGET_BUCKET_ID, WIDGET_PATH_PATTERN } from '../../lib/embed-widget.js';
import { buildWidget, widgetRelease } from '../../lib/widget-bundle.js';
import { resources, synthesized } from './support.js';

/** AWS's managed CachingOptimized cache policy (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/using-managed-cache-policies.html). */
const CACHING_OPTIMIZED = '658327ea-f89d-4fab-a63d-7e88639e58f6';

describe('the embed widget on the Embed distribution (production)', () => {
  const { template, outdir } = synthesized({ stage: 'production' });
  // The template as CloudFormation reads it (aws-cdk-lib types it as free-form JSON).
  const json = template.toJSON();
  const release = widgetRelease();
  const config = resources(template, 'AWS::CloudFront::Distribution')[0]![1].Properties.DistributionConfig;
  const behavior = config.CacheBehaviors.find((b: { PathPattern: string }) => b.PathPattern === WIDGET_PATH_PATTERN);
  const origin = config.Origins.find((o: { Id: string }) => o.Id === behavior?.TargetOriginId);

  it('ships the local server\'s build, under a name that holds its content hash', () => {
    expect(release.body).toBe(buildWidget());
    expect(release.fileName).toBe(`widget.${createHash('sha256').update(buildWidget()).digest('hex').slice(0, 16)}.js`);
    const [deployment] = resources(template, 'Custom::CDKBucketDeployment').map(([, d]) => d);
    expect(resources(template, 'Custom::CDKBucketDeployment')).toHaveLength(1);
    expect(deployment!.Properties).toMatchObject({
      DestinationBucketName: { Ref: WIDGET_BUCKET_ID },
      DestinationBucketKeyPrefix: 'embed/',
      // Earlier releases stay: a host page pins one by its name and integrity.
      Prune: false,
      RetainOnDelete: true,
      SystemMetadata: { 'cache-control': 'public, max-age=31536000, immutable', 'content-type': 'text/javascript; charset=utf-8' },
    });
    // The asset it copies, as cdk.out holds it: exactly that one file.
    const [key] = deployment!.Properties.SourceObjectKeys as string[];
    const assets = JSON.parse(readFileSync(join(outdir, 'PublicEvents-production.assets.json'), 'utf8')) as { files: Record<string, { source: { path: string } }> };
    const dir = join(outdir, assets.files[key!.replace(/\.zip$/, '')]!.source.path);
    expect(readdirSync(dir)).toEqual([release.fileName]);
    expect(readFileSync(join(dir, release.fileName), 'utf8')).toBe(buildWidget());
  });

  it('keeps it in a private bucket, retained, that only this distribution may read (Origin Access Control)', () => {
    const bucket = json.Resources[WIDGET_BUCKET_ID]!;
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      LoggingConfiguration: { LogFilePrefix: 'widget-bucket/' },
    });
    const [policy] = resources(template, 'AWS::S3::BucketPolicy').filter(([, p]) => p.Properties.Bucket?.Ref === WIDGET_BUCKET_ID).map(([, p]) => p);
    const allows = (policy!.Properties.PolicyDocument.Statement as { Effect: string }[]).filter((s) => s.Effect === 'Allow');
    expect(allows).toEqual([
      {
        Effect: 'Allow',
        Principal: { Service: 'cloudfront.amazonaws.com' },
        Action: 's3:GetObject',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [WIDGET_BUCKET_ID, 'Arn'] }, '/*']] },
        Condition: { StringEquals: { 'AWS:SourceArn': expect.objectContaining({ 'Fn::Join': ['', expect.arrayContaining([':distribution/', { Ref: resources(template, 'AWS::CloudFront::Distribution')[0]![0] }])] }) } },
      },
    ]);
    expect(origin).toMatchObject({ DomainName: { 'Fn::GetAtt': [WIDGET_BUCKET_ID, 'RegionalDomainName'] }, S3OriginConfig: { OriginAccessIdentity: '' } });
    const oacId = origin.OriginAccessControlId['Fn::GetAtt'][0] as string;
    expect(json.Resources[oacId]!.Properties.OriginAccessControlConfig).toMatchObject({ OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' });
  });

  it('serves /embed/* from it: GET and HEAD over HTTPS, no query string, header or cookie, CORS for crossorigin tags, nosniff', () => {
    expect(behavior).toMatchObject({ AllowedMethods: ['GET', 'HEAD'], CachedMethods: ['GET', 'HEAD'], ViewerProtocolPolicy: 'https-only', Compress: true, CachePolicyId: CACHING_OPTIMIZED });
    expect(behavior.OriginRequestPolicyId).toBeUndefined();
    const headers = json.Resources[behavior.ResponseHeadersPolicyId.Ref as string]!.Properties.ResponseHeadersPolicyConfig;
    expect(headers.CorsConfig).toMatchObject({ AccessControlAllowOrigins: { Items: ['*'] }, AccessControlAllowMethods: { Items: ['GET', 'HEAD'] }, AccessControlAllowCredentials: false, OriginOverride: true });
    expect(headers.SecurityHeadersConfig).toEqual({ ContentTypeOptions: { Override: true } });
    // No API path falls under the widget's pattern, nor the widget's under an API behavior's (they are matched in order).
    expect(config.CacheBehaviors.filter((b: { PathPattern: string }) => release.path.startsWith(b.PathPattern.replace(/\*.*$/, ''))).map((b: { PathPattern: string }) => b.PathPattern)).toEqual([WIDGET_PATH_PATTERN]);
  });

  it('outputs the URL of the release on the edge host, and its Subresource Integrity hash', () => {
    expect(JSON.stringify(json.Outputs.WidgetUrl!.Value)).toContain('DomainName');
    expect(JSON.stringify(json.Outputs.WidgetUrl!.Value)).toContain(release.path);
    expect(json.Outputs.WidgetIntegrity!.Value).toBe(`sha384-${createHash('sha384').update(buildWidget()).digest('base64')}`);
  });

  it("gives the copier a role of its own: its log group and the two buckets' objects, nothing else, no managed policy", () => {
    const copiers = resources(template, 'AWS::Lambda::Function').filter(([, f]) => JSON.stringify(f.Properties.Layers ?? []).includes('AwsCliLayer'));
    expect(copiers).toHaveLength(1);
    const [[copierId, copier]] = copiers as [[string, (typeof copiers)[number][1]]];
    const roleId = copier.Properties.Role['Fn::GetAtt'][0] as string;
    expect(json.Resources[roleId]!.Properties.ManagedPolicyArns).toBeUndefined();
    const statements = resources(template, 'AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]);
    const actions = new Set(statements.flatMap((s) => [s.Action].flat()));
    expect([...actions].filter((a) => !a.startsWith('s3:') && !a.startsWith('logs:'))).toEqual([]);
    expect(JSON.stringify(statements)).not.toContain('dynamodb');
    expect(copierId).toMatch(/^CustomCDKBucketDeployment/);
  });
});

describe('the widget and the distribution together', () => {
  it('a stage without the distribution (staging by default) ships no widget; with it, it does', () => {
    expect(resources(synthesized({}).template, 'Custom::CDKBucketDeployment')).toHaveLength(0);
    expect(resources(synthesized({ embedCdn: 'true' }).template, 'Custom::CDKBucketDeployment')).toHaveLength(1);
  });
});
