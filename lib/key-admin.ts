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
 * Who may call it: the API's resource policy denies execute-api:Invoke to
 * every principal but the ones named by the `keyAdminCallers` context value
 * (the web product's role), whatever their own policies allow (AWS's managed
 * invoke-full-access policy included); without it, to everyone.
 *
 * The function's role may do exactly what key management does:
 * - DynamoDB on the base table, only on items whose partition key is a key
 *   item's (USERKEYS#, APIKEY#, KEYREQ#, KEYSWEEP#; dynamodb:LeadingKeys), BatchGetItem
 *   only on key records (USERKEYS#: the sweep's page), and GetItem
 *   on a user's partition (USER#: is the user id a live user; keys belong to
 *   user ids, so no index is read);
 * - API Gateway (ARN formats and condition keys: the Service Authorization
 *   Reference, docs.aws.amazon.com/service-authorization/latest/reference/list_amazonapigatewaymanagement.html):
 *   create API keys only tagged with this stack's usage plan (aws:RequestTag,
 *   aws:TagKeys); tag nothing but a key being created: CreateApiKey is
 *   authorized as apigateway:POST and apigateway:PUT, the PUT on the tags of
 *   the API keys collection with a literal `*` where the new key's id will
 *   be, which `${*}` (IAM's literal asterisk) matches and no existing key's
 *   ARN does, so the role cannot put the plan's tag on anyone else's key;
 *   attach keys to this usage plan only; delete only API keys carrying the
 *   tag (aws:ResourceTag): an API key's id is unknown until it exists, so the
 *   tag, which only creation can set, is what scopes deletion to this stack's
 *   keys; list API keys (GetApiKeys: the sweep; the collection has no
 *   condition key, and the answer holds no key's value unless asked for).
 *
 * The function also runs two tasks invoked directly (lambdas/key-admin/tasks.ts):
 * `close`, invoked by the ingest for a user's deletion (the ingest's role
 * holds lambda:InvokeFunction on this function and no key item), and
 * `sweep`, every 5 minutes by an EventBridge schedule, each run a bounded
 * share of a pass (no plan key outlives its record:
 * lambdas/store/keys/plan-key-sweep.ts).
 */
import { CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { AccessLogFormat, AuthorizationType, EndpointType, LambdaIntegration, LogGroupLogDestination, MethodLoggingLevel, RestApi, type UsagePlan } from 'aws-cdk-lib/aws-apigateway';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { AnyPrincipal, ArnPrincipal, Effect, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct, type IDependable } from 'constructs';
import { KEY_ADMIN_BASE_PATH, KEY_ADMIN_ROUTES } from '../lambdas/key-admin/routes.js';
import { USAGE_PLAN_TAG } from '../lambdas/key-admin/usage-plan.js';
import { RouteFunction } from './route-function.js';

export const KEY_ADMIN = {
  handlerFile: 'lambdas/key-admin/handler',
  /** Partition-key prefixes of the items key management reads and writes (lambdas/store/table/table.ts; KEYSWEEP#: the sweep's progress). */
  leadingKeys: ['USERKEYS#*', 'APIKEY#*', 'KEYREQ#*', 'KEYSWEEP#*'],
  tableActions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query'],
  /**
   * BatchGetItem: only the sweep's, which reads a page's key records at once
   * (keys.keyRecord: USERKEYS#); dynamodb:LeadingKeys applies to each key it names.
   */
  batchReadLeadingKeys: ['USERKEYS#*'],
  /** One web product's settings area: far above its users' clicks, far below what could hurt the table or API Gateway's key quotas. */
  throttle: { rateLimit: 10, burstLimit: 20 },
  /**
   * How often a sweep run starts: each reads at most 10 pages of 500 API keys
   * and goes on where the last stopped (plan-key-sweep.ts), so a pass over n
   * keys takes ceil(n / 5,000) runs, and an orphaned plan key is deleted
   * within a minute plus two passes (21 minutes up to 10,000 keys, AWS's
   * default quota; 51 minutes at 25,000).
   */
  sweepEveryMinutes: 5,
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
  /** The principals (IAM role or user ARNs) the API's resource policy lets in; none: nobody. */
  readonly callers: readonly string[];
}

// The caller is the IAM identity API Gateway verified; nothing else identifies a request here. The resource template
// (`/admin/v1/users/{userId}/keys`), never the path: a path names a user id, and the function's audit lines are where
// who did what to whose key is kept (with their retention), not the access log.
export const KEY_ADMIN_ACCESS_LOG = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  caller: '$context.identity.caller',
  userArn: '$context.identity.userArn',
  method: '$context.httpMethod',
  resource: '$context.resourcePath',
  status: '$context.status',
  responseType: '$context.error.responseType',
  latencyMs: '$context.responseLatency',
} as const;
const accessLogFormat = AccessLogFormat.custom(
  JSON.stringify({
    ...KEY_ADMIN_ACCESS_LOG,
  }),
);

export class KeyAdmin extends Construct {
  readonly api: RestApi;
  readonly fn: RouteFunction['fn'];
  readonly role: RouteFunction['role'];
  /** The function with its binds (lib/webhooks.ts gives it the webhooks' grants). */
  readonly routeFunction: RouteFunction;
  /** What the web product's IAM statement allows it to invoke: every key-management method of this stage. */
  readonly invokeArn: string;

  constructor(scope: Construct, id: string, props: KeyAdminProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const fn = new RouteFunction(this, 'Function', {
      handlerFile: KEY_ADMIN.handlerFile,
      description: "Key management for the web product (IAM-only API): keys and their webhooks",
      environment: props.environment,
      logRetention: props.logRetention,
      retainLogs: props.retainLogs,
    });
    fn.fn.addEnvironment('TABLE_NAME', props.table.tableName);
    fn.fn.addEnvironment('USAGE_PLAN_ID', props.usagePlan.usagePlanId);
    this.fn = fn.fn;
    this.role = fn.role;
    this.routeFunction = fn;
    for (const statement of keyAdminStatements(stack, props.table, props.usagePlan.usagePlanId)) fn.role.addToPolicy(statement);
    new Rule(this, 'Sweep', {
      description: 'Deletes the API Gateway keys no key record holds (lambdas/store/keys/plan-key-sweep.ts)',
      schedule: Schedule.rate(Duration.minutes(KEY_ADMIN.sweepEveryMinutes)),
      targets: [new LambdaFunction(fn.fn, { event: RuleTargetInput.fromObject({ task: 'sweep' }), retryAttempts: 0 })],
    });

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
      policy: keyAdminResourcePolicy(props.callers),
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

/**
 * The API's resource policy: only `callers` may invoke it (an explicit deny
 * for every other principal, so no identity policy of theirs can open it),
 * and they may without a grant of their own in this account.
 */
export function keyAdminResourcePolicy(callers: readonly string[]): PolicyDocument {
  const everyMethod = 'execute-api:/*';
  if (!callers.length) {
    return new PolicyDocument({
      statements: [new PolicyStatement({ sid: 'NoCallerConfigured', effect: Effect.DENY, principals: [new AnyPrincipal()], actions: ['execute-api:Invoke'], resources: [everyMethod] })],
    });
  }
  return new PolicyDocument({
    statements: [
      new PolicyStatement({
        sid: 'OnlyTheWebProduct',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['execute-api:Invoke'],
        resources: [everyMethod],
        conditions: { StringNotEquals: { 'aws:PrincipalArn': [...callers] } },
      }),
      new PolicyStatement({ sid: 'TheWebProduct', principals: callers.map((arn) => new ArnPrincipal(arn)), actions: ['execute-api:Invoke'], resources: [everyMethod] }),
    ],
  });
}

/** `arn:aws:apigateway:REGION::/tags/{URL-encoded arn:aws:apigateway:REGION::/apikeys/}` and IAM's literal `*`: the tagging a CreateApiKey asks for. */
export function tagOnCreateResource(stack: Stack): string {
  const collection = `arn%3A${stack.partition}%3Aapigateway%3A${stack.region}%3A%3A%2Fapikeys%2F`;
  return stack.formatArn({ service: 'apigateway', account: '', resource: `/tags/${collection}\${*}` });
}

/** Deleting an API key of this stack's usage plan (tagged with its id at creation): a revoke, a user's deletion, the sweep. */
export function deleteThisPlansApiKeys(stack: Stack, usagePlanId: string): PolicyStatement {
  return new PolicyStatement({
    sid: 'DeleteThisPlansApiKeys',
    actions: ['apigateway:DELETE'],
    resources: [stack.formatArn({ service: 'apigateway', account: '', resource: '/apikeys/*' })],
    conditions: { StringEquals: { [`aws:ResourceTag/${USAGE_PLAN_TAG}`]: usagePlanId } },
  });
}

/** The key-management function's permissions, nothing more (see the file's comment). */
export function keyAdminStatements(stack: Stack, table: ITableV2, usagePlanId: string): PolicyStatement[] {
  const apigateway = (resource: string) => stack.formatArn({ service: 'apigateway', account: '', resource });
  const onlyThisPlansTag = { StringEquals: { [`aws:RequestTag/${USAGE_PLAN_TAG}`]: usagePlanId }, 'ForAllValues:StringEquals': { 'aws:TagKeys': [USAGE_PLAN_TAG] } };
  return [
    new PolicyStatement({
      sid: 'KeyItems',
      actions: [...KEY_ADMIN.tableActions],
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...KEY_ADMIN.leadingKeys] } },
    }),
    new PolicyStatement({
      sid: 'KeyRecordsAtOnce',
      actions: ['dynamodb:BatchGetItem'],
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...KEY_ADMIN.batchReadLeadingKeys] } },
    }),
    new PolicyStatement({
      sid: 'LiveUserById',
      actions: ['dynamodb:GetItem'],
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USER#*'] } },
    }),
    new PolicyStatement({ sid: 'CreateTaggedApiKeys', actions: ['apigateway:POST'], resources: [apigateway('/apikeys')], conditions: onlyThisPlansTag }),
    // The tagging half of CreateApiKey (file comment): on the key being created only, never on an existing resource.
    new PolicyStatement({ sid: 'TagOnlyKeysBeingCreated', actions: ['apigateway:PUT'], resources: [tagOnCreateResource(stack)], conditions: onlyThisPlansTag }),
    new PolicyStatement({ sid: 'AttachToThisUsagePlan', actions: ['apigateway:POST'], resources: [apigateway(`/usageplans/${usagePlanId}/keys`)] }),
    deleteThisPlansApiKeys(stack, usagePlanId),
    // The sweep lists the API keys (GetApiKeys is apigateway:GET on the collection; no condition key narrows it).
    new PolicyStatement({ sid: 'ListApiKeys', actions: ['apigateway:GET'], resources: [apigateway('/apikeys')] }),
  ];
}
