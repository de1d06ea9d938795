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
  MethodLoggingLevel,
  Period,
  RequestAuthorizer,
  RestApi,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EMBED_CORS } from '../lambdas/http/embed-cors.js';
import { SURFACES, routes, type Surface } from '../lambdas/routes.js';
import { DAILY_QUOTA, EMBED_RESPONSES, PUBLIC_RESPONSES, addEnvelopeResponses } from './gateway-responses.js';

/** Per-key throttle of the usage plan (documented in the README). */
export const PER_KEY_THROTTLE = { rateLimit: 10, burstLimit: 20 };
/** Stage-wide throttle of the unauthenticated Embed API: protects the table from abuse. */
export const EMBED_STAGE_THROTTLE = { rateLimit: 200, burstLimit: 400 };

export interface RestApisProps {
  readonly stageName: string;
  readonly functions: ReadonlyMap<string, IFunction>;
  readonly authorizer: IFunction;
  readonly logRetention: RetentionDays;
  readonly retainLogs: boolean;
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
      deployOptions: { ...stageOptions, accessLogDestination: accessLogs('Public') },
      // No CORS on the Public API: keys stay server-side.
    });
    this.addRoutes(this.publicApi, 'public', props.functions, {
      authorizer,
      authorizationType: AuthorizationType.CUSTOM,
      apiKeyRequired: true,
    });
    this.usagePlan = this.publicApi.addUsagePlan('DailyQuota', {
      description: `${DAILY_QUOTA} requests per key per UTC day`,
      quota: { limit: DAILY_QUOTA, period: Period.DAY },
      throttle: PER_KEY_THROTTLE,
      apiStages: [{ api: this.publicApi, stage: this.publicApi.deploymentStage }],
    });
    addEnvelopeResponses(this.publicApi, PUBLIC_RESPONSES);

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
    this.addRoutes(this.embedApi, 'embed', props.functions, { authorizationType: AuthorizationType.NONE });
    // OPTIONS on any other path too (PRODUCT P11): a catch-all answered by a mock.
    this.embedApi.root.addProxy({ anyMethod: false });
    addEnvelopeResponses(this.embedApi, EMBED_RESPONSES, { 'Access-Control-Allow-Origin': `'${EMBED_CORS.allowOrigin}'` });
  }

  private addRoutes(
    api: RestApi,
    surface: Surface,
    functions: ReadonlyMap<string, IFunction>,
    options: Parameters<RestApi['root']['addMethod']>[2],
  ): void {
    for (const route of routes.filter((r) => r.surface === surface)) {
      const fn = functions.get(route.id);
      if (!fn) throw new Error(`no function for route ${route.id}`);
      const path = `${SURFACES[surface]}${route.path}`.replace(/^\//, '');
      api.root.resourceForPath(path).addMethod(route.method, new LambdaIntegration(fn), options);
    }
  }
}
