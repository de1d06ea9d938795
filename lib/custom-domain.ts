/**
 * Optional custom domain serving both APIs under their spec paths. API
 * mappings strip their base path, but each REST API's resources already live
 * under `/api/public/v1` or `/api/embed/v1`; routing rules with
 * `StripBasePath: false` forward the whole path instead, so a client's paths
 * are the same on the domain as on each execute-api URL. A third rule sends
 * the old `/api/ext/v1` prefix to the Public API, which redirects it.
 */
import { CfnOutput } from 'aws-cdk-lib';
import { CfnDomainName, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { CfnRoutingRule } from 'aws-cdk-lib/aws-apigatewayv2';
import { Construct } from 'constructs';
import { LEGACY_PREFIX } from '../lambdas/core/legacy-prefix.js';
import { SURFACES } from '../lambdas/routes.js';

export interface CustomDomainProps {
  readonly domainName: string;
  readonly certificateArn: string;
  readonly stageName: string;
  readonly publicApi: RestApi;
  readonly embedApi: RestApi;
}

export class CustomDomain extends Construct {
  constructor(scope: Construct, id: string, props: CustomDomainProps) {
    super(scope, id);
    const domain = new CfnDomainName(this, 'Domain', {
      domainName: props.domainName,
      regionalCertificateArn: props.certificateArn,
      endpointConfiguration: { types: ['REGIONAL'] },
      securityPolicy: 'TLS_1_2',
      routingMode: 'ROUTING_RULE_ONLY',
    });
    const rule = (name: string, priority: number, basePath: string, api: RestApi) => {
      const routing = new CfnRoutingRule(this, name, {
        domainNameArn: domain.attrDomainNameArn,
        priority,
        conditions: [{ matchBasePaths: { anyOf: [basePath] } }],
        actions: [{ invokeApi: { apiId: api.restApiId, stage: props.stageName, stripBasePath: false } }],
      });
      // The rule names its stage by name only: without this, CloudFormation may create it before the stage exists.
      routing.node.addDependency(api.deploymentStage);
      return routing;
    };
    rule('PublicRule', 100, SURFACES.public.slice(1), props.publicApi);
    rule('EmbedRule', 200, SURFACES.embed.slice(1), props.embedApi);
    // The old prefix goes to the Public API, which answers it with a 308 (PRODUCT P15).
    rule('LegacyRule', 300, LEGACY_PREFIX.slice(1), props.publicApi);
    new CfnOutput(scope, 'DomainTarget', {
      description: `Point ${props.domainName} (CNAME or alias) at this regional domain name`,
      value: domain.attrRegionalDomainName,
    });
  }
}
