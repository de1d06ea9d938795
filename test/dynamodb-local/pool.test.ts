/**
 * The DynamoDB Local pool of a jest run (test/support/dynamodb-local.ts): its
 * JVMs outlive the stores, and each store still starts empty and alone. Runs
 * in the "dynamodb-local" project only (it needs Java), on a pool of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { ensureTable } from '../../local/dynalite.js';
import { leaseDynamoDbLocal, openPool, type OpenPool } from '../support/dynamodb-local.js';
import { ROOT } from '../support/process.js';

let pool: OpenPool;
beforeAll(async () => {
  pool = await openPool(ROOT, 1);
});
afterAll(async () => pool?.close());

async function tables(endpoint: string): Promise<string[]> {
  const client = createDocumentClient({ endpoint });
  try {
    return (await client.send(new ListTablesCommand({}))).TableNames ?? [];
  } finally {
    client.destroy();
  }
}

describe('a pool of DynamoDB Local JVMs', () => {
  it('lends the same JVM again once a store closes, emptied of the tables the last one made', async () => {
    const first = await leaseDynamoDbLocal(ROOT, pool.url);
    const client = createDocumentClient({ endpoint: first.endpoint });
    await ensureTable(client, 'first-a');
    await ensureTable(client, 'first-b');
    await client.send(new PutCommand({ TableName: 'first-a', Item: { pk: 'p', sk: 's' } }));
    client.destroy();
    expect(await tables(first.endpoint)).toEqual(['first-a', 'first-b']);
    await first.close();

    const second = await leaseDynamoDbLocal(ROOT, pool.url);
    expect(second.endpoint).toBe(first.endpoint);
    expect(await tables(second.endpoint)).toEqual([]);
    // A table of the same name is a new one, without the last store's item.
    const again = createDocumentClient({ endpoint: second.endpoint });
    await ensureTable(again, 'first-a');
    expect((await again.send(new GetCommand({ TableName: 'first-a', Key: { pk: 'p', sk: 's' } }))).Item).toBeUndefined();
    again.destroy();
    await second.close();
  });

  it('gives a store opened while every JVM is lent one of its own, and stops it when that store closes', async () => {
    const held = await leaseDynamoDbLocal(ROOT, pool.url);
    const extra = await leaseDynamoDbLocal(ROOT, pool.url);
    expect(extra.endpoint).not.toBe(held.endpoint);
    const client = createDocumentClient({ endpoint: held.endpoint });
    await ensureTable(client, 'held-table');
    client.destroy();
    expect(await tables(extra.endpoint)).toEqual([]);
    await extra.close();
    await held.close();
    // Both are emptied in the background after their close answers: the count is the pool's once that is done.
    await pool.settled();
    expect(pool.stats().split('\n').filter((line) => line.startsWith('JVM '))).toHaveLength(1);
  });

  it('fails the close of a store whose JVM died under it, naming the JVM; the next store gets a new one', async () => {
    const doomed = await leaseDynamoDbLocal(ROOT, pool.url);
    expect(pool.kill(doomed.endpoint)).toBe(true);
    await expect(doomed.close()).rejects.toThrow(new RegExp(`DynamoDB Local \\(JVM \\d+, ${doomed.endpoint}\\) exited during the run \\(SIGKILL\\)`));
    const next = await leaseDynamoDbLocal(ROOT, pool.url);
    expect(next.endpoint).not.toBe(doomed.endpoint);
    expect(await tables(next.endpoint)).toEqual([]);
    await next.close();
  });
});
