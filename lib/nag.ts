/**
 * cdk-nag AwsSolutions findings this design accepts, each with its reason and
 * on the narrowest construct. Everything else is fixed, not acknowledged:
 * test/infra/nag.test.ts fails on any unacknowledged finding and on any
 * acknowledgement that no longer matches a finding.
 */
import { Validations } from 'aws-cdk-lib';
import type { PublicEventsStack } from './public-events-stack.js';

const ack = (rule: string, reason: string) => ({ id: `AwsSolutions::AwsSolutions-${rule}`, reason });

/**
 * What aws-cdk-lib's BucketDeployment grants its copier (a CloudFormation custom resource that runs at deploy time
 * only): read of the asset it copies in the CDK assets bucket, read/write of the widget's bucket. One reason for each
 * of the findings those grants make (lib/embed-widget.ts).
 */
const WIDGET_DEPLOYMENT_GRANTS =
  "The widget's BucketDeployment copier, a custom resource run only at deploy time, gets these grants from aws-cdk-lib itself: read of the CDK assets bucket's objects (it copies one staged asset) and read/write of the widget's own bucket (s3:GetObject*, s3:List*, s3:DeleteObject*, s3:Abort*, s3:GetBucket*). It holds nothing on event data, keys or any other bucket, and serves no request.";
const widgetGrant = (finding: string) => ack(`IAM5[${finding}]`, WIDGET_DEPLOYMENT_GRANTS);

export const NAG_REASONS = {
  requestValidation: ack(
    'APIG2',
    "Requests carry no body; every path and query parameter is validated in the handler with zod, which answers the spec's field-level 400 envelope that API Gateway's request validator cannot produce.",
  ),
  waf: ack(
    'APIG3',
    'No regional WAF web ACL on this stage: the Embed API is bounded by its stage throttle and CloudFront (whose own web ACL is the EmbedWaf stack); the Public API has one in production (publicWaf, on by default there) and elsewhere is bounded by its stage throttle and per-key usage plan unless -c publicWaf=true, since a web ACL has a fixed monthly cost (docs/deploy.md).',
  ),
  cognito: ack(
    'COG4',
    'The spec authenticates with API keys checked by a REQUEST authorizer (Public API) and makes the Embed API unauthenticated; there are no Cognito users.',
  ),
  embedIsPublic: ack('APIG4', 'The Embed API is public by design (spec §5): no key, GET only, published public events only, throttled per stage.'),
  openPublicMethods: ack(
    'APIG4',
    'PRODUCT P15: the OpenAPI document and the 308 redirect of the old /api/ext/v1 prefix need no key; neither reads data, and the usage plan must not meter them.',
  ),
  apiGatewayLogsRole: ack(
    'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
    "API Gateway's account-level CloudWatch role for execution logs; AmazonAPIGatewayPushToCloudWatchLogs is the AWS-maintained policy documented for it and grants only CloudWatch Logs actions.",
  ),
  cdnDefaultCertificate: ack(
    'CFR4',
    'The distribution uses its default *.cloudfront.net certificate, with which CloudFront fixes the viewer security policy at TLSv1; a custom domain with its own certificate would allow TLSv1.2_2021. The Embed API carries public data only and no credentials.',
  ),
  cdnNoGeoRestriction: ack('CFR1', 'The widget is embedded on pages read worldwide and serves public event data: there is no country to exclude.'),
  cdnNoWaf: ack(
    'CFR2',
    'No web ACL only where embedWaf is off (staging by default, or -c embedWaf=false): a CloudFront web ACL must live in us-east-1 and has a fixed monthly cost; production attaches it by default (docs/deploy.md). Without it, the cache key (only each route\'s own parameters) and the Embed stage throttle bound what reaches the origin, not what one client may send.',
  ),
  keyAdminValidation: ack(
    'APIG2',
    "The key-management API's one body (a create) is validated by the handler's zod schema, which names the failing field in a 400 envelope; API Gateway's request validator could only answer a generic message.",
  ),
  keyAdminIam: ack('COG4', 'The key-management API is for one AWS workload (the web product), authenticated by AWS_IAM (SigV4); there are no Cognito users.'),
  keyAdminWaf: ack(
    'APIG3',
    'No web ACL on the key-management stage: only SigV4-signed requests of an IAM principal granted execute-api:Invoke get past API Gateway, and its stage throttle (10/s) bounds the rest; a web ACL has a fixed monthly cost.',
  ),
  keyAdminApiKeyDeletion: ack(
    'IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*]',
    "An API key's id exists only once API Gateway creates it, so deletion cannot name it in advance: the statement allows DELETE only of API keys tagged with this stack's usage plan id (aws:ResourceTag), which creation requires (aws:RequestTag).",
  ),
  keyAdminTagOnCreate: ack(
    'IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/tags/arn%3A<AWS::Partition>%3Aapigateway%3A<AWS::Region>%3A%3A%2Fapikeys%2F<*>]',
    "Not a wildcard: ${*} is IAM's literal asterisk. CreateApiKey with tags is authorized as a PUT on the tags of the API keys collection with a literal * where the new key's id will be; this resource matches that request and no existing resource's tags, with only this stack's usage-plan tag (aws:RequestTag, aws:TagKeys).",
  ),
  widgetAssetRead: widgetGrant('Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*'),
  widgetBucketObjects: widgetGrant('Resource::<EmbedWidgetBucket.Arn>/*'),
  widgetGetBucket: widgetGrant('Action::s3:GetBucket*'),
  widgetGetObject: widgetGrant('Action::s3:GetObject*'),
  widgetList: widgetGrant('Action::s3:List*'),
  widgetAbort: widgetGrant('Action::s3:Abort*'),
  widgetDeleteObject: widgetGrant('Action::s3:DeleteObject*'),
  widgetDeploymentRuntime: ack(
    'L1',
    "The widget's BucketDeployment runs aws-cdk-lib's own copier (Python with the AWS CLI layer) on the runtime aws-cdk-lib pins; it moves with aws-cdk-lib, at deploy time only, and serves no request.",
  ),
  cursorKeyRotation: ack(
    'SMG4',
    "The cursor key is an HMAC key, not a credential of another service: rotating it is putting a new random value (docs/deploy.md), after which the feed functions keep accepting the previous one for a cursor's 30-day lifetime; an automatic schedule would need a rotation function for no gain in what the key protects (cursors that reveal only public positions).",
  ),
  webhookStreamFailures: ack(
    'SQS3',
    "This queue is a dead-letter queue: the on-failure destination of the webhooks' stream event source (lib/webhooks.ts), where Lambda puts the description of a stream batch it gave up on. cdk-nag recognizes a DLQ only by another queue's redrive policy; this one has its own alarm (WebhookFanOutFailures).",
  ),
};

