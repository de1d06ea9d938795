/**
 * The two REST APIs, their methods generated from lambdas/routes.ts. Each
 * surface is its own REST API whose resources live under the spec's path
 * (`/api/public/v1/…`, `/api/embed/v1/…`), so the same paths work on the
 * execute-api URL, on the custom domain and locally.
 */
import { Duration } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  CfnAuthorizer,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  type Method,
  type MethodOptions,
  MethodLoggingLevel,
  Period,
  RequestAuthorizer,
  RestApi,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import type { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EMBED_CORS } from '../lambdas/http/embed-cors.js';
import { LEGACY_PREFIX } from '../lambdas/core/legacy-prefix.js';
import { SURFACES, routes, type RouteDefinition, type Surface } from '../lambdas/routes.js';
import { DAILY_QUOTA, EMBED_RESPONSES, addEnvelopeResponses, publicResponses, type QuotaHeaderSource } from './gateway-responses.js';

/** Per-key throttle of the usage plan (documented in docs/errors-and-rate-limits.md). */
export const PER_KEY_THROTTLE = { rateLimit: 10, burstLimit: 20 };
/** Stage-wide throttle of the unauthenticated Embed API: protects the table from abuse. */
export const EMBED_STAGE_THROTTLE = { rateLimit: 200, burstLimit: 400 };

export interface Throttle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export interface RestApisProps {
  readonly stageName: string;
  readonly functions: ReadonlyMap<string, IFunction>;
  readonly authorizer: IFunction;
  /** Answers /api/ext/v1/… with a 308 to /api/public/v1/… (PRODUCT P15). */
  readonly legacyRedirect: IFunction;
  readonly logRetention: RetentionDays;
  readonly retainLogs: boolean;
  /**
   * Stage-wide throttle of the Public API (method settings for every resource and method): bounds a
   * flood of keyless or bad-key requests, each of which invokes the
   * uncached authorizer; answered by the THROTTLED gateway response.
   */
  readonly publicThrottle: Throttle;
  /** Sources of the quota 429's headers (context `quotaHeaders`). */
  readonly quotaHeaders: QuotaHeaderSource;
}

// Fields API Gateway logs per request; the key itself is never among them
// (principalId is the non-secret key id the authorizer returns).
const accessLogFormat = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    method: '$context.httpMethod',
    resource: '$context.resourcePath',
    path: '$context.path',
    status: '$context.status',
    responseType: '$context.error.responseType',
    latencyMs: '$context.responseLatency',
    integrationLatencyMs: '$context.integrationLatency',
    keyId: '$context.authorizer.principalId',
    userAgent: '$context.identity.userAgent',
  }),
);

export class RestApis extends Construct {
  readonly publicApi: RestApi;
  readonly embedApi: RestApi;
  readonly usagePlan: UsagePlan;
  /** Public API methods without authorization by design (PRODUCT P15): the document and the old-prefix redirect. */
  readonly openPublicMethods: Method[] = [];

