/**
 * The DynamoDB behaviour the change path relies on, held on both test stores
 * (jest runs this file in the "dynalite" and the "dynamodb-local" projects),
 * and every difference between dynalite and DynamoDB Local met so far, each
 * pinned so that a change in either store, or code starting to rely on a
 * feature one of them lacks, shows up here first. See test/support/store.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TransactWriteItemsCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../../lambdas/store/table/conditions.js';
import { INDEXES } from '../../lambdas/store/table/table.js';
import { ensureTable } from '../../local/dynalite.js';
import { canonical } from '../support/read-model.js';
import { STORE, startLoopbackStore } from '../support/store.js';

let store: Awaited<ReturnType<typeof startLoopbackStore>>;
const TABLE = 'differences';

beforeAll(async () => {
  store = await startLoopbackStore();
  expect(await ensureTable(store.client, TABLE)).toBe('created');
});
afterAll(async () => store?.close());

/** The error a call fails with (the test fails if it succeeds). */
async function failure(call: Promise<unknown>): Promise<{ name?: string } & Record<string, unknown>> {
  try {
    await call;
  } catch (error) {
    return error as { name?: string } & Record<string, unknown>;
  }
  throw new Error('expected the call to fail');
}

describe(`what the change path relies on (${STORE})`, () => {
  it('the real table definition creates the table and its four GSIs, ACTIVE, and a second ensureTable finds it', async () => {
    expect(await ensureTable(store.client, TABLE)).toBe('existed');
  });

  it('a failed condition is a ConditionalCheckFailedException that isConditionFailure recognises, and writes nothing', async () => {
    const key = { pk: 'COND#1', sk: 'X' };
    await store.client.send(new PutCommand({ TableName: TABLE, Item: { ...key, version: 2 } }));
    const error = await failure(
      store.client.send(
        new PutCommand({
          TableName: TABLE,
          Item: { ...key, version: 1 },
          ConditionExpression: 'attribute_not_exists(#pk) OR #version < :v',
          ExpressionAttributeNames: { '#pk': 'pk', '#version': 'version' },
          ExpressionAttributeValues: { ':v': 1 },
        }),
      ),
    );
    expect(error.name).toBe('ConditionalCheckFailedException');
    expect(isConditionFailure(error)).toBe(true);
    expect((await store.client.send(new GetCommand({ TableName: TABLE, Key: key, ConsistentRead: true }))).Item).toEqual({ ...key, version: 2 });
  });

  it("a conditional Put with ReturnValues ALL_OLD returns the item it replaced, and nothing for a new item (the applier's `previous`)", async () => {
    const key = { pk: 'OLD#1', sk: 'X' };
    const put = (version: number) =>
      store.client.send(
        new PutCommand({
          TableName: TABLE,
          Item: { ...key, version, nested: { b: 1, a: [1, 'two'] } },
          ConditionExpression: 'attribute_not_exists(#pk) OR #version < :v',
          ExpressionAttributeNames: { '#pk': 'pk', '#version': 'version' },
          ExpressionAttributeValues: { ':v': version },
          ReturnValues: 'ALL_OLD',
        }),
      );
    expect((await put(1)).Attributes).toBeUndefined();
    expect((await put(2)).Attributes).toEqual({ ...key, version: 1, nested: { b: 1, a: [1, 'two'] } });
  });

  it('ADD on a missing item or attribute starts from zero, and UPDATED_NEW returns the new number (the derivation counter, recount tickets)', async () => {
    const add = () =>
      store.client.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { pk: 'SEQ#1', sk: 'SEQ' },
          UpdateExpression: 'ADD seq :one SET #type = :type',
          ExpressionAttributeNames: { '#type': 'type' },
          ExpressionAttributeValues: { ':one': 1, ':type': 'DERIVATION_SEQ' },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
    expect((await add()).Attributes).toEqual({ seq: 1, type: 'DERIVATION_SEQ' });
    expect((await add()).Attributes).toEqual({ seq: 2, type: 'DERIVATION_SEQ' });
  });

  it('list_append onto a missing list, with ALL_NEW, answers the whole list after this append (a feed append takes its positions from it)', async () => {
    const append = (members: string[]) =>
      store.client.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { pk: 'FEED#diff', sk: 'H' },
          UpdateExpression: 'SET #tail = list_append(if_not_exists(#tail, :empty), :members), #base = if_not_exists(#base, :one)',
          ExpressionAttributeNames: { '#tail': 'tail', '#base': 'base' },
          ExpressionAttributeValues: { ':empty': [], ':members': members, ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      );
    expect((await append(['a'])).Attributes).toMatchObject({ base: 1, tail: ['a'] });
    expect((await append(['b', 'c'])).Attributes).toMatchObject({ base: 1, tail: ['a', 'b', 'c'] });
  });

  it("a REMOVE of several list elements, highest index first, removes those elements on both stores (a feed's trim)", async () => {
    const key = { pk: 'FEED#trim', sk: 'H' };
    await store.client.send(new PutCommand({ TableName: TABLE, Item: { ...key, tail: ['x0', 'x1', 'x2', 'x3'] } }));
    await store.client.send(new UpdateCommand({ TableName: TABLE, Key: key, UpdateExpression: 'REMOVE #t[1], #t[0]', ExpressionAttributeNames: { '#t': 'tail' } }));
    expect((await store.client.send(new GetCommand({ TableName: TABLE, Key: key, ConsistentRead: true }))).Item?.tail).toEqual(['x2', 'x3']);
  });

  it('a GSI query pages with Limit and ExclusiveStartKey in sort-key order, forwards and backwards, and the last page says so', async () => {
    const index = INDEXES.userEvents;
    for (let i = 0; i < 7; i++) {
      await store.client.send(new PutCommand({ TableName: TABLE, Item: { pk: `EVENT#p${i}`, sk: 'EVENT', [index.partitionKey]: 'USER#pager#HOSTED', [index.sortKey]: `2027-01-0${i + 1}#p${i}` } }));
    }
    for (const forward of [true, false]) {
      const seen: string[] = [];
      let start: Record<string, unknown> | undefined;
      let pages = 0;
      do {
        const out = await store.client.send(
          new QueryCommand({
            TableName: TABLE,
            IndexName: index.name,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': index.partitionKey },
            ExpressionAttributeValues: { ':pk': 'USER#pager#HOSTED' },
            Limit: 3,
            ScanIndexForward: forward,
            ExclusiveStartKey: start,
          }),
        );
        seen.push(...(out.Items ?? []).map((item) => String(item.pk)));
        start = out.LastEvaluatedKey;
        if (start) expect(Object.keys(start).sort()).toEqual(['gsi2pk', 'gsi2sk', 'pk', 'sk']);
        pages++;
      } while (start);
      const inOrder = Array.from({ length: 7 }, (_, i) => `EVENT#p${i}`);
      expect(seen).toEqual(forward ? inOrder : inOrder.reverse());
      // 3 + 3 + 1: a short page ends it; neither store returns an empty extra page here.
      expect(pages).toBe(3);
    }
  });

  it('Select COUNT with a FilterExpression counts only the matching items (countLiveEntries)', async () => {
    for (const [i, type] of ['TALLY_ENTRY', 'TALLY_ENTRY', 'TOMBSTONE'].entries()) {
      await store.client.send(new PutCommand({ TableName: TABLE, Item: { pk: 'TALLY#count', sk: `E#${i}`, type } }));
    }
    const out = await store.client.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        FilterExpression: '#type = :entry',
        Select: 'COUNT',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', '#type': 'type' },
        ExpressionAttributeValues: { ':pk': 'TALLY#count', ':from': 'E#', ':to': 'E#~', ':entry': 'TALLY_ENTRY' },
        ConsistentRead: true,
      }),
    );
    expect({ count: out.Count, scanned: out.ScannedCount, items: out.Items }).toEqual({ count: 2, scanned: 3, items: undefined });
  });

  it('a consistent BatchGet answers 100 keys and refuses 101 (the applier asks in chunks of 100)', async () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ pk: `NONE#${i}`, sk: 'X' }));
    const out = await store.client.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys(100), ConsistentRead: true } } }));
    expect(out.Responses?.[TABLE]).toEqual([]);
    expect((await failure(store.client.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys(101), ConsistentRead: true } } })))).name).toBe(
      'ValidationException',
    );
  });

  it('a consistent read of a GSI is refused (only the base table reads consistently; local/resync.ts scans indexes without it)', async () => {
    const error = await failure(
      store.client.send(
        new QueryCommand({
          TableName: TABLE,
          IndexName: INDEXES.event.name,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': INDEXES.event.partitionKey },
          ExpressionAttributeValues: { ':pk': 'EVENT#none' },
          ConsistentRead: true,
        }),
      ),
    );
    expect(error.name).toBe('ValidationException');
  });

  it('a map comes back equal whatever order its attributes were written in; only canonical() makes the JSON equal', async () => {
    await store.client.send(new PutCommand({ TableName: TABLE, Item: { pk: 'ORDER#1', sk: 'X', b: 1, a: { d: 1, c: 2 } } }));
    await store.client.send(new PutCommand({ TableName: TABLE, Item: { pk: 'ORDER#1', sk: 'Y', a: { c: 2, d: 1 }, b: 1 } }));
    const read = async (sk: string) => {
      const item = (await store.client.send(new GetCommand({ TableName: TABLE, Key: { pk: 'ORDER#1', sk }, ConsistentRead: true }))).Item!;
      const { sk: _sk, ...rest } = item;
      return rest;
    };
    const [x, y] = [await read('X'), await read('Y')];
    expect(x).toEqual(y);
    expect(JSON.stringify(canonical(x))).toBe(JSON.stringify(canonical(y)));
  });
});

