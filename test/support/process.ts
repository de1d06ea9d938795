/** Runs the project's CLIs as real child processes (no sleeps: waits on output). */
import { spawn, type ChildProcess } from 'node:child_process';

const TSX = new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url).pathname;
export const ROOT = new URL('../..', import.meta.url).pathname;

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runTs(script: string, args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Finished>; output: () => string } {
  const child = spawn(process.execPath, [TSX, script, ...args], {
    cwd: ROOT,
    // No switch of our own here: each CLI quiets the AWS SDK's Node-version notice itself, and the tests see what a newcomer sees.
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done, output: () => stdout };
}

/** Resolves with stdout once it matches, or rejects if the process ends first. */
export function waitForOutput(run: ReturnType<typeof runTs>, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = run.output().match(pattern);
      if (m) {
        run.child.stdout!.off('data', check);
        resolve(m);
      }
    };
    run.child.stdout!.on('data', check);
    run.done.then((f) => reject(new Error(`process exited (${f.code}) before printing ${pattern}:\n${f.stdout}\n${f.stderr}`)));
    check();
  });
}
