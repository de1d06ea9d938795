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
 * killed: "Task timed out"), its MemorySize (V8's heap is capped at it, an
 * overrun ends the process: Runtime.ExitError), and the 6 MB synchronous
 * response payload (Lambda's quota; larger is a function error).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';

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
}

export class LambdaHost {
  private readonly idle: Worker[] = [];
  private readonly all = new Set<Worker>();

  constructor(
    readonly spec: FunctionSpec,
    private readonly awsEnv: Record<string, string>,
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
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const worker: Worker = {
      child,
      busy: false,
      ready: new Promise((resolve, reject) => {
        child.once('message', () => resolve());
        child.once('exit', (code) => reject(new Error(`${spec.logicalId}: runtime exited (${code}) before it was ready`)));
      }),
    };
    worker.ready.catch(() => undefined);
    child.once('exit', () => {
      this.all.delete(worker);
      const i = this.idle.indexOf(worker);
      if (i >= 0) this.idle.splice(i, 1);
    });
    this.all.add(worker);
    return worker;
  }

  async invoke(event: unknown): Promise<Invocation> {
    const worker = this.idle.pop() ?? this.spawn();
    worker.busy = true;
    await worker.ready;
    const id = randomUUID();
    const timeoutMs = this.spec.timeoutSeconds * 1000;
    const result = await new Promise<Invocation>((resolve) => {
      const onMessage = (m: { id?: string } & Invocation) => {
        if (m.id !== id) return;
        done(m.ok ? { ok: true, payload: m.payload } : { ok: false, errorType: m.errorType, errorMessage: m.errorMessage });
      };
      const onExit = (code: number | null, signal: string | null) =>
        done({ ok: false, errorType: 'Runtime.ExitError', errorMessage: `RequestId: ${id} Error: Runtime exited with error: ${signal ?? `exit status ${code}`}` });
      const timer = setTimeout(() => {
        done({ ok: false, errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds` });
        worker.child.kill('SIGKILL');
      }, timeoutMs);
      const done = (r: Invocation) => {
        clearTimeout(timer);
        worker.child.off('message', onMessage);
        worker.child.off('exit', onExit);
        resolve(r);
      };
      worker.child.on('message', onMessage);
      worker.child.once('exit', onExit);
      worker.child.send({ id, event, requestId: id, deadline: performance.timeOrigin + performance.now() + timeoutMs });
    });
    worker.busy = false;
    if (this.all.has(worker) && worker.child.exitCode === null) this.idle.push(worker);
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
