/**
 * One Lambda function for one handler file of lambdas/handlers/: Node 24 on
 * arm64, bundled locally by esbuild (no Docker) as minified ESM with source
 * maps, the AWS SDK left to the runtime, its own log group, its own role with
 * nothing attached but what `bind*` grants.
 *
 * Powertools is bundled (tree-shaken by esbuild), not taken from AWS's
 * Powertools layer: that layer's ARN is published per region as a public SSM
 * parameter, which made every deploy depend on a lookup CloudFormation does
 * at deploy time and that can be missing (commercial regions only, new
 * versions paused in some). The bundles grow by what the bench measures
 * (docs/performance.md); the code Lambda runs is exactly the version
 * package-lock.json holds, the one the tests run.
 *
 * Sizing: 512 MB. Lambda's CPU share grows with memory; the handlers are
 * DynamoDB-bound (a few ms of CPU per request) but cold-start init (loading the
 * SDK, zod, middy) is CPU-bound and about halves from 256 to 512 MB, which
 * matters for p99 on a low-traffic API. Cost per million requests is in
 * docs/performance.md. Timeout: 6 s, far above the ~10-50 ms a request takes and below API
 * Gateway's 29 s, so a stuck call fails fast as a 5xx instead of holding a slot.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Architecture, LoggingFormat, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { AUTHORIZER_TABLE_READS, type TableRead } from '../lambdas/routes.js';
import { INDEXES } from '../lambdas/store/table/table.js';

const ROOT = new URL('..', import.meta.url).pathname;

/**
 * Left out of every bundle: the Lambda runtime provides the AWS SDK (it
 * resolves from ESM on Node 18+ runtimes). Everything else, Powertools
 * included, is in the bundle. scripts/bench.ts and
 * test/infra/bundling.test.ts bundle with the same list.
 */
export const BUNDLE_EXTERNALS = ['@aws-sdk/*'];
/** What a feed function may do with the cursor key's secret (bindCursorKey): read which version holds which stage, and the values. */
export const CURSOR_KEY_READS = ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'] as const;
/** Some CommonJS dependencies call require(); give the ESM bundle one. */
export const ESM_REQUIRE_BANNER = "import{createRequire as __cr}from'module';const require=__cr(import.meta.url);";

/**
 * The base table's partitions the Public and Embed routes read: events (and
 * their guest shards, `EVENT#{id}#G{n}`), users, the lists' tallies, the
 * changes feeds (lambdas/store/table/table.ts `keys`, lambdas/store/table/tally.ts,
 * lambdas/store/feeds/feed.ts). Key management's
 * (`USERKEYS#`, `APIKEY#`, `KEYREQ#`, `KEYID#`) and the local quota's
 * (`QUOTA#`) are not: only the authorizer and the key manager read those.
 */
export const READ_ROUTE_PARTITIONS = ['EVENT#*', 'USER#*', 'TALLY#*', 'FEED#*'] as const;

/**
 * The ingest's partitions: event data only. A user's deletion closes their
 * keys through the key-management function (lambdas/ingest/key-closer.ts), so
 * no key item is the ingest's to read or write.
 */
export const INGEST_PARTITIONS = READ_ROUTE_PARTITIONS;

export interface RouteFunctionProps {
  /** File name in lambdas/handlers/ without .ts, or a path from the project root (`lambdas/ingest/handler`). */
  readonly handlerFile: string;
  /** Seconds; the HTTP handlers keep the default. */
  readonly timeoutSeconds?: number;
  readonly description: string;
  readonly environment: Record<string, string>;
  readonly logRetention: RetentionDays;
  readonly retainLogs: boolean;
}

export class RouteFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: RouteFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.retainLogs ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    // An own role with an inline policy, instead of the AWSLambdaBasicExecutionRole
    // managed policy: it may write only to this function's log group.
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: `${id}: logs + table reads` });
    this.role.addToPolicy(
      new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
    );

    this.fn = new NodejsFunction(this, 'Function', {
      entry: props.handlerFile.includes('/') ? `${ROOT}${props.handlerFile}.ts` : `${ROOT}lambdas/handlers/${props.handlerFile}.ts`,
      handler: 'handler',
      projectRoot: ROOT,
      depsLockFilePath: `${ROOT}package-lock.json`,
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(props.timeoutSeconds ?? 6),
      role: this.role,
      logGroup,
      // Powertools writes JSON lines itself and owns the level (POWERTOOLS_LOG_LEVEL)
      // and debug sampling. Lambda's JSON format would switch on its own level
      // filter (AWS_LAMBDA_LOG_LEVEL, INFO unless set), which Powertools obeys
      // over its own setting: per-stage levels and sampled DEBUG lines would be lost.
      loggingFormat: LoggingFormat.TEXT,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        mainFields: ['module', 'main'],
        externalModules: BUNDLE_EXTERNALS,
        banner: ESM_REQUIRE_BANNER,
      },
    });
  }

  /**
   * GET handlers: the read actions the route table declares for the handler
   * (`tableReads`, lambdas/routes.ts), nothing else: on the base table only
   * of event data's partitions (READ_ROUTE_PARTITIONS, dynamodb:LeadingKeys),
   * so no read route can read a key record; Query on the indexes by name
   * (no key management item has an index key: the indexes hold none). A
   * call outside them is denied in AWS and in the rehearsal.
   */
  bindTableReads(table: ITableV2, actions: readonly TableRead[]): void {
    if (actions.length === 0) throw new Error(`${this.node.id}: bindTableReads with no action; leave the table unbound instead`);
    this.fn.addEnvironment('TABLE_NAME', table.tableName);
    this.role.addToPolicy(
      new PolicyStatement({
        actions: [...actions],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...READ_ROUTE_PARTITIONS] } },
      }),
    );
    if (actions.includes('dynamodb:Query')) {
      this.role.addToPolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources: Object.values(INDEXES).map((i) => `${table.tableArn}/index/${i.name}`) }));
    }
  }

  /**
   * The ingest function, the only one that writes event data: the applier's
   * reads and writes on the base table (no index; no DeleteItem of event
   * data: removals are tombstones written with Put), and DeleteItem of the
   * changes feeds' items only (a member leaving a scope's list,
   * lambdas/store/feeds/feed.ts): keys whose partition starts with FEED#. No key
   * management partition (INGEST_PARTITIONS): a user's deletion closes their
   * keys by invoking the key-management function (lib/ingest.ts).
   */
  bindTableWrites(table: ITableV2): void {
    this.fn.addEnvironment('TABLE_NAME', table.tableName);
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...INGEST_PARTITIONS] } },
      }),
    );
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['dynamodb:DeleteItem'],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['FEED#*'] } },
      }),
    );
  }

  /**
   * The changes feeds' cursor key: its ARN, and on that secret alone DescribeSecret (which version holds which
   * stage, in one answer: lambdas/http/cursor-keys.ts) and GetSecretValue (lib/cursor-key.ts).
   */
  bindCursorKey(secret: ISecret): void {
    this.fn.addEnvironment('CURSOR_SECRET_ARN', secret.secretArn);
    this.role.addToPolicy(new PolicyStatement({ actions: [...CURSOR_KEY_READS], resources: [secret.secretArn] }));
  }

  /** The authorizer: GetItem of API key items only (partition keys APIKEY#…). */
  bindApiKeyReads(table: ITableV2): void {
    this.fn.addEnvironment('TABLE_NAME', table.tableName);
    this.role.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: [...AUTHORIZER_TABLE_READS],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APIKEY#*'] } },
      }),
    );
  }
}
