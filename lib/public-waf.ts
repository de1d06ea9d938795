/**
 * The optional regional web ACL of the Public API's stage: one rate-based
 * rule blocking a client IP that sends more than `limit` requests in five
 * minutes, keyed or not. It is what stops a flood of keyless or made-up-key
 * requests before it invokes the authorizer (which has no result cache, so
 * that revocation is immediate): the stage throttle bounds the rate of such a
 * flood, this bounds what one address can send.
 *
 * A blocked request is answered by WAF itself, not by API Gateway: 429 with
 * the spec's envelope (a custom response body), but none of the X-RateLimit-*
 * headers, since WAF prefixes every custom response header's name with
 * `x-amzn-waf-` (README, "Rate limits").
 */
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { MESSAGES } from '../lambdas/core/errors.js';

export interface PublicWafProps {
  readonly stage: Stage;
  /** Requests per client IP per 5-minute window before it is blocked. */
  readonly limit: number;
}

export const WAF_BLOCK_BODY_KEY = 'TooManyRequests';

export class PublicWaf extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: PublicWafProps) {
    super(scope, id);
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('PublicWebAcl'),
      customResponseBodies: {
        [WAF_BLOCK_BODY_KEY]: { contentType: 'APPLICATION_JSON', content: JSON.stringify({ success: false, message: MESSAGES.tooManyRequests }) },
      },
      rules: [
        {
          name: 'RatePerClientIp',
          priority: 0,
          action: { block: { customResponse: { responseCode: 429, customResponseBodyKey: WAF_BLOCK_BODY_KEY } } },
          statement: { rateBasedStatement: { limit: props.limit, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          visibilityConfig: visibility('PublicRatePerClientIp'),
        },
      ],
    });
    const association = new CfnWebACLAssociation(this, 'Association', { resourceArn: props.stage.stageArn, webAclArn: this.webAcl.attrArn });
    // The stage must exist before WAF can attach to it; its ARN is built from names, so say so.
    association.node.addDependency(props.stage);
  }
}
