/**
 * The optional web ACL for the Embed API's CloudFront distribution: one
 * rate-based rule blocking a client IP that sends more than `limit` requests
 * in five minutes. A web ACL for CloudFront must be created in us-east-1,
 * whatever region the service runs in, so it is its own stack, pinned there;
 * its ARN output is passed to the service stack as `-c embedWebAclArn=…`
 * (no cross-region reference: deploying one never blocks on the other).
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';

export interface EmbedWafStackProps extends StackProps {
  /** Requests per client IP per 5-minute window before it is blocked. */
  readonly limit: number;
}

export class EmbedWafStack extends Stack {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: EmbedWafStackProps) {
    super(scope, id, props);
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
    this.webAcl = new CfnWebACL(this, 'EmbedWebAcl', {
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('EmbedWebAcl'),
      rules: [
        {
          name: 'RatePerClientIp',
          priority: 0,
          action: { block: {} },
          statement: { rateBasedStatement: { limit: props.limit, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          visibilityConfig: visibility('EmbedRatePerClientIp'),
        },
      ],
    });
    new CfnOutput(this, 'EmbedWebAclArn', { value: this.webAcl.attrArn });
  }
}
