/**
 * dynalite without the network: the same store code, called in-process
 * through the SDK's request-handler seam instead of over a loopback socket.
 * Every DynamoDB call still goes through the SDK's whole middleware stack
 * (serialisation, signing, retries, the tests' own middleware) and through
 * dynalite's whole HTTP handler (validation, the CRC header), so what a test
 * sees is what it would see over HTTP; only the sockets, the HTTP parsing
 * and the event-loop turns between them are gone. The schedule explorations
 * run on it (a schedule makes a few hundred calls: most of their time was
 * the loopback round trips). Their direct route (`call`) skips the HTTP
 * handler too and hands each operation to dynalite's validation and action,
 * as that handler would; `generation` tells a caller whether anything was
 * written since it last looked.
 */
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import dynaliteDb from 'dynalite/db/index.js';
import validations from 'dynalite/validations/index.js';
import '../../local/level-iterators.js';
import { trackAnswers } from '../../local/dynalite.js';
import type { StoreCall } from './direct-dynalite.js';
import { rememberDynaliteParses } from './dynalite-parse-memo.js';

type Handler = (req: unknown, res: unknown) => void;
interface SdkRequest {
  method: string;
  path?: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

export interface InProcessStore {
  /** An endpoint the SDK needs to build requests; nothing listens on it. */
  endpoint: string;
  /** The same store over a loopback socket, for what must reach it over HTTP (a process, a client without the handler). */
  httpEndpoint: string;
  requestHandler: NonNullable<DynamoDBClientConfig['requestHandler']>;
  /** One operation straight to the same handler, as the protocol's JSON (test/support/direct-dynalite.ts). */
  call: StoreCall;
  /**
   * A number that changes whenever the store may have changed: every operation that is not a read, by any
   * route in (the SDK's handler, `call`, the loopback socket), counts when it arrives and again when it is
   * answered; undefined while one is under way. Two equal numbers mean nothing was written in between, so a
   * caller may keep what it read (schedules.ts keeps its last Scan of a table).
   */
  generation(): number | undefined;
  close(): Promise<void>;
}

/** The operations that change nothing: everything else counts as a write (`generation`), the unknown included. */
const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'DescribeTable', 'DescribeTimeToLive', 'ListTables', 'ListTagsOfResource']);

/** dynalite's operations (its `validOperations`), each with its validation and its action, from this module registry. */
const OPERATIONS = ['BatchGetItem', 'BatchWriteItem', 'CreateTable', 'DeleteItem', 'DeleteTable', 'DescribeTable', 'DescribeTimeToLive', 'GetItem', 'ListTables', 'PutItem', 'Query', 'Scan', 'TagResource', 'UntagResource', 'ListTagsOfResource', 'UpdateItem', 'UpdateTable'];
type Operation = { validation: { types: unknown; custom?: unknown }; action: (store: object, data: unknown, cb: (err: unknown, data?: unknown) => void) => void };
let operations: Promise<Map<string, Operation>> | undefined;
const loadOperations = () =>
  (operations ??= Promise.all(
    OPERATIONS.map(async (name) => {
      const file = name[0]!.toLowerCase() + name.slice(1);
      const [validation, action] = await Promise.all([import(`dynalite/validations/${file}.js`), import(`dynalite/actions/${file}.js`)]);
      return [name, { validation: (validation as { default: Operation['validation'] }).default, action: (action as { default: Operation['action'] }).default }] as const;
    }),
  ).then((entries) => new Map(entries)));

type Callback = (err: unknown, value?: unknown) => void;
interface SubLevel {
  get(key: unknown, ...rest: unknown[]): unknown;
  put(key: unknown, ...rest: unknown[]): unknown;
  del(key: unknown, ...rest: unknown[]): unknown;
}

/**
 * A description whose every write is reported to `onWrite` (`onTableWrite`), and then made, so that the
 * operation goes on and the test fails on the report rather than on a hung call.
 */
function guardTable<T>(value: T, onWrite: (what: string) => void): T {
  const wrap = (v: unknown): unknown =>
    typeof v !== 'object' || v === null
      ? v
      : new Proxy(v, {
          get: (t, k) => wrap(Reflect.get(t, k)),
          set: (t, k, x) => (onWrite(`set ${String(k)}`), Reflect.set(t, k, x)),
          deleteProperty: (t, k) => (onWrite(`delete ${String(k)}`), Reflect.deleteProperty(t, k)),
          defineProperty: (t, k, d) => (onWrite(`define ${String(k)}`), Reflect.defineProperty(t, k, d)),
        });
  return wrap(value) as T;
}

/** A copy of a value parsed from JSON (plain objects, arrays, primitives): what parsing the same JSON again makes. */
function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = copyJson((value as Record<string, unknown>)[key]);
  return out as T;
}