  constructor(scope: Construct, id: string, props: RestApisProps) {
    super(scope, id);
    const accessLogs = (name: string) =>
      new LogGroupLogDestination(
        new LogGroup(this, `${name}AccessLogs`, {
          retention: props.logRetention,
          removalPolicy: props.retainLogs ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
        }),
      );
    const stageOptions = {
      stageName: props.stageName,
      accessLogFormat,
      loggingLevel: MethodLoggingLevel.ERROR,
      dataTraceEnabled: false,
      metricsEnabled: true,
      tracingEnabled: false,
    };

    // Public API: every method behind the REQUEST authorizer and the usage plan.
    const authorizer = new RequestAuthorizer(this, 'KeyAuthorizer', {
      handler: props.authorizer,
      // No identity sources: the key may come in either of two headers, and
      // identity sources are all-required. No caching: revocation is immediate.
      identitySources: [],
      resultsCacheTtl: Duration.seconds(0),
    });
    // CDK renders the empty list as IdentitySource: ''; with caching off the
    // property is optional, so leave it out rather than send an empty string.
    (authorizer.node.defaultChild as CfnAuthorizer).addPropertyDeletionOverride('IdentitySource');
    this.publicApi = new RestApi(this, 'PublicApi', {
      description: 'Public Events API (keyed)',
      endpointTypes: [EndpointType.REGIONAL],
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      cloudWatchRole: true,
      deployOptions: {
        ...stageOptions,
        accessLogDestination: accessLogs('Public'),
        throttlingRateLimit: props.publicThrottle.rateLimit,
        throttlingBurstLimit: props.publicThrottle.burstLimit,
      },
      // No CORS on the Public API: keys stay server-side.
    });
    const openRoutes = this.addRoutes(this.publicApi, 'public', props.functions, {
      key: { authorizer, authorizationType: AuthorizationType.CUSTOM, apiKeyRequired: true },
      // The OpenAPI document (PRODUCT P15): no authorizer, no key, so the usage plan does not meter it.
      none: { authorizationType: AuthorizationType.NONE, apiKeyRequired: false },
    });
    this.openPublicMethods.push(...openRoutes);
    // The old prefix, whatever the method and the path below it, with or without a key.
    const legacy = this.publicApi.root.resourceForPath(LEGACY_PREFIX.slice(1));
    const redirect = new LambdaIntegration(props.legacyRedirect);
    const open = { authorizationType: AuthorizationType.NONE, apiKeyRequired: false };
    this.openPublicMethods.push(legacy.addMethod('ANY', redirect, open), legacy.addResource('{proxy+}').addMethod('ANY', redirect, open));
    this.usagePlan = this.publicApi.addUsagePlan('DailyQuota', {
      description: `${DAILY_QUOTA} requests per key per UTC day`,
      quota: { limit: DAILY_QUOTA, period: Period.DAY },
      throttle: PER_KEY_THROTTLE,
      apiStages: [{ api: this.publicApi, stage: this.publicApi.deploymentStage }],
    });
    addEnvelopeResponses(this.publicApi, publicResponses(props.quotaHeaders));

    // Embed API: no auth, CORS preflight on every path, a stage-wide throttle.
    this.embedApi = new RestApi(this, 'EmbedApi', {
      description: 'Public Events Embed API (no key, CORS)',
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole: false,
      deployOptions: {
        ...stageOptions,
        accessLogDestination: accessLogs('Embed'),
        throttlingRateLimit: EMBED_STAGE_THROTTLE.rateLimit,
        throttlingBurstLimit: EMBED_STAGE_THROTTLE.burstLimit,
      },
      defaultCorsPreflightOptions: {
        allowOrigins: [EMBED_CORS.allowOrigin],
        allowMethods: [...EMBED_CORS.allowMethods],
        allowHeaders: [...EMBED_CORS.allowHeaders],
        statusCode: 204,
      },
    });
    const none = { authorizationType: AuthorizationType.NONE };
    this.addRoutes(this.embedApi, 'embed', props.functions, { key: none, none });
    // OPTIONS on any other path too (PRODUCT P11): a catch-all answered by a mock.
    this.embedApi.root.addProxy({ anyMethod: false });
    // CORS so a browser can read them, and no-store like every Embed error (the local server's gateway errors too):
    // without it a CDN or browser could keep a gateway 404 for a path that later exists.
    addEnvelopeResponses(this.embedApi, EMBED_RESPONSES, { 'Access-Control-Allow-Origin': `'${EMBED_CORS.allowOrigin}'`, 'Cache-Control': "'no-store'" });

    // Both stages log, and a stage with logging fails to create ("CloudWatch Logs role ARN must be set in
    // account settings") before the account's CloudWatch role is set. CDK makes the Public stage wait for
    // the account resource; the Embed stage must too, or it may be created first.
    const account = this.publicApi.node.findChild('Account') as CfnAccount;
    this.embedApi.deploymentStage.node.addDependency(account);
    this.publicApi.deploymentStage.node.addDependency(account);
  }

  private addRoutes(
    api: RestApi,
    surface: Surface,
    functions: ReadonlyMap<string, IFunction>,
    options: Record<RouteDefinition['auth'], MethodOptions>,
  ): Method[] {
    const open: Method[] = [];
    for (const route of (routes as readonly RouteDefinition[]).filter((r) => r.surface === surface)) {
      const fn = functions.get(route.id);
      if (!fn) throw new Error(`no function for route ${route.id}`);
      const path = `${SURFACES[surface]}${route.path}`.replace(/^\//, '');
      const method = api.root.resourceForPath(path).addMethod(route.method, new LambdaIntegration(fn), options[route.auth]);
      if (route.auth === 'none') open.push(method);
    }
    return open;
  }
}
