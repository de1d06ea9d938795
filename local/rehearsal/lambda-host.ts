/**
 * Runs one function of the template as Lambda would: its bundled asset from
 * the cloud assembly in a Node process of its own (runner.mjs), the
 * template's handler string and environment, the SDK from node_modules (left
 * external by the bundle, as the runtime provides it), credentials naming the
 * function so the endpoint knows the caller. One invocation per process at a
 * time; a busy function gets another process (concurrency), an idle one is
 * reused (a warm start).
 *
 * Limits as Lambda enforces them: the template's Timeout (the process is
 * killed: "Task timed out"; counted as contention.ts says, so that a busy
 * machine does not time out a function that did nothing wrong), its MemorySize (V8's heap is capped at it, an
 * overrun ends the process: Runtime.ExitError), and the 6 MB synchronous
 * response payload (Lambda's quota; larger is a function error).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { machineContention, watchLimit } from './contention.js';

/** Lambda's synchronous invocation response limit, 6 MB (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). */
export const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;

const RUNNER = new URL('./runner.mjs', import.meta.url).pathname;
const CLOCK = new URL('./frozen-clock.mjs', import.meta.url).pathname;

export interface FunctionSpec {
  readonly logicalId: string;
  readonly assetDir: string;
  readonly handler: string;
  readonly runtime: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  readonly environment: Record<string, string>;
}

export type Invocation = { ok: true; payload: string } | { ok: false; errorType: string; errorMessage: string };

interface Worker {
  child: ChildProcess;
  ready: Promise<void>;
  busy: boolean;
  /** Killed or exited: never reused. */
  dead: boolean;
  /** Its last lines on stderr, for the error of a runtime that exits. */
  stderrTail: string[];
}

/**
 * Execution environments per function at most: more invocations at once wait
 * for one (on a 2-core machine, dozens of Node processes starting at once
 * would make the timeouts measure the machine, not the function).
 */
const MAX_ENVIRONMENTS = 2;
/** Lambda's init phase limit (outside the function's timeout). */
const INIT_TIMEOUT_MS = 10_000;

export class LambdaHost {
  private readonly idle: Worker[] = [];
  private readonly waiting: ((w: Worker) => void)[] = [];
  private readonly all = new Set<Worker>();

  constructor(
    readonly spec: FunctionSpec,
    private readonly awsEnv: Record<string, string>,
    private readonly options: {
      /** The pinned clock, read at each invocation (with REHEARSAL_NOW in awsEnv). */
      clock?: () => Date;
      /** Each line the function writes (its logs); default: stderr to this process's stderr, stdout dropped. */
      onLog?: (fn: string, line: string) => void;
      /** The machine's contention, read while a limit runs (tests inject one); default: contention.ts's. */
      contention?: () => number;
    } = {},
  ) {}