/**
 * A body or an answer's top level as JSON carries it: a fresh object, without the keys whose value is undefined.
 * Why no deeper copy: dynalite copies all it keeps of a request (its type check, `checkTypes`, rebuilds every
 * list, map and structure, and deletes from the caller's structures only keys that are null or not in the
 * operation's shape, which lib-dynamodb's marshalled bodies never hold), and its answers are objects it makes
 * for the call (items decoded afresh from the store's encoded values, capacity, keys, descriptions copied by
 * `rememberTables`). Copying both through JSON, as the HTTP would, was a tenth of a key exploration's CPU.
 * schedules-transport.test.ts holds the calls and answers of this route to the SDK's through the handler.
 */
function topLevel(value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = v;
  return out;
}

/** A value parsed from JSON, frozen all the way down. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

/**
 * dynalite's table descriptions, remembered. Every operation reads its table's description from the store
 * (`getTable`: a get from the table sublevel and a JSON parse of some 4 KB, with its indexes), the largest
 * single cost of a small call once the HTTP is gone. A remembered description is forgotten as soon as any put
 * or delete of a description starts, until the next get after it ends: a get answers what the sublevel holds,
 * as before.
 *
 * The item operations (GetItem, PutItem, Query, the batches…: the ones that ask `getTable` to check the
 * table's status) only read the description, so they share one frozen copy. The table operations (the
 * others: they pass `checkStatus` false) change theirs and then put it, so each gets a fresh copy. Copying
 * for every call was a quarter of an exploration's CPU; test/integration/in-process-tables.test.ts
 * holds the item operations to never writing into the description they are handed.
 */
function rememberTables(store: object, onTableWrite: ((what: string) => void) | undefined): void {
  const db = store as { tableDb: SubLevel; getTable: (name: string, checkStatus: unknown, cb?: Callback) => unknown };
  const tables = db.tableDb;
  const { get, put, del } = { get: tables.get.bind(tables), put: tables.put.bind(tables), del: tables.del.bind(tables) };
  const getTable = db.getTable;
  const kept = new Map<string, unknown>();
  let changes = 0;
  let changing = 0;
  // Set while an item operation's getTable makes its (synchronous) get: that get may hand out the shared copy.
  let sharing = false;
  const changed = (original: (key: unknown, ...rest: unknown[]) => unknown) => (key: unknown, ...rest: unknown[]) => {
    kept.clear();
    changes++;
    changing++;
    const cb = rest.at(-1);
    const done = () => (changes++, changing--);
    if (typeof cb !== 'function') {
      const out = original(key, ...rest);
      if (out instanceof Promise) void out.then(done, done);
      else done();
      return out;
    }
    return original(key, ...rest.slice(0, -1), (err: unknown, value?: unknown) => (done(), (cb as Callback)(err, value)));
  };
  tables.put = changed(put);
  tables.del = changed(del);
  db.getTable = (name, checkStatus, cb) => {
    if (typeof checkStatus !== 'function') return getTable(name, checkStatus, cb);
    sharing = true;
    try {
      return getTable(name, checkStatus);
    } finally {
      sharing = false;
    }
  };
  tables.get = (key: unknown, ...rest: unknown[]) => {
    const cb = rest.at(-1);
    if (typeof key !== 'string' || rest.length !== 1 || typeof cb !== 'function') return get(key, ...rest);
    if (kept.has(key)) {
      const table = sharing ? kept.get(key) : copyJson(kept.get(key));
      return void process.nextTick(() => (cb as Callback)(null, table));
    }
    const before = changes;
    return get(key, (err: unknown, value?: unknown) => {
      if (!err && value !== null && typeof value === 'object' && changes === before && !changing) kept.set(key, onTableWrite ? guardTable(copyJson(value), onTableWrite) : deepFreeze(copyJson(value)));
      (cb as Callback)(err, value);
    });
  };
}

/** What an error dynalite answers with carries (a validation's or an action's): its status and the protocol's body. */
interface StoreError {
  statusCode?: number;
  body?: unknown;
}

interface TableDescription {
  TableStatus?: string;
  CreationDateTime?: number;
  GlobalSecondaryIndexes?: Array<{ IndexStatus?: string }>;
  BillingModeSummary?: { LastUpdateToPayPerRequestDateTime?: number };
}

/**
 * A new table is ACTIVE, with its indexes, as soon as CreateTable has put it, as on DynamoDB Local. dynalite
 * with no creation delay still flips it on a timer (at least a millisecond in Node), and the explorations
 * create a table for every schedule and wait for it: some hundreds of thousands of idle milliseconds in a
 * deep run. The flip is the one dynalite's timer makes (createTable.js), made on the description before it is
 * put, so CreateTable's answer says ACTIVE too; the timer then puts the same description again.
 */
function activeOnCreate(store: object): void {
  const tables = (store as { tableDb: SubLevel }).tableDb;
  const put = tables.put.bind(tables);
  tables.put = (key: unknown, value: unknown, ...rest: unknown[]) => {
    const table = value as TableDescription | null;
    if (typeof key === 'string' && table !== null && typeof table === 'object' && table.TableStatus === 'CREATING') {
      table.TableStatus = 'ACTIVE';
      for (const index of table.GlobalSecondaryIndexes ?? []) index.IndexStatus = 'ACTIVE';
      if (table.BillingModeSummary) table.BillingModeSummary.LastUpdateToPayPerRequestDateTime = table.CreationDateTime;
    }
    return put(key, value, ...rest);
  };
}