/**
 * Features only DynamoDB Local has. The change path uses none of them today; a
 * change that starts to would be tested on dynalite against an error, so
 * these tests say which store to run it on.
 */
describe(`where the stores differ (${STORE})`, () => {
  it('TransactWriteItems: DynamoDB Local applies it; dynalite does not know the operation', async () => {
    const call = store.client.send(
      new TransactWriteItemsCommand({
        TransactItems: [{ Put: { TableName: TABLE, Item: { pk: { S: 'TX#1' }, sk: { S: 'X' } } } }, { Put: { TableName: TABLE, Item: { pk: { S: 'TX#2' }, sk: { S: 'X' } } } }],
      }),
    );
    if (STORE === 'dynamodb-local') {
      await call;
      expect((await store.client.send(new GetCommand({ TableName: TABLE, Key: { pk: 'TX#2', sk: 'X' }, ConsistentRead: true }))).Item).toEqual({ pk: 'TX#2', sk: 'X' });
    } else {
      expect((await failure(call)).name).toBe('UnknownOperationException');
    }
  });

  it('UpdateTimeToLive (the deployed table expires tombstones by expires_at): DynamoDB Local accepts it; dynalite does not know it, so ensureTable does not call it', async () => {
    const call = store.client.send(new UpdateTimeToLiveCommand({ TableName: TABLE, TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true } }));
    if (STORE === 'dynamodb-local') {
      expect((await call).TimeToLiveSpecification).toEqual({ AttributeName: 'expires_at', Enabled: true });
    } else {
      expect((await failure(call)).name).toBe('UnknownOperationException');
    }
  });

  it('REMOVE of several list elements, lowest index first: DynamoDB Local reads every index against the list as it was; dynalite removes them one after another (so the feed trims from the highest)', async () => {
    const key = { pk: 'FEED#trim-up', sk: 'H' };
    await store.client.send(new PutCommand({ TableName: TABLE, Item: { ...key, tail: ['x0', 'x1', 'x2', 'x3'] } }));
    await store.client.send(new UpdateCommand({ TableName: TABLE, Key: key, UpdateExpression: 'REMOVE #t[0], #t[1]', ExpressionAttributeNames: { '#t': 'tail' } }));
    const tail = (await store.client.send(new GetCommand({ TableName: TABLE, Key: key, ConsistentRead: true }))).Item?.tail;
    expect(tail).toEqual(STORE === 'dynamodb-local' ? ['x2', 'x3'] : ['x1', 'x3']);
  });

  it('ReturnValuesOnConditionCheckFailure: DynamoDB Local returns the stored item on the error; dynalite returns none', async () => {
    const key = { pk: 'RVCF#1', sk: 'X' };
    await store.client.send(new PutCommand({ TableName: TABLE, Item: { ...key, version: 5 } }));
    const error = await failure(
      store.client.send(
        new PutCommand({
          TableName: TABLE,
          Item: { ...key, version: 1 },
          ConditionExpression: '#version < :v',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':v': 1 },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    expect(isConditionFailure(error)).toBe(true);
    // The document client does not unmarshall the error's Item: it is in attribute-value form.
    expect(error.Item).toEqual(STORE === 'dynamodb-local' ? { pk: { S: 'RVCF#1' }, sk: { S: 'X' }, version: { N: '5' } } : undefined);
  });
});