  private spawn(): Worker {
    const { spec } = this;
    const child = fork(RUNNER, [], {
      execArgv: [`--max-old-space-size=${spec.memoryMb}`, '--import', CLOCK],
      env: {
        PATH: process.env.PATH ?? '',
        ...spec.environment,
        ...this.awsEnv,
        AWS_ACCESS_KEY_ID: spec.logicalId,
        AWS_SECRET_ACCESS_KEY: 'rehearsal',
        AWS_LAMBDA_FUNCTION_NAME: spec.logicalId,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb),
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${spec.logicalId}`,
        AWS_EXECUTION_ENV: `AWS_Lambda_${spec.runtime}`,
        LAMBDA_TASK_ROOT: spec.assetDir,
        _HANDLER: spec.handler,
      },
      // Never inherited: a function's output is its log (CloudWatch's in AWS), and a jest worker that sees
      // V8's "heap out of memory" on its own stderr takes itself for out of memory and stops.
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const worker: Worker = {
      child,
      busy: false,
      dead: false,
      stderrTail: [],
      ready: new Promise((resolve, reject) => {
        const stop = watchLimit(
          INIT_TIMEOUT_MS,
          () => {
            child.kill('SIGKILL');
            reject(new Error(`${spec.logicalId}: init did not finish in ${INIT_TIMEOUT_MS / 1000} s`));
          },
          { pid: child.pid, contention: this.options.contention },
        );
        child.once('message', () => {
          stop();
          resolve();
        });
        child.once('exit', (code) => {
          stop();
          reject(new Error(`${spec.logicalId}: runtime exited (${code}) before it was ready`));
        });
      }),
    };
    worker.ready.catch(() => undefined);
    const onLog = this.options.onLog;
    for (const stream of [child.stdout, child.stderr]) {
      let pending = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const lines = (pending + chunk).split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          onLog?.(spec.logicalId, line);
          if (stream === child.stderr && line.trim()) worker.stderrTail = [...worker.stderrTail.slice(-4), line.trim()];
        }
      });
    }
    child.once('exit', () => {
      worker.dead = true;
      this.all.delete(worker);
      const i = this.idle.indexOf(worker);
      if (i >= 0) this.idle.splice(i, 1);
    });
    this.all.add(worker);
    return worker;
  }

  private acquire(): Promise<Worker> {
    const idle = this.idle.pop();
    if (idle) return Promise.resolve(idle);
    if (this.all.size < MAX_ENVIRONMENTS) return Promise.resolve(this.spawn());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(worker: Worker): void {
    const next = this.waiting.shift();
    if (!next) {
      if (!worker.dead) this.idle.push(worker);
      return;
    }
    next(worker.dead ? this.spawn() : worker);
  }

  async invoke(event: unknown): Promise<Invocation> {
    const worker = await this.acquire();
    worker.busy = true;
    try {
      await worker.ready;
    } catch (error) {
      worker.dead = true;
      this.release(worker);
      return { ok: false, errorType: 'Runtime.InitError', errorMessage: String(error) };
    }
    const id = randomUUID();
    const timeoutMs = this.spec.timeoutSeconds * 1000;
    const result = await new Promise<Invocation>((resolve) => {
      const onMessage = (m: { id?: string } & Invocation) => {
        if (m.id !== id) return;
        done(m.ok ? { ok: true, payload: m.payload } : { ok: false, errorType: m.errorType, errorMessage: m.errorMessage });
      };
      const onExit = (code: number | null, signal: string | null) =>
        done({ ok: false, errorType: 'Runtime.ExitError', errorMessage: `RequestId: ${id} Error: Runtime exited with error: ${signal ?? `exit status ${code}`}${worker.stderrTail.length ? ` (${worker.stderrTail.join(' | ').slice(0, 300)})` : ''}` });
      const stop = watchLimit(
        timeoutMs,
        () => {
          done({ ok: false, errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds` });
          worker.dead = true;
          worker.child.kill('SIGKILL');
        },
        { pid: worker.child.pid, contention: this.options.contention },
      );
      const done = (r: Invocation) => {
        stop();
        worker.child.off('message', onMessage);
        worker.child.off('exit', onExit);
        resolve(r);
      };
      worker.child.on('message', onMessage);
      worker.child.once('exit', onExit);
      const now = this.options.clock?.().toISOString();
      worker.child.send({ id, event, requestId: id, now, timeoutMs, stretch: (this.options.contention ?? machineContention)() }, (error) => {
        if (error) done({ ok: false, errorType: 'Runtime.ExitError', errorMessage: `RequestId: ${id} Error: Runtime exited: ${error.message}` });
      });
    });
    worker.busy = false;
    this.release(worker);
    if (result.ok && Buffer.byteLength(result.payload) > MAX_RESPONSE_BYTES) {
      return { ok: false, errorType: 'Function.ResponseSizeTooLarge', errorMessage: `Response payload size exceeded maximum allowed payload size (${MAX_RESPONSE_BYTES} bytes).` };
    }
    return result;
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.all].map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.child.exitCode !== null || w.child.signalCode !== null) return resolve();
            w.child.once('exit', () => resolve());
            w.child.kill('SIGKILL');
          }),
      ),
    );
  }
}
