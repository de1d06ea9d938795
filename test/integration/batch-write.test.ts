/**
 * The loader's write path against dynalite, with throttling injected in front
 * of it: unprocessed items are re-sent until every item is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BatchWriteCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll } from '../../lambdas/store/table/batch-write.js';
import { startTestStore, type TestStore } from '../support/store.js';

let store: TestStore;
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => store?.close());

/**
 * For its first `failingCalls` calls, writes only part of each batch and
 * answers the rest as UnprocessedItems, as a throttled table does.
 */
function throttling(real: DynamoDBDocumentClient, failingCalls: number, keepBack: (n: number) => number) {
  let calls = 0;
  const send = async (command: BatchWriteCommand) => {
    calls++;
    const [table, requests] = Object.entries(command.input.RequestItems!)[0]!;
    if (calls > failingCalls) return real.send(command);
    const held = keepBack(requests.length);
    if (held < requests.length) {
      await real.send(new BatchWriteCommand({ RequestItems: { [table]: requests.slice(0, requests.length - held) } }));
    }
    return { UnprocessedItems: { [table]: requests.slice(requests.length - held) } };
  };
  // Only `send` is used by batchWriteAll.
  return { client: { send } as unknown as DynamoDBDocumentClient, calls: () => calls };
}

const items = Array.from({ length: 60 }, (_, i) => ({ pk: `TEST#${i}`, sk: 'ITEM', n: i }));

describe('batchWriteAll', () => {
  it('re-sends unprocessed items until every one is written, with backoff and jitter through the injected sleep', async () => {
    const flaky = throttling(store.client, 4, (n) => Math.ceil(n / 2));
    const delays: number[] = [];
    const result = await batchWriteAll(flaky.client, store.tableName, items, { sleep: async (ms) => void delays.push(ms), concurrency: 1 });
    expect(result).toEqual({ written: 60, retries: 4 });
    // Each wait drawn between half and all of a ceiling doubling from 50 ms ("equal jitter").
    expect(delays).toHaveLength(4);
    delays.forEach((ms, i) => expect([ms >= 25 * 2 ** i, ms <= 50 * 2 ** i]).toEqual([true, true]));
    // The draw at its ends: half the ceiling, the whole ceiling.
    for (const [random, expected] of [[() => 0, [25, 50, 100, 200]], [() => 1, [50, 100, 200, 400]]] as const) {
      const waits: number[] = [];
      await batchWriteAll(throttling(store.client, 4, (n) => Math.ceil(n / 2)).client, store.tableName, items, { sleep: async (ms) => void waits.push(ms), concurrency: 1, random });
      expect(waits).toEqual(expected);
    }
    for (const item of items) {
      const got = await store.client.send(new GetCommand({ TableName: store.tableName, Key: { pk: item.pk, sk: item.sk } }));
      expect(got.Item).toEqual(item);
    }
  });

  it('writes every item with several batches in flight while throttled', async () => {
    const many = Array.from({ length: 260 }, (_, i) => ({ pk: `MANY#${i}`, sk: 'ITEM', n: i }));
    const flaky = throttling(store.client, 12, (n) => Math.ceil(n / 3));
    // The 12 throttled answers are shared by the 4 workers in whatever order the store's speed gives; one batch can
    // meet all of them (it did on DynamoDB Local, where the other workers wait longer), so it gets one attempt more.
    const result = await batchWriteAll(flaky.client, store.tableName, many, { sleep: async () => {}, concurrency: 4, maxAttempts: 13 });
    expect(result.written).toBe(260);
    expect(result.retries).toBeGreaterThan(0);
    for (const item of many) {
      const got = await store.client.send(new GetCommand({ TableName: store.tableName, Key: { pk: item.pk, sk: item.sk } }));
      expect(got.Item).toEqual(item);
    }
  });

  it('throws instead of losing items when they stay unprocessed', async () => {
    const stuck = throttling(store.client, Infinity, () => 1);
    await expect(batchWriteAll(stuck.client, store.tableName, items.slice(0, 5), { maxAttempts: 3, sleep: async () => {} })).rejects.toThrow(
      /1 item\(s\) still unprocessed after 3 attempts/,
    );
  });
});
