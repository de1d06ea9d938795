/**
 * The in-process store hands its item operations (GetItem, PutItem,
 * UpdateItem, DeleteItem, Query, Scan and the two batches) one shared, frozen
 * copy of their table's description instead of a copy each
 * (test/support/in-process-dynalite.ts, `rememberTables`). That is only the
 * store as before if no item operation ever writes into the description it is
 * handed; dynalite is not strict code, so a write into a frozen object would
 * be dropped without a word. Here the shared description is a guard that
 * reports any write, and every scenario of the schedule catalog runs in each
 * of its orders (the change path's every kind of call, the checks' Scans and
 * index Queries), as do the loader and the repository's reads. And a new
 * table is ACTIVE at once (`activeOnCreate`), so no exploration waits a timer
 * for it.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../../lambdas/core/clock.js';
import { INDEXES, createTableInput } from '../../lambdas/store/table/table.js';
import { ensureTable } from '../../local/dynalite.js';
import { directClient } from '../support/direct-dynalite.js';
import { startInProcessDynalite, type InProcessStore } from '../support/in-process-dynalite.js';
import { allScenarios } from '../support/schedule-catalog.js';
import { Explorer, permutations } from '../support/schedules.js';

const writes: string[] = [];
const operations = new Set<string>();
let store: InProcessStore;
let explorer: Explorer;
let client: ReturnType<typeof directClient>;
let close: () => Promise<void>;
beforeAll(async () => {
  store = await startInProcessDynalite({ onTableWrite: (what) => void writes.push(what) });
  const call: InProcessStore['call'] = (operation, body) => (operations.add(operation), store.call(operation, body));
  client = directClient(call);
  explorer = new Explorer(store, client, fixedClock('2026-11-21T12:00:00.000Z'), true, 'direct');
  close = async () => (explorer.close(), client.destroy(), store.close());
});
afterAll(async () => close?.());

it('no item operation writes into its shared description in any of its forms: conditions met and refused, projections, indexes, pages', async () => {
  const TableName = 'guarded-forms';
  await ensureTable(client, TableName);
  const refused = (p: Promise<unknown>) => expect(p).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
  const item = (n: number) => ({ pk: `P#${n % 3}`, sk: `S#${n}`, gsi1pk: 'G1', gsi1sk: `${n}`, gsi5pk: 'PL', gsi5sk: `${n}`, n, seq: [n], doc: { a: n } });
  await client.send(new BatchWriteCommand({ RequestItems: { [TableName]: Array.from({ length: 12 }, (_, n) => ({ PutRequest: { Item: item(n) } })) } }));
  await client.send(new PutCommand({ TableName, Item: item(20), ConditionExpression: 'attribute_not_exists(pk)' }));
  await refused(client.send(new PutCommand({ TableName, Item: item(20), ConditionExpression: 'attribute_not_exists(pk)' })));
  await client.send(new PutCommand({ TableName, Item: item(20), ReturnValues: 'ALL_OLD' }));
  await client.send(new GetCommand({ TableName, Key: { pk: 'P#2', sk: 'S#20' }, ConsistentRead: true, ProjectionExpression: '#n, doc.a', ExpressionAttributeNames: { '#n': 'n' } }));
  await client.send(new UpdateCommand({ TableName, Key: { pk: 'P#2', sk: 'S#20' }, UpdateExpression: 'SET #n = #n + :one, seq = list_append(seq, :l), doc.b = :one REMOVE gsi5pk ADD tally :one', ConditionExpression: 'attribute_exists(pk) AND #n = :n', ExpressionAttributeNames: { '#n': 'n' }, ExpressionAttributeValues: { ':one': 1, ':l': [2], ':n': 20 }, ReturnValues: 'ALL_NEW' }));
  await refused(client.send(new UpdateCommand({ TableName, Key: { pk: 'P#2', sk: 'S#20' }, UpdateExpression: 'SET #n = :n', ConditionExpression: '#n = :n', ExpressionAttributeNames: { '#n': 'n' }, ExpressionAttributeValues: { ':n': 20 } })));
  await client.send(new UpdateCommand({ TableName, Key: { pk: 'P#9', sk: 'S#new' }, UpdateExpression: 'SET gsi1pk = :g, gsi1sk = :s', ExpressionAttributeValues: { ':g': 'G1', ':s': '99' } }));
  await refused(client.send(new DeleteCommand({ TableName, Key: { pk: 'P#0', sk: 'S#0' }, ConditionExpression: 'attribute_not_exists(pk)' })));
  await client.send(new DeleteCommand({ TableName, Key: { pk: 'P#0', sk: 'S#0' }, ReturnValues: 'ALL_OLD' }));
  await client.send(new BatchGetCommand({ RequestItems: { [TableName]: { Keys: [{ pk: 'P#1', sk: 'S#1' }, { pk: 'P#2', sk: 'S#2' }], ConsistentRead: true, ProjectionExpression: 'pk, sk, n' } } }));
  await client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)', FilterExpression: 'n > :z', ExpressionAttributeValues: { ':p': 'P#1', ':s': 'S#', ':z': 0 }, Limit: 2, ScanIndexForward: false, ConsistentRead: true }));
  for (const index of [INDEXES.event, INDEXES.place]) {
    const first = await client.send(new QueryCommand({ TableName, IndexName: index.name, KeyConditionExpression: `${index.partitionKey} = :p`, ExpressionAttributeValues: { ':p': index === INDEXES.event ? 'G1' : 'PL' }, Limit: 3 }));
    await client.send(new QueryCommand({ TableName, IndexName: index.name, KeyConditionExpression: `${index.partitionKey} = :p`, ExpressionAttributeValues: { ':p': index === INDEXES.event ? 'G1' : 'PL' }, ExclusiveStartKey: first.LastEvaluatedKey, Select: 'COUNT' }));
  }
  const page = await client.send(new ScanCommand({ TableName, Limit: 4, FilterExpression: 'attribute_exists(#m)', ExpressionAttributeNames: { '#m': 'doc' } }));
  await client.send(new ScanCommand({ TableName, ExclusiveStartKey: page.LastEvaluatedKey }));
  await client.send(new ScanCommand({ TableName, Segment: 1, TotalSegments: 2 }));
  await client.send(new ScanCommand({ TableName, IndexName: INDEXES.event.name }));
  expect(writes).toEqual([]);
  expect([...operations].sort()).toEqual(expect.arrayContaining(['BatchGetItem', 'BatchWriteItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'Scan', 'UpdateItem']));
});

it('no item operation writes into the table description it shares, over every scenario in every order', async () => {
  let runs = 0;
  for (const s of allScenarios()) {
    for (const order of permutations(s.changes.map((_, i) => i))) {
      await explorer.run(s, { during: order.map((change) => ({ change })), after: [] });
      runs++;
    }
  }
  expect(writes).toEqual([]);
  expect(runs).toBeGreaterThan(40);
}, 120_000);

it('a new table is ACTIVE with its indexes as soon as CreateTable answers, as on DynamoDB Local, and stays so after dynalite\'s own flip', async () => {
  const TableName = 'active-at-once';
  const created = await client.send(new CreateTableCommand(createTableInput(TableName)));
  expect(created.TableDescription?.TableStatus).toBe('ACTIVE');
  const described = async () => (await client.send(new DescribeTableCommand({ TableName }))).Table;
  const statuses = (t: Awaited<ReturnType<typeof described>>) => [t?.TableStatus, ...(t?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexStatus)];
  const first = await described();
  expect(first?.GlobalSecondaryIndexes?.length).toBe(Object.keys(INDEXES).length);
  expect(new Set(statuses(first))).toEqual(new Set(['ACTIVE']));
  // dynalite's timer (at least a millisecond) puts the same description again: nothing else changes.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const later = await described();
  expect(later).toEqual(first);
  await client.send(new PutCommand({ TableName, Item: { pk: 'P', sk: 'S' } }));
  expect((await client.send(new GetCommand({ TableName, Key: { pk: 'P', sk: 'S' }, ConsistentRead: true }))).Item).toEqual({ pk: 'P', sk: 'S' });
});
