/**
 * The optional regional web ACL of the Public API's stage: one rate-based
 * rule blocking a client IP that sends more than `limit` requests in five
 * minutes, keyed or not. It is what stops a flood of keyless or made-up-key
 * requests before it invokes the authorizer (which has no result cache, so
 * that revocation is immediate): the stage throttle bounds the rate of such a
 * flood, this bounds what one address can send.
 *
 * A blocked request is answered by WAF itself, not by API Gateway, so the
 * gateway responses do not apply: the block's custom response gives the 429,
 * the spec's envelope and the key's daily quota (`X-RateLimit-Limit`, a
 * literal), as every Public answer does. WAF allows any custom response
 * header but content-type:
 *   https://docs.aws.amazon.com/waf/latest/developerguide/customizing-the-response-for-blocked-requests.html
 */
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { MESSAGES } from '../lambdas/core/errors.js';
import { DAILY_QUOTA, RATE_LIMIT_HEADERS } from '../lambdas/core/rate-limit.js';

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
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: WAF_BLOCK_BODY_KEY,
                responseHeaders: [{ name: RATE_LIMIT_HEADERS.limit, value: String(DAILY_QUOTA) }],
              },
            },
          },
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
