/**
 * The direct client (test/support/direct-dynalite.ts) runs `initialize`
 * middleware as the SDK's stack does, so the fault and counting middleware of
 * the change-path files (a write failing without landing, a crash after a
 * call, the turns of a race) mean the same on it: here the same middleware on
 * an SDK client and on a direct client, both on one in-process dynalite, sees
 * the same command names and inputs in the same order, its error reaches the
 * caller as it threw it, and what `next` answers is the command's output.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { ensureTable } from '../../local/dynalite.js';
import { directClient } from '../support/direct-dynalite.js';
import { startInProcessDynalite, type InProcessStore } from '../support/in-process-dynalite.js';

let store: InProcessStore;
beforeAll(async () => {
  store = await startInProcessDynalite();
  await ensureTable(directClient(store.call), 'middleware');
});
afterAll(async () => store?.close());

async function observed(client: DynamoDBDocumentClient): Promise<unknown[]> {
  const seen: unknown[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = (args as { input: { Item?: { pk?: string } } }).input;
      seen.push(['outer', context.commandName, input]);
      if (input.Item?.pk === 'refused') throw Object.assign(new Error('Rate exceeded (simulated)'), { name: 'ThrottlingException' });
      const out = await next(args);
      seen.push(['outer got', (out as { output: { Item?: unknown } }).output.Item ?? null]);
      return out;
    },
    { step: 'initialize', name: 'outer' },
  );
  client.middlewareStack.add((next, context) => async (args) => (seen.push(['inner', context.commandName]), next(args)), { step: 'initialize', name: 'inner' });
  const TableName = 'middleware';
  await client.send(new PutCommand({ TableName, Item: { pk: 'a', sk: 'b', n: 1 } }));
  const got = await client.send(new GetCommand({ TableName, Key: { pk: 'a', sk: 'b' }, ConsistentRead: true }));
  seen.push(['answer', got.Item]);
  const refused = await client.send(new PutCommand({ TableName, Item: { pk: 'refused', sk: 'b' } })).catch((e: Error) => e);
  seen.push(['error', (refused as Error).name, (refused as Error).message]);
  return seen;
}

it('runs initialize middleware as the SDK does: the first added outermost, the same names, inputs, outputs and errors', async () => {
  const sdk = await observed(createDocumentClient({ endpoint: store.endpoint, requestHandler: store.requestHandler }));
  const direct = await observed(directClient(store.call));
  expect(direct).toEqual(sdk);
  expect(sdk).toContainEqual(['outer', 'PutItemCommand', { TableName: 'middleware', Item: { pk: 'a', sk: 'b', n: 1 } }]);
  expect(sdk).toContainEqual(['answer', { pk: 'a', sk: 'b', n: 1 }]);
  expect(sdk.at(-1)).toEqual(['error', 'ThrottlingException', 'Rate exceeded (simulated)']);
});

it('refuses middleware at any other step, which it has no counterpart for', () => {
  expect(() => directClient(store.call).middlewareStack.add((next) => next, { step: 'build', name: 'x' })).toThrow(/initialize middleware only/);
});
