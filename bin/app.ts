#!/usr/bin/env node
/**
 * CDK app: `npx cdk synth -c stage=staging|production`. Synthesizes offline,
 * with no AWS account (the stack is environment-agnostic unless CDK_DEFAULT_*
 * are set by `cdk deploy`).
 */
import { App } from 'aws-cdk-lib';
import { PublicEventsStack, type Stage } from '../lib/public-events-stack.js';

const app = new App();
const stage = (app.node.tryGetContext('stage') ?? 'staging') as string;
if (stage !== 'staging' && stage !== 'production') {
  throw new Error(`context "stage" must be staging or production, not ${JSON.stringify(stage)}`);
}
new PublicEventsStack(app, `PublicEvents-${stage}`, {
  stage: stage as Stage,
  env: process.env.CDK_DEFAULT_ACCOUNT ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined,
});
