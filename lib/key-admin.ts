/**
 * The key-management API for the web product: a REST API whose every method
 * requires AWS_IAM authorization (SigV4), in front of one function
 * (lambdas/key-admin/handler.ts) that creates, lists and revokes keys with the
 * key manager. It is a third API of its own: not a resource of the Public or
 * Embed API, not in their OpenAPI documents, and no API key reaches it.
 *
 * Why a REST API with AWS_IAM rather than a function URL or a direct invoke
 * (docs/design.md): a stage throttle, JSON access logs naming the IAM caller,
 * API Gateway's own refusal of unsigned requests before any code runs, plain
 * HTTPS the web product signs with the AWS SDK's signer, and a local stand-in
 * that is just an HTTP server checking signatures.
 *
 * The function's role may do exactly what key management does:
 * - DynamoDB on the base table, only on items whose partition key is a key
 *   item's (USERKEYS#, KEYID#, APIKEY#, KEYREQ#; dynamodb:LeadingKeys), and
 *   Query on the one index that finds a user by username;
 * - API Gateway (ARN formats: docs.aws.amazon.com/apigateway/latest/developerguide/arn-format-reference.html):
 *   create API keys only when tagged with this stack's usage plan
 *   (aws:RequestTag; the same for the tagging call a tag-on-create may also
 *   be authorized as), attach keys to this usage plan only, delete only API keys
 *   carrying that tag (aws:ResourceTag): an API key's id is unknown until it
 *   exists, so the tag is what scopes deletion to this stack's keys.
 */
import { CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogFormat, AuthorizationType, EndpointType, LambdaIntegration, LogGroupLogDestination, MethodLoggingLevel, RestApi, type UsagePlan } from 'aws-cdk-lib/aws-apigateway';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct, type IDependable } from 'constructs';
import { KEY_ADMIN_BASE_PATH, KEY_ADMIN_ROUTES } from '../lambdas/key-admin/routes.js';
import { INDEXES } from '../lambdas/store/table.js';
import { USAGE_PLAN_TAG } from '../lambdas/key-admin/usage-plan.js';
import { RouteFunction } from './route-function.js';

export const KEY_ADMIN = {
  handlerFile: 'lambdas/key-admin/handler',
  /** Partition-key prefixes of the items key management reads and writes (lambdas/store/table.ts). */
  leadingKeys: ['USERKEYS#*', 'KEYID#*', 'APIKEY#*', 'KEYREQ#*'],
  tableActions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query'],
  /** One web product's settings area: far above its users' clicks, far below what could hurt the table or API Gateway's key quotas. */
  throttle: { rateLimit: 10, burstLimit: 20 },
} as const;

export interface KeyAdminProps {
  readonly table: ITableV2;
  readonly usagePlan: UsagePlan;
  readonly stageName: string;
  readonly environment: Record<string, string>;
  readonly logRetention: RetentionDays;
  readonly retainLogs: boolean;
  /** API Gateway's account settings (its CloudWatch role): a stage that logs must be created after them. */
  readonly after: IDependable;
}

// The caller is the IAM identity API Gateway verified; nothing else identifies a request here.
const accessLogFormat = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    caller: '$context.identity.caller',
    userArn: '$context.identity.userArn',
    method: '$context.httpMethod',
    resource: '$context.resourcePath',
    path: '$context.path',
    status: '$context.status',
    responseType: '$context.error.responseType',
    latencyMs: '$context.responseLatency',
  }),
);

export class KeyAdmin extends Construct {
  readonly api: RestApi;
  readonly fn: RouteFunction['fn'];
  readonly role: RouteFunction['role'];
  /** What the web product's IAM statement allows it to invoke: every key-management method of this stage. */
  readonly invokeArn: string;

