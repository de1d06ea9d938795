/**
 * The stack. For now it holds the table; the Lambdas, both REST APIs, the
 * authorizer, usage plan and gateway responses are built from lambdas/routes.ts
 * by the infrastructure work that follows (see the README's roadmap).
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { EventsTable } from './events-table.js';

export type Stage = 'staging' | 'production';

export interface PublicEventsStackProps extends StackProps {
  readonly stage: Stage;
}

export class PublicEventsStack extends Stack {
  constructor(scope: Construct, id: string, props: PublicEventsStackProps) {
    super(scope, id, props);
    const { table } = new EventsTable(this, 'Events', { retain: props.stage === 'production' });
    new CfnOutput(this, 'TableName', { value: table.tableName });
  }
}
