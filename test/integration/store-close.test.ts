/**
 * Closing the embedded store while calls are still queued in it. dynalite
 * queues writes to one item behind a lock; closed under them, its database
 * refused the queued write and dynalite threw from a timer ("Database is
 * closed"), which ended the process: a jest worker at the end of a file whose
 * Lambda environments were killed mid-call (the rehearsal), `npm start` on a
 * SIGTERM under load. close() now waits for every call it was sent to be
 * answered (local/dynalite.ts, trackAnswers).
 */
import { describe, expect, it } from '@jest/globals';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { ensureTable, startDynalite } from '../../local/dynalite.js';
import { startInProcessDynalite } from '../support/in-process-dynalite.js';
import { directClient } from '../support/direct-dynalite.js';

const TABLE = 'close-test';
const WRITES = 40;
const add = (i: number) => new UpdateCommand({ TableName: TABLE, Key: { pk: 'CLOSE', sk: 'ITEM' }, UpdateExpression: 'ADD n :one SET latest = :i', ExpressionAttributeValues: { ':one': 1, ':i': i } });

describe('closing the embedded store under queued writes', () => {
  it('over HTTP: close() waits for the queued writes, the process keeps running, every write is answered or cut', async () => {
    const store = await startDynalite();
    const client = createDocumentClient({ endpoint: store.endpoint, maxAttempts: 1 });
    await ensureTable(client, TABLE);
    const writes = Array.from({ length: WRITES }, (_, i) => client.send(add(i)).then(() => 'answered', () => 'cut'));
    // Once the first has been answered, the others are queued behind the item's lock or on their way.
    await Promise.race(writes);
    await store.close();
    const outcomes = await Promise.all(writes);
    expect(outcomes.filter((o) => o === 'answered').length).toBeGreaterThan(0);
    // Had the database closed under a queued write, dynalite's throw would end this process before this line.
    await new Promise((resolve) => setImmediate(resolve));
    client.destroy();
  });

  it('in-process: close() waits for every call sent to the handler, each answered', async () => {
    const store = await startInProcessDynalite();
    const client = directClient(store.call);
    await ensureTable(client, TABLE);
    const writes = Array.from({ length: WRITES }, (_, i) => client.send(add(i)).then(() => 'answered', (e: Error) => e.name));
    // Once the first has been answered, every other one has reached the handler and waits behind the item's lock.
    await Promise.race(writes);
    await store.close();
    expect(await Promise.all(writes)).toEqual(Array(WRITES).fill('answered'));
    await new Promise((resolve) => setImmediate(resolve));
  });
});
