/**
 * The changes feeds' cursor key: a random secret the stack creates in Secrets
 * Manager, which the feed functions read (lambdas/http/cursor-keys.ts: at the
 * first request, then every five minutes while they answer) to sign and check
 * cursors (HMAC-SHA256, lambdas/core/feed-cursor.ts). Nobody else may read it:
 * only the functions whose route declares `cursorKey` get its ARN and
 * `secretsmanager:DescribeSecret` and `secretsmanager:GetSecretValue` on it
 * (RouteFunction.bindCursorKey).
 *
 * Rotation is a new value (`aws secretsmanager put-secret-value`, docs/deploy.md):
 * Secrets Manager moves the old one to AWSPREVIOUS, which the functions keep
 * accepting, so cursors signed before the rotation stay valid for their 30 days
 * (rotations at least 31 days apart, docs/deploy.md).
 */
import { CfnOutput, RemovalPolicy } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

export class CursorKey extends Construct {
  readonly secret: Secret;

  constructor(scope: Construct, id: string, props: { retain: boolean }) {
    super(scope, id);
    this.secret = new Secret(this, 'Secret', {
      description: 'HMAC key of the changes feeds cursors (read by the feed functions only)',
      // 64 characters of [A-Za-z0-9]: about 380 bits.
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      // Cursors a consumer holds were signed with it: replacing it with the stack would answer them 400.
      removalPolicy: props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    // What an operator rotates (docs/deploy.md, "Rotating the feeds' cursor key"): the ARN, never the value.
    new CfnOutput(scope, 'CursorKeySecretArn', { value: this.secret.secretArn, description: "The changes feeds' cursor key (Secrets Manager): put a new value to rotate it" });
  }
}
