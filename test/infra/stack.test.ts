/**
 * The CDK stack, checked with aws-cdk-lib/assertions. Expectations come from
 * the table module, so the table can never drift from what the store queries.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { PublicEventsStack, type Stage } from '../../lib/public-events-stack.js';
import { createTableInput } from '../../lambdas/store/table.js';
import { ROOT } from '../support/process.js';

const template = (stage: Stage) => Template.fromStack(new PublicEventsStack(new App(), `Test-${stage}`, { stage }));

describe('table', () => {
  const expected = createTableInput('unused');

  it('has exactly the keys and GSIs of lambdas/store/table.ts', () => {
    template('staging').hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: expected.KeySchema,
      AttributeDefinitions: Match.arrayEquals(expected.AttributeDefinitions!),
      GlobalSecondaryIndexes: expected.GlobalSecondaryIndexes!.map((gsi) => ({
        IndexName: gsi.IndexName,
        KeySchema: gsi.KeySchema,
        Projection: { ProjectionType: 'ALL' },
      })),
      BillingMode: 'PAY_PER_REQUEST',
    });
  });

  it('is encrypted with point-in-time recovery on every stage', () => {
    for (const stage of ['staging', 'production'] as const) {
      template(stage).hasResourceProperties('AWS::DynamoDB::GlobalTable', {
        SSESpecification: { SSEEnabled: true },
        Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
      });
    }
  });

  it('is retained and deletion-protected in production only', () => {
    template('production').hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ Replicas: [Match.objectLike({ DeletionProtectionEnabled: true })] }),
    });
    template('staging').hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Delete' });
  });
});

describe('cdk synth', () => {
  it('synthesizes offline with no AWS credentials', async () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, CDK_DISABLE_CLI_TELEMETRY: 'true' };
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['node_modules/aws-cdk/bin/cdk', 'synth', '-c', 'stage=production', '--output', 'cdk.out/test-synth'],
      { cwd: ROOT, env, timeout: 60_000 },
    );
    expect(stdout).toContain('AWS::DynamoDB::GlobalTable');
  });
});
