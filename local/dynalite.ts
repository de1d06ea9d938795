/**
 * The embedded DynamoDB-compatible store: dynalite, in-process, in memory, on a
 * loopback port. No Java, no Docker. Used by `npm start` and by the tests.
 */
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import './level-iterators.js';
import { createTableInput } from '../lambdas/store/table.js';

/** The table name the local server and `data:load --endpoint` use by default. */
export const LOCAL_TABLE = 'public-events-local';

export interface EmbeddedStore {
  endpoint: string;
  close(): Promise<void>;
}

export async function startDynalite(port = 0): Promise<EmbeddedStore> {
  // Tables are ACTIVE at once: nothing here should wait for time to pass.
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // SDK clients keep sockets alive; without this close() waits for them.
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** Creates the table from the shared definition unless it exists; waits until ACTIVE. */
export async function ensureTable(client: DynamoDBDocumentClient, tableName: string): Promise<'created' | 'existed'> {
  let result: 'created' | 'existed' = 'existed';
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    await client.send(new CreateTableCommand(createTableInput(tableName)));
    result = 'created';
  }
  // With createTableMs: 0 this is ACTIVE on the first or second look.
  for (let attempt = 0; attempt < 50; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexesActive) return result;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
