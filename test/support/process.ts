/** Runs the project's CLIs as real child processes (no sleeps: waits on output). */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';

export const ROOT = new URL('../..', import.meta.url).pathname;

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment as a newcomer's shell has it: without the AWS SDK switch
 * that jest.config.js sets for jest itself, so each CLI has to quiet the SDK's
 * Node-version notice on its own (local/sdk-node-warning.ts).
 */
export function newcomerEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  return env;
}

export interface Running {
  child: ChildProcess;
  /** Once the process has ended and every pipe it shared is closed (what it started may hold them). */
  done: Promise<Finished>;
  /** Once the process itself has ended: its exit code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
  /** What it wrote on stderr so far. */
  errors: () => string;
}

/**
 * A TypeScript CLI in one process, with tsx as a loader (as `npm start` runs
 * it): tsx's own CLI relays a signal to its child and, when the child does not
 * acknowledge within 30 ms (a loaded machine), kills it and exits 143.
 */
export function runTs(script: string, args: string[], env: Record<string, string> = {}): Running {
  return captured(spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, env: { ...newcomerEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
}

/**
 * An npm script exactly as a reader types it (`npm start -- …`), npm and its
 * shell included, in a process group of its own so that a test can tell
 * whether anything it started outlives it (processGroupGone).
 */
export function runNpm(args: string[], env: Record<string, string> = {}): Running {
  return captured(spawn('npm', args, { cwd: ROOT, env: { ...newcomerEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
}

export function captured(child: ChildProcess): Running {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, done, exited, output: () => stdout, errors: () => stderr };
}

/** Resolves with stdout (or stderr) once it matches, or rejects if the process ends first. */
export function waitForOutput(run: Running, pattern: RegExp, stream: 'stdout' | 'stderr' = 'stdout'): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const pipe = stream === 'stdout' ? run.child.stdout! : run.child.stderr!;
    const check = () => {
      const m = (stream === 'stdout' ? run.output() : run.errors()).match(pattern);
      if (m) {
        pipe.off('data', check);
        resolve(m);
      }
    };
    pipe.on('data', check);
    run.done.then((f) => reject(new Error(`process exited (${f.code}) before printing ${pattern}:\n${f.stdout}\n${f.stderr}`)));
    check();
  });
}

/** Ports free right now, distinct: each held open until all are found, so none is handed out twice. */
export async function freePorts(count: number): Promise<number[]> {
  const probes: Server[] = [];
  for (let i = 0; i < count; i++) {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    probes.push(probe);
  }
  const ports = probes.map((p) => (p.address() as { port: number }).port);
  await Promise.all(probes.map((p) => new Promise((resolve) => p.close(resolve))));
  return ports;
}

/** Whether a loopback port can be bound now (that is, nothing holds it). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * Whether no process of the group is left, waiting at most `ms` for the
 * stragglers: a helper a process leaves (esbuild's service, which tsx
 * starts) exits on its own when its parent's pipe closes, a moment later.
 */
export async function processGroupGone(pgid: number, ms = 5000): Promise<boolean> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
      throw error;
    }
  };
  const deadline = Date.now() + ms;
  while (alive()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** SIGKILL to every process of the group still there (none: nothing to do). */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The promise's value, or 'still waiting' once `ms` have passed without one. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
