/**
 * The whole service in one stack, one instance per stage: the table, one
 * Lambda per route of lambdas/routes.ts plus the authorizer, both REST APIs,
 * alarms, and the optional custom domain.
 */
import { CfnOutput, CfnParameter, Stack, type StackProps } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { LEGACY_PREFIX } from '../lambdas/core/legacy-prefix.js';
import { AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER, SURFACES, routes, type RouteDefinition } from '../lambdas/routes.js';
import { CursorKey } from './cursor-key.js';
import { CustomDomain } from './custom-domain.js';
import { EmbedCdn } from './embed-cdn.js';
import { EventsTable } from './events-table.js';
import { Ingest } from './ingest.js';
import { KeyAdmin } from './key-admin.js';
import { Monitoring } from './monitoring.js';
import { OperationsDashboard } from './dashboard.js';
import { PublicWaf } from './public-waf.js';
import { metricsNamespace, powertoolsEnvironment } from './observability.js';
import { RestApis } from './rest-apis.js';
import { RouteFunction } from './route-function.js';
import { Webhooks } from './webhooks.js';
import { EMBED_WEB_ACL_ARN_PATTERN, type StackConfig, type Stage } from './stack-config.js';

/** The service stack's parameter holding the Embed web ACL's ARN when context does not give it. */
export const EMBED_WEB_ACL_PARAMETER = 'EmbedWebAclArn';

export type { Stage };

export interface PublicEventsStackProps extends StackProps {
  readonly config: StackConfig;
}

export class PublicEventsStack extends Stack {
  readonly apis: RestApis;
  readonly embedCdn?: EmbedCdn;
  readonly hasEmbedWebAcl: boolean;
  readonly publicWaf?: PublicWaf;
  readonly keyAdmin: KeyAdmin;
  readonly ingest: Ingest;
  /** Webhooks (PRODUCT P18): the stream's fan-out, the wake-up queue, the delivery function, the secrets' key. */
  readonly webhooks: Webhooks;
  /** The changes feeds' cursor key (lib/cursor-key.ts). */
  readonly cursorKey: ISecret;