  constructor(scope: Construct, id: string, props: KeyAdminProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const fn = new RouteFunction(this, 'Function', {
      handlerFile: KEY_ADMIN.handlerFile,
      description: 'Key management for the web product (IAM-only API): create, list, revoke',
      environment: props.environment,
      logRetention: props.logRetention,
      retainLogs: props.retainLogs,
    });
    fn.fn.addEnvironment('TABLE_NAME', props.table.tableName);
    fn.fn.addEnvironment('USAGE_PLAN_ID', props.usagePlan.usagePlanId);
    this.fn = fn.fn;
    this.role = fn.role;
    for (const statement of keyAdminStatements(stack, props.table, props.usagePlan.usagePlanId)) fn.role.addToPolicy(statement);

    this.api = new RestApi(this, 'Api', {
      description: 'Public Events key management: the web product only (AWS IAM)',
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole: false,
      deployOptions: {
        stageName: props.stageName,
        accessLogDestination: new LogGroupLogDestination(
          new LogGroup(this, 'AccessLogs', { retention: props.logRetention, removalPolicy: props.retainLogs ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY }),
        ),
        accessLogFormat,
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: false,
        throttlingRateLimit: KEY_ADMIN.throttle.rateLimit,
        throttlingBurstLimit: KEY_ADMIN.throttle.burstLimit,
      },
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
    });
    const integration = new LambdaIntegration(this.fn, { timeout: Duration.seconds(10) });
    for (const route of KEY_ADMIN_ROUTES) {
      this.api.root.resourceForPath(`${KEY_ADMIN_BASE_PATH}${route.path}`.slice(1)).addMethod(route.method, integration, { authorizationType: AuthorizationType.IAM });
    }
    this.api.deploymentStage.node.addDependency(props.after);
    this.invokeArn = this.api.arnForExecuteApi('*', `${KEY_ADMIN_BASE_PATH}/*`, props.stageName);

    new CfnOutput(scope, 'KeyAdminApiUrl', {
      description: 'Key management for the web product: SigV4-signed requests (service execute-api) only (docs/managing-keys.md)',
      value: `${this.api.url}${KEY_ADMIN_BASE_PATH.slice(1)}`,
    });
    new CfnOutput(scope, 'KeyAdminInvokeArn', {
      description: "The Resource of the web product's one IAM statement: Allow execute-api:Invoke on this ARN",
      value: this.invokeArn,
    });
  }
}

/** The key-management function's permissions, nothing more (see the file's comment). */
export function keyAdminStatements(stack: Stack, table: ITableV2, usagePlanId: string): PolicyStatement[] {
  const apigateway = (resource: string) => stack.formatArn({ service: 'apigateway', account: '', resource });
  return [
    new PolicyStatement({
      sid: 'KeyItems',
      actions: [...KEY_ADMIN.tableActions],
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...KEY_ADMIN.leadingKeys] } },
    }),
    new PolicyStatement({ sid: 'UserByUsername', actions: ['dynamodb:Query'], resources: [`${table.tableArn}/index/${INDEXES.event.name}`] }),
    new PolicyStatement({
      sid: 'CreateTaggedApiKeys',
      actions: ['apigateway:POST'],
      resources: [apigateway('/apikeys')],
      conditions: { StringEquals: { [`aws:RequestTag/${USAGE_PLAN_TAG}`]: usagePlanId }, 'ForAllValues:StringEquals': { 'aws:TagKeys': [USAGE_PLAN_TAG] } },
    }),
    // Tagging on creation may also be authorized as the tagging call (apigateway:PUT on /tags/{arn}), as CloudFormation's
    // and other services' tag-on-create are: allowed only with this plan's tag, so it cannot tag anything else usefully.
    new PolicyStatement({
      sid: 'TagOnCreate',
      actions: ['apigateway:PUT'],
      resources: [apigateway('/tags/*')],
      conditions: { StringEquals: { [`aws:RequestTag/${USAGE_PLAN_TAG}`]: usagePlanId }, 'ForAllValues:StringEquals': { 'aws:TagKeys': [USAGE_PLAN_TAG] } },
    }),
    new PolicyStatement({ sid: 'AttachToThisUsagePlan', actions: ['apigateway:POST'], resources: [apigateway(`/usageplans/${usagePlanId}/keys`)] }),
    new PolicyStatement({
      sid: 'DeleteThisPlansApiKeys',
      actions: ['apigateway:DELETE'],
      resources: [apigateway('/apikeys/*')],
      conditions: { StringEquals: { [`aws:ResourceTag/${USAGE_PLAN_TAG}`]: usagePlanId } },
    }),
  ];
}