/**
 * `onTableWrite`: the item operations' shared table description reports any write into it, where a frozen one
 * would ignore the write (dynalite is not strict code); test/integration/in-process-tables.test.ts
 * runs with it.
 */
export async function startInProcessDynalite(opts: { onTableWrite?: (what: string) => void } = {}): Promise<InProcessStore> {
  rememberDynaliteParses();
  const actions = await loadOperations();
  // The store dynalite makes for this server, so that `call` can hand it operations without going through HTTP.
  const create = dynaliteDb.create;
  let store: object | undefined;
  dynaliteDb.create = (options: object) => (store = create(options));
  let server: ReturnType<typeof dynalite>;
  try {
    server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  } finally {
    dynaliteDb.create = create;
  }
  if (!store) throw new Error('dynalite made no store');
  const db = store;
  activeOnCreate(db);
  rememberTables(db, opts.onTableWrite);
  // Listening (on a loopback port) so that close() runs dynalite's whole shutdown: on a server that never listened it
  // stops at "not running" and leaves the store's handles open. The port also serves the same store over HTTP.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const dynaliteHandle = server.listeners('request')[0] as Handler;
  let generation = 0;
  let writing = 0;
  // Every request, whatever route it came by, goes through this one handler (the socket's listener is replaced too).
  const handle: Handler = (req, res) => {
    const operation = String((req as { headers: Record<string, string | undefined> }).headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    if (READS.has(operation)) return dynaliteHandle(req, res);
    generation++;
    writing++;
    const answered = res as { end: (...args: unknown[]) => unknown };
    const end = answered.end.bind(answered);
    answered.end = (...args: unknown[]) => {
      generation++;
      writing--;
      return end(...args);
    };
    return dynaliteHandle(req, res);
  };
  server.removeAllListeners('request');
  server.on('request', handle);
  const answers = trackAnswers(server);
  const requestHandler = {
    handle: (request: SdkRequest) =>
      answers.track(new Promise<{ response: { statusCode: number; headers: Record<string, string>; body: Uint8Array } }>((resolve, reject) => {
        const req = Object.assign(new EventEmitter(), {
          method: request.method,
          url: request.path ?? '/',
          headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v])),
        });
        const headers: Record<string, string> = {};
        const res = {
          statusCode: 200,
          contentType: undefined as string | undefined,
          setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = String(value)),
          end: (body?: string | Buffer) => resolve({ response: { statusCode: res.statusCode, headers, body: body === undefined ? new Uint8Array() : Buffer.from(body) } }),
        };
        try {
          handle(req, res);
          // A Uint8Array body's bytes as they are (Buffer.from(object) would go through its valueOf, a string).
          const body = request.body === undefined || typeof request.body === 'string' ? Buffer.from(request.body ?? '') : Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength);
          if (body.length) req.emit('data', body);
          req.emit('end');
        } catch (error) {
          reject(error as Error);
        }
      })),
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => undefined,
  };
  /**
   * What dynalite's HTTP handler does with a request, without the HTTP: the body (its top level copied,
   * `topLevel`), its type checks and validations, the action on the store, and the answer or the error's body
   * (its top level likewise). Left out: the text the HTTP carries them as, the headers' checks (the
   * signature's presence, the target, the content type), the request id, the CRC header and the emitter
   * and buffers that carried them (a few tenths of a millisecond a call, over millions of calls).
   * schedules-transport.test.ts holds this route to the SDK's through the handler: the same calls, the same answers.
   */
  const call: StoreCall = (operation, body) => {
    const known = actions.get(operation);
    if (!known) return Promise.reject(new Error(`dynalite has no operation ${operation}`));
    const write = !READS.has(operation);
    if (write) (generation++, writing++);
    const answered = (status: number, json: unknown) => {
      if (write) (generation++, writing--);
      return { status, json: topLevel(json) };
    };
    return answers.track(
      new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
        const failed = (error: unknown) => {
          const e = error as StoreError;
          if (e?.statusCode) return resolve(answered(e.statusCode, e.body));
          if (write) writing--;
          reject(error as Error);
        };
        try {
          let data: unknown = topLevel(body);
          data = validations.checkTypes(data, known.validation.types);
          validations.checkValidations(data, known.validation.types, known.validation.custom, db);
          known.action(db, data, (error, out) => (error ? failed(error) : resolve(answered(200, out))));
        } catch (error) {
          failed(error);
        }
      }),
    );
  };
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: 'http://in-process.invalid',
    httpEndpoint: `http://127.0.0.1:${port}`,
    requestHandler: requestHandler as unknown as InProcessStore['requestHandler'],
    call,
    generation: () => (writing ? undefined : generation),
    close: () => answers.closeWhenAnswered(),
  };
}
