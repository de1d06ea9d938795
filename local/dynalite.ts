/**
 * The embedded DynamoDB-compatible store: dynalite, in-process, in memory, on a
 * loopback port. No Java, no Docker. Used by `npm start` and by the tests.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import './level-iterators.js';
import { createTableInput } from '../lambdas/store/table/table.js';

/** The table name the local server and `data:load --endpoint` use by default. */
export const LOCAL_TABLE = 'public-events-local';

export interface EmbeddedStore {
  endpoint: string;
  close(): Promise<void>;
}

/** An item key a write touched: what DynamoDB Streams would carry with KEYS_ONLY (`removed`: by a delete). */
export interface WrittenKey {
  pk: string;
  sk: string;
  removed?: true;
}

/**
 * `onWrite`: the keys of every write the store answered 200, after it
 * answered, as a table's stream tells its readers (dynalite has no
 * streams): the local stand-in of the webhooks' event source
 * (local/webhooks.ts), whoever wrote (this process, `data:apply`, a resync).
 */
export async function startDynalite(port = 0, onWrite?: (keys: WrittenKey[]) => void): Promise<EmbeddedStore> {
  // Tables are ACTIVE at once: nothing here should wait for time to pass.
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  if (onWrite) tapWrites(server, onWrite);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  const answers = trackAnswers(server);
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    close: () => answers.closeWhenAnswered(),
  };
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

type AttributeKey = { pk?: { S?: string }; sk?: { S?: string } };
const keyOf = (k: AttributeKey | undefined): WrittenKey | undefined => (k?.pk?.S !== undefined && k.sk?.S !== undefined ? { pk: k.pk.S, sk: k.sk.S } : undefined);

/** The written keys of a write call's body (its Key, its Item, a batch's requests). */
export function writtenKeys(operation: string, body: unknown): WrittenKey[] {
  const b = body as { Key?: AttributeKey; Item?: AttributeKey; RequestItems?: Record<string, { PutRequest?: { Item?: AttributeKey }; DeleteRequest?: { Key?: AttributeKey } }[]> };
  const removed = (k: WrittenKey | undefined, gone: boolean) => (k && gone ? { ...k, removed: true as const } : k);
  if (operation === 'BatchWriteItem') return Object.values(b.RequestItems ?? {}).flatMap((reqs) => reqs.map((r) => removed(keyOf(r.PutRequest?.Item ?? r.DeleteRequest?.Key), !r.PutRequest)).filter((k): k is WrittenKey => !!k));
  const one = removed(keyOf(b.Key ?? b.Item), operation === 'DeleteItem');
  return one ? [one] : [];
}

function tapWrites(server: Server, onWrite: (keys: WrittenKey[]) => void): void {
  server.on('request', (req, res) => {
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    if (!WRITES.has(operation)) return;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    res.on('finish', () => {
      if (res.statusCode !== 200) return;
      try {
        const keys = writtenKeys(operation, JSON.parse(Buffer.concat(chunks).toString('utf8')));
        if (keys.length) onWrite(keys);
      } catch {
        // Not a body this tap can read: no write of a key it knows.
      }
    });
  });
}

/** How long close() waits for the calls it was sent before cutting them (a client still sending would hold it for ever). */
const DRAIN_MS = 10_000;

/**
 * The calls a dynalite server has not answered yet, and a close that waits for
 * them. dynalite queues a write behind its item lock; closed under such a
 * write, its database refuses it and dynalite throws from a timer ("Database
 * is closed"), which ends the process (a jest worker, `npm start`). A caller
 * that goes through the server's handler without a socket counts its calls
 * with `track`.
 */
export function trackAnswers(server: Server): { track<T>(call: Promise<T>): Promise<T>; closeWhenAnswered(): Promise<void> } {
  let pending = 0;
  let drained: (() => void) | undefined;
  const settle = () => {
    pending -= 1;
    if (pending === 0) drained?.();
  };
  server.on('request', (_req, res) => {
    pending += 1;
    // Answered when dynalite ends the answer, whether or not its client is still there to read it (a
    // client gone mid-call, such as a killed Lambda environment, leaves its write queued all the same).
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    let ended = false;
    res.end = ((...args: unknown[]) => {
      if (!ended) (ended = true), settle();
      return end(...args);
    }) as typeof res.end;
  });
  return {
    track: (call) => {
      pending += 1;
      return call.finally(settle);
    },
    closeWhenAnswered: async () => {
      if (pending > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          drained = resolve;
          timer = setTimeout(resolve, DRAIN_MS);
        });
        clearTimeout(timer);
      }
      await new Promise<void>((resolve, reject) => {
        // SDK clients keep sockets alive; without this close() waits for them.
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      });
    },
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
