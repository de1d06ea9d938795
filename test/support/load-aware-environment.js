/**
 * Jest's node environment, with every test's and hook's timeout stretched by
 * the machine's contention when it starts (runnable tasks per core, from the
 * 1-minute load average, never below 1), as the rehearsal stretches a
 * function's Timeout (local/rehearsal/contention.ts). A timeout here detects a
 * hang, it does not measure speed (figures come from `npm run bench`); on a
 * shared 2-core machine at a load of 22 a route walk that takes 10 s alone ran
 * past its 30 s, a red that said nothing about the code. On a quiet machine
 * every timeout is the one written.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import NodeEnvironmentModule from 'jest-environment-node';

// jest-environment-node is CommonJS with its class on `default`.
const NodeEnvironment = NodeEnvironmentModule.default ?? NodeEnvironmentModule.TestEnvironment ?? NodeEnvironmentModule;

export const machineContention = () => Math.max(1, loadavg()[0] / availableParallelism());

/**
 * A report line, on stderr and appended to test-output/handles.txt: jest may
 * no longer print a worker's stderr once it has told the worker to end.
 */
function report(line) {
  process.stderr.write(line);
  mkdirSync('test-output', { recursive: true });
  appendFileSync('test-output/handles.txt', line);
}

/** The last test file this worker ran, named in its end report (on the process: this module may load again). */
const LAST_FILE = Symbol.for('public-events.last-test-file');

/**
 * With PE_REPORT_HANDLES=1, a jest worker also prints what it still holds
 * 300 ms after jest told it to end (jest force-exits it at 500 ms): what a
 * file's own report cannot see (a handle made before its setup or after its
 * teardown, a process reported as exited whose pipes are still open).
 */
function reportAtWorkerEnd() {
  if (!process.send || globalThis[Symbol.for('public-events.report-at-worker-end')]) return;
  globalThis[Symbol.for('public-events.report-at-worker-end')] = true;
  const onMessage = (message) => {
    // jest-worker's CHILD_MESSAGE_END; the listener goes at once, as a 'message' listener holds the IPC channel open.
    if (!Array.isArray(message) || message[0] !== 2) return;
    process.off('message', onMessage);
    // What it holds as it is told to end, and when its loop has drained and it starts to exit. A worker whose loop
    // never drains has the first line only; one that has both and was still force-exited was slow to end after its
    // loop (its memory given back: the cause found at bade9b3), which the timer below cannot see.
    const told = Date.now();
    const { rss, heapUsed } = process.memoryUsage();
    report(`[handles] worker ${process.pid} told to end (its last file ${globalThis[LAST_FILE] ?? 'none'}; ${Math.round(rss / 1e6)} MB resident, ${Math.round(heapUsed / 1e6)} MB of heap used): ${process.getActiveResourcesInfo().join(', ')}\n`);
    process.on('exit', () => report(`[handles] worker ${process.pid} exits ${Date.now() - told} ms after it was told to end\n`));
    setTimeout(() => {
      const held = process._getActiveHandles().map((h) => `${h?.constructor?.name}${h?.pid ? ` pid ${h.pid} ${h.spawnargs?.slice(0, 3).join(' ')}` : ''}${h?.remotePort ? ` ${h.remoteAddress}:${h.remotePort}` : ''}${h?.fd !== undefined ? ` fd ${h.fd}` : ''}`);
      report(`[handles] worker ${process.pid} at its end (its last file ${globalThis[LAST_FILE] ?? 'none'}): ${process.getActiveResourcesInfo().join(', ')} | ${held.join('; ')}\n`);
    }, 300).unref();
  };
  process.on('message', onMessage);
}

export default class LoadAwareEnvironment extends NodeEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  /** Each test's and hook's timeout as written (a hook runs again for every test; a test again on retry). */
  written = new WeakMap();
  /** The contention reader (a test gives its own). */
  contention = machineContention;

  stretch(block, state) {
    if (!this.written.has(block)) this.written.set(block, block.timeout);
    block.timeout = Math.ceil((this.written.get(block) || state.testTimeout) * this.contention());
  }

  /**
   * With PE_REPORT_HANDLES=1, what a test file leaves running when it ends
   * (servers, sockets, child processes, timers) is printed on stderr, by file:
   * how to find what keeps a jest worker from exiting ("A worker process has
   * failed to exit gracefully").
   */
  async setup() {
    await super.setup();
    if (process.env.PE_REPORT_HANDLES === '1') {
      this.handlesBefore = new Set(process._getActiveHandles());
      this.trackTimers();
      reportAtWorkerEnd();
    }
  }

  /**
   * Node's list of handles leaves timers out (they are not libuv handles of
   * their own), so the file's timers are recorded as its code makes them,
   * through this context's setTimeout and setInterval, with where they were
   * made. Timers made by Node itself (a socket's timeout) belong to a socket,
   * which the handle list shows.
   */
  trackTimers() {
    this.timers = new Map();
    for (const name of ['setTimeout', 'setInterval']) {
      const original = this.global[name];
      const timers = this.timers;
      this.global[name] = Object.assign(function (...args) {
        const timer = original(...args);
        timers.set(timer, `${name} ${args[1] ?? 0} ms ${new Error().stack.split('\n').slice(2, 4).map((l) => l.trim()).join(' < ')}`);
        return timer;
      }, original);
    }
  }

  async teardown() {
    if (this.handlesBefore) {
      // Give closes that were sent a moment to finish, as the worker's own exit would (a closed handle is still
      // listed until a later turn of the loop), and leave out processes that have exited and sockets destroyed.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const gone = (h) => h?.exitCode != null || h?.signalCode != null || h?.destroyed === true;
      const left = process
        ._getActiveHandles()
        .filter((h) => !this.handlesBefore.has(h) && !gone(h) && h !== process.stdout && h !== process.stderr && h !== process.stdin);
      const describe = (h) => {
        if (h.made) return `Timer ${h.made}`;
        const name = h?.constructor?.name ?? typeof h;
        if (name === 'Socket') return `Socket ${h.remoteAddress ?? ''}:${h.remotePort ?? ''} -> local ${h.localPort ?? ''}`;
        if (name === 'Server') return `Server ${JSON.stringify(h.address?.())}`;
        if (name === 'ChildProcess') return `ChildProcess pid ${h.pid} ${h.spawnargs?.slice(0, 3).join(' ')}`;
        if (name === 'Timeout') return `Timeout ${h._idleTimeout} ms ${h.hasRef?.() ? 'ref' : 'unref'}`;
        return name;
      };
      // A timer still pending and referenced holds the worker as a socket does (one that has fired or was cleared is destroyed).
      for (const [timer, made] of this.timers) if (!timer._destroyed && timer.hasRef()) left.push({ made });
      if (left.length) report(`[handles] ${this.testPath}: ${left.map(describe).join('; ')}\n`);
      globalThis[LAST_FILE] = this.testPath;
    }
    await super.teardown();
  }

  async handleTestEvent(event, state) {
    if (event.name === 'hook_start') this.stretch(event.hook, state);
    if (event.name === 'test_fn_start') this.stretch(event.test, state);
  }
}
