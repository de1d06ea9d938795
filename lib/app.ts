/**
 * Composes the CDK app: one stack for the stage in context, with cdk-nag's
 * AwsSolutions checks. bin/app.ts runs it; the infra tests synthesize the same.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { EmbedWafStack } from './embed-waf-stack.js';
import { acknowledgeNagFindings } from './nag.js';
import { PublicEventsStack } from './public-events-stack.js';
import { STAGES, stackConfigFromContext } from './stack-config.js';

export function buildApp(app: App): PublicEventsStack {
  const stage = String(app.node.tryGetContext('stage') ?? 'staging');
  if (!(STAGES as readonly string[]).includes(stage)) throw new Error(`context "stage" must be one of ${STAGES.join(', ')}, not "${stage}"`);
  const config = stackConfigFromContext((key) => app.node.tryGetContext(key), stage);
  const stack = new PublicEventsStack(app, `PublicEvents-${stage}`, {
    config,
    description: `Public Events API (${stage})`,
    env: process.env.CDK_DEFAULT_ACCOUNT ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined,
  });
  if (config.embedWaf) {
    // CloudFront's web ACLs live in us-east-1 only; deploy this first and pass its output as the EmbedWebAclArn parameter.
    const waf = new EmbedWafStack(app, `PublicEventsEmbedWaf-${stage}`, {
      limit: config.embedWafRateLimit,
      description: `Rate limit per client IP for the Embed API's CloudFront distribution (${stage})`,
      env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: 'us-east-1' },
    });
    // Its ARN is the service stack's input (EmbedWebAclArn), so `cdk deploy --all` deploys it first.
    stack.addStackDependency(waf);
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  acknowledgeNagFindings(stack);
  return stack;
}