export function acknowledgeNagFindings(stack: PublicEventsStack): void {
  const { publicApi, embedApi } = stack.apis;
  for (const api of [publicApi, embedApi]) Validations.of(api).acknowledge(NAG_REASONS.requestValidation, NAG_REASONS.cognito);
  Validations.of(embedApi.deploymentStage).acknowledge(NAG_REASONS.waf);
  if (!stack.publicWaf) Validations.of(publicApi.deploymentStage).acknowledge(NAG_REASONS.waf);
  Validations.of(embedApi).acknowledge(NAG_REASONS.embedIsPublic);
  Validations.of(publicApi).acknowledge(NAG_REASONS.apiGatewayLogsRole);
  for (const method of stack.apis.openPublicMethods) Validations.of(method).acknowledge(NAG_REASONS.openPublicMethods);
  const { api: keyAdminApi, role: keyAdminRole } = stack.keyAdmin;
  Validations.of(keyAdminApi).acknowledge(NAG_REASONS.keyAdminValidation, NAG_REASONS.keyAdminIam);
  Validations.of(keyAdminApi.deploymentStage).acknowledge(NAG_REASONS.keyAdminWaf);
  Validations.of(keyAdminRole).acknowledge(NAG_REASONS.keyAdminApiKeyDeletion, NAG_REASONS.keyAdminTagOnCreate);
  Validations.of(stack.cursorKey).acknowledge(NAG_REASONS.cursorKeyRotation);
  Validations.of(stack.webhooks.streamFailures).acknowledge(NAG_REASONS.webhookStreamFailures);
  const cdn = stack.embedCdn;
  if (cdn) {
    Validations.of(cdn.distribution).acknowledge(NAG_REASONS.cdnDefaultCertificate, NAG_REASONS.cdnNoGeoRestriction);
    if (!stack.hasEmbedWebAcl) Validations.of(cdn.distribution).acknowledge(NAG_REASONS.cdnNoWaf);
    const { widgetAssetRead, widgetBucketObjects, widgetGetBucket, widgetGetObject, widgetList, widgetAbort, widgetDeleteObject } = NAG_REASONS;
    Validations.of(cdn.widget.deploymentRole).acknowledge(widgetAssetRead, widgetBucketObjects, widgetGetBucket, widgetGetObject, widgetList, widgetAbort, widgetDeleteObject);
    // The copier is a singleton function at the stack's root, one per stack (aws-cdk-lib names it so).
    for (const copier of stack.node.children.filter((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'))) Validations.of(copier).acknowledge(NAG_REASONS.widgetDeploymentRuntime);
  }
}
