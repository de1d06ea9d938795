/**
 * The DynamoDB table, built from the one definition in lambdas/store/table/table.ts
 * (no second list of keys or indexes here).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, StreamViewType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { INDEXES, PK, SK, TTL_ATTRIBUTE, type IndexDefinition } from '../lambdas/store/table/table.js';

export interface EventsTableProps {
  /** Production keeps the table on stack deletion and refuses deletes. */
  readonly retain: boolean;
  /** How many of the keys-only place indexes to have, in INDEXES order (default all; docs/deploy.md). */
  readonly placeIndexes?: number;
  /**
   * What the indexes defined INCLUDE copy: their lists (default), or ALL, as tables created before have them (an
   * index's projection cannot change in place: docs/deploy.md). The reads work with either.
   */
  readonly indexProjection?: 'INCLUDE' | 'ALL';
}

export class EventsTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string, props: EventsTableProps) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: PK, type: AttributeType.STRING },
      sortKey: { name: SK, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      encryption: TableEncryptionV2.awsManagedKey(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.retain,
      // Derived tombstones and the local quota's day counters expire on their own.
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // The webhooks' fan-out reads which feeds moved from here (lib/webhooks.ts): the keys are all it needs.
      dynamoStream: StreamViewType.KEYS_ONLY,
      removalPolicy: props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      globalSecondaryIndexes: withPlaceIndexes(props.placeIndexes ?? 3).map((i) => asDeployed(i, props.indexProjection ?? 'INCLUDE')).map((index) => ({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType[index.projection],
        ...(index.projection === 'INCLUDE' ? { nonKeyAttributes: [...(index.nonKeyAttributes ?? [])] } : {}),
      })),
    });
  }
}

/** An index as this stack deploys it: one defined INCLUDE copies ALL on a table created before (indexProjection). */
function asDeployed(index: IndexDefinition, projection: 'INCLUDE' | 'ALL'): IndexDefinition {
  return index.projection === 'INCLUDE' && projection === 'ALL' ? { ...index, projection: 'ALL', nonKeyAttributes: undefined } : index;
}

/** Every index, with only the first `count` of the keys-only place indexes (an existing table gains one per deploy). */
function withPlaceIndexes(count: number): IndexDefinition[] {
  const keysOnly = Object.values(INDEXES).filter((i) => i.projection === 'KEYS_ONLY');
  return Object.values(INDEXES).filter((i) => i.projection !== 'KEYS_ONLY' || keysOnly.indexOf(i) < count);
}
