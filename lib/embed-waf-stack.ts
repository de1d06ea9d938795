/**
 * The web ACL of the Embed API's CloudFront distribution: one rate-based rule
 * blocking a client IP that sends more than `limit` requests in five minutes,
 * on by default in production as the Public API's is (lib/public-waf.ts). At
 * the edge it sees every viewer request, cache hits included, by the
 * viewer's own address, which no rule behind CloudFront can (API Gateway sees
 * CloudFront's). A web ACL for CloudFront must be created in us-east-1,
 * whatever region the service runs in, so it is its own stack, pinned there;
 * its ARN output goes to the service stack as its EmbedWebAclArn parameter or
 * `-c embedWebAclArn=…` (no cross-region reference: deploying one never
 * blocks on the other). AWS, "Using AWS WAF with CloudFront":
 * https://docs.aws.amazon.com/waf/latest/developerguide/cloudfront-features.html
 * and rate-based rules:
 * https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based.html
 *
 * A blocked request is answered by WAF itself, at the edge: its custom
 * response is the Embed API's own 429 envelope with CORS (so the widget can
 * read it and says "Too many requests"), and `no-store`. WAF allows any
 * custom response header but content-type:
 * https://docs.aws.amazon.com/waf/latest/developerguide/customizing-the-response-for-blocked-requests.html
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import { MESSAGES } from '../lambdas/core/errors.js';

export interface EmbedWafStackProps extends StackProps {
  /** Requests per client IP per 5-minute window before it is blocked. */
  readonly limit: number;
}

export const EMBED_WAF_BLOCK_BODY_KEY = 'TooManyRequests';

export class EmbedWafStack extends Stack {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: EmbedWafStackProps) {
    super(scope, id, props);
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
    this.webAcl = new CfnWebACL(this, 'EmbedWebAcl', {
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('EmbedWebAcl'),
      customResponseBodies: {
        [EMBED_WAF_BLOCK_BODY_KEY]: { contentType: 'APPLICATION_JSON', content: JSON.stringify({ success: false, message: MESSAGES.tooManyRequests }) },
      },
      rules: [
        {
          name: 'RatePerClientIp',
          priority: 0,
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: EMBED_WAF_BLOCK_BODY_KEY,
                responseHeaders: [
                  { name: 'access-control-allow-origin', value: '*' },
                  { name: 'cache-control', value: 'no-store' },
                ],
              },
            },
          },
          statement: { rateBasedStatement: { limit: props.limit, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          visibilityConfig: visibility('EmbedRatePerClientIp'),
        },
      ],
    });
    new CfnOutput(this, 'EmbedWebAclArn', { value: this.webAcl.attrArn });
  }
}