  constructor(scope: Construct, id: string, props: PublicEventsStackProps) {
    super(scope, id, props);
    const { config } = props;
    // With embedWaf (production's default) the distribution always has the web ACL: by context, or else as a
    // deploy-time parameter without a default, so a deploy cannot leave it out by forgetting it (docs/deploy.md).
    this.hasEmbedWebAcl = config.embedCdn && (config.embedWebAclArn !== undefined || config.embedWaf);
    const production = config.stage === 'production';
    const logRetention = production ? RetentionDays.THREE_MONTHS : RetentionDays.ONE_MONTH;
    const { table } = new EventsTable(this, 'Events', { retain: production, placeIndexes: config.placeIndexes, indexProjection: config.indexProjection });

    const powertools = powertoolsEnvironment(config);
    const environment = {
      ...powertools,
      SERVICE_NAME: config.serviceName,
      SITE_URL: config.siteUrl,
      USER_EVENTS_VARIANT: config.userEventsVariant,
      EMBED_CACHE_MAX_AGE: String(config.embedCacheMaxAge),
    };
    const cursorKey = new CursorKey(this, 'CursorKey', { retain: production });
    this.cursorKey = cursorKey.secret;
    const functions = new Map<string, IFunction>();
    for (const route of routes as readonly RouteDefinition[]) {
      const rf = new RouteFunction(this, route.id, {
        handlerFile: route.handler,
        description: `${route.method} ${SURFACES[route.surface]}${route.path}`,
        environment,
        logRetention,
        retainLogs: production,
      });
      // The OpenAPI documents never read the table: no grant, only the name the config parser expects.
      if (route.tableReads.length === 0) rf.fn.addEnvironment('TABLE_NAME', table.tableName);
      else rf.bindTableReads(table, route.tableReads);
      if (route.cursorKey) rf.bindCursorKey(cursorKey.secret);
      functions.set(route.id, rf.fn);
    }
    const authorizer = new RouteFunction(this, 'Authorizer', {
      handlerFile: AUTHORIZER_HANDLER,
      description: 'Public API key authorizer',
      environment,
      logRetention,
      retainLogs: production,
    });
    authorizer.bindApiKeyReads(table);
    const legacyRedirect = new RouteFunction(this, 'LegacyRedirect', {
      handlerFile: LEGACY_REDIRECT_HANDLER,
      description: `ANY ${LEGACY_PREFIX}/… → 308 ${SURFACES.public}/…`,
      environment,
      logRetention,
      retainLogs: production,
    });
    // Same environment as every function (it reads none of it); no table access at all.
    legacyRedirect.fn.addEnvironment('TABLE_NAME', table.tableName);

    this.apis = new RestApis(this, 'Apis', {
      stageName: config.stage,
      functions,
      authorizer: authorizer.fn,
      legacyRedirect: legacyRedirect.fn,
      logRetention,
      retainLogs: production,
      publicThrottle: { rateLimit: config.publicThrottleRate, burstLimit: config.publicThrottleBurst },
      quotaHeaders: config.quotaHeaders,
    });
    const { publicApi, embedApi, usagePlan } = this.apis;
    if (config.publicWaf) this.publicWaf = new PublicWaf(this, 'PublicWaf', { stage: publicApi.deploymentStage, limit: config.publicWafRateLimit });

    // The web product's IAM-only door for keys (lib/key-admin.ts); its own API, not a part of the Public or Embed API.
    this.keyAdmin = new KeyAdmin(this, 'KeyAdmin', {
      table,
      usagePlan,
      stageName: config.stage,
      environment: powertools,
      logRetention,
      retainLogs: production,
      after: publicApi.node.findChild('Account'),
      callers: config.keyAdminCallers,
    });

    const ingest = (this.ingest = new Ingest(this, 'Ingest', {
      table,
      logRetention,
      retainLogs: production,
      environment: powertools,
      maxConcurrency: config.ingestMaxConcurrency,
      keyAdmin: this.keyAdmin.fn,
    }));

    const webhooks = (this.webhooks = new Webhooks(this, 'Webhooks', {
      table,
      cursorKey: cursorKey.secret,
      keyAdmin: this.keyAdmin.routeFunction,
      environment: powertools,
      siteUrl: config.siteUrl,
      deliveryConcurrency: config.webhookDeliveryConcurrency,
      logRetention,
      retain: production,
    }));

    const apis = { Public: publicApi, Embed: embedApi };
    const allFunctions = {
      ...Object.fromEntries(functions),
      Authorizer: authorizer.fn,
      LegacyRedirect: legacyRedirect.fn,
      Ingest: ingest.fn,
      KeyAdmin: this.keyAdmin.fn,
      WebhookFanOut: webhooks.fanOut.fn,
      WebhookDelivery: webhooks.delivery.fn,
    };
    const ingestQueues = { queue: ingest.queue, deadLetters: ingest.deadLetters };
    const webhookSources = { wakeUps: webhooks.wakeUps, wakeUpDeadLetters: webhooks.wakeUpDeadLetters, fanOutDeadLetters: webhooks.fanOutDeadLetters, streamFailures: webhooks.streamFailures, fanOut: webhooks.fanOut.fn };
    const monitoring = new Monitoring(this, 'Monitoring', {
      apis: { ...apis, KeyAdmin: this.keyAdmin.api },
      functions: allFunctions,
      table,
      ingest: ingestQueues,
      metricsNamespace: metricsNamespace(config.stage),
      alarmTopicArn: config.alarmTopicArn,
      alarmEmail: config.alarmEmail,
      webhooks: webhookSources,
    });
    new OperationsDashboard(this, 'Dashboard', {
      dashboardName: `PublicEvents-${config.stage}`,
      namespace: metricsNamespace(config.stage),
      apis,
      functions: allFunctions,
      table,
      ingest: ingestQueues,
      webhooks: webhookSources,
      alarms: monitoring.alarms,
    });
    if (config.domainName && config.certificateArn) {
      new CustomDomain(this, 'CustomDomain', {
        domainName: config.domainName,
        certificateArn: config.certificateArn,
        stageName: config.stage,
        publicApi,
        embedApi,
      });
    }

    new CfnOutput(this, 'PublicApiUrl', { value: `${publicApi.url}${SURFACES.public.slice(1)}` });
    if (config.embedCdn) {
      const webAclArn =
        config.embedWebAclArn ??
        (config.embedWaf
          ? new CfnParameter(this, EMBED_WEB_ACL_PARAMETER, {
              type: 'String',
              description: `ARN of the Embed web ACL: the EmbedWebAclArn output of PublicEventsEmbedWaf-${config.stage} (us-east-1). Deploy that stack first.`,
              allowedPattern: EMBED_WEB_ACL_ARN_PATTERN.source,
              constraintDescription: 'a CloudFront-scope web ACL ARN in us-east-1 (arn:aws:wafv2:us-east-1:ACCOUNT:global/webacl/…)',
            }).valueAsString
          : undefined);
      this.embedCdn = new EmbedCdn(this, 'EmbedCdn', { embedApi, webAclArn, userEventsVariant: config.userEventsVariant, logRetention, retainLogs: production });
      // The address widgets should use: the edge. The execute-api URL stays reachable (docs/deploy.md).
      const edge = `https://${this.embedCdn.distribution.distributionDomainName}`;
      new CfnOutput(this, 'EmbedApiUrl', { value: `${edge}${SURFACES.embed}` });
      // The widget's release on the same host, and the integrity a host page's script tag carries (docs/embed.md).
      const { release } = this.embedCdn.widget;
      new CfnOutput(this, 'WidgetUrl', { description: 'The embed widget, served by the Embed distribution (immutable)', value: `${edge}${release.path}` });
      new CfnOutput(this, 'WidgetIntegrity', { description: "The widget's Subresource Integrity hash: its script tag's integrity attribute", value: release.integrity });
      new CfnOutput(this, 'EmbedOriginUrl', { value: `${embedApi.url}${SURFACES.embed.slice(1)}` });
    } else {
      new CfnOutput(this, 'EmbedApiUrl', { value: `${embedApi.url}${SURFACES.embed.slice(1)}` });
    }
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'UsagePlanId', { value: usagePlan.usagePlanId });
    new CfnOutput(this, 'AlarmTopicArn', { description: 'Every alarm notifies this topic: subscribe on-call here (docs/operations.md)', value: monitoring.topic.topicArn });
  }
}
