/**
 * A real DynamoDB-compatible store for tests: in-process dynalite with the
 * real table definition. Refuses any endpoint that is not loopback, so a test
 * can never write to AWS.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { validateDataset, type Dataset } from '../../lambdas/core/dataset.js';
import { createDocumentClient } from '../../lambdas/store/client.js';
import { DynamoRepository } from '../../lambdas/store/repository.js';
import { ensureTable, startDynalite } from '../../local/dynalite.js';
import { onDynamoCall } from '../../local/instrument.js';
import { writeDataset } from '../../local/loader.js';

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

/** An empty loopback store and a client, for tests that make their own tables. */
export async function startLoopbackStore(): Promise<{ endpoint: string; client: DynamoDBDocumentClient; close(): Promise<void> }> {
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
