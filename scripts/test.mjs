/**
 * `npm test`: the type check (`npm run typecheck`) and jest side by side, its
 * arguments handed to jest.
 *
 * Why side by side: tsc is one thread, and so is the first half minute of
 * jest's run (its global setups: the rehearsal bundles its assemblies, the
 * second store starts its JVMs). One after the other, each left a core of a
 * 2-core machine idle for about 25 s; together they fill both.
 *
 * What it keeps: the run fails if either fails. A type error stops jest at
 * once (its whole process group, workers and JVMs included) and prints tsc's
 * output; a clean type check prints one line when it ends. The output of tsc
 * is held until then, so it never lands inside jest's.
 */
import { spawn } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(0);

// Its own process group, so that a failed type check can stop jest and everything jest started.
const jest = spawn(process.execPath, ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', 'node_modules/jest/bin/jest.js', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  detached: true,
});
const typecheck = spawn('npm', ['run', '--silent', 'typecheck'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });

let typeOutput = '';
typecheck.stdout.on('data', (d) => (typeOutput += d));
typecheck.stderr.on('data', (d) => (typeOutput += d));

const stopJest = (signal) => {
  try {
    process.kill(-jest.pid, signal);
  } catch {
    // Already ended.
  }
};
// Jest is in a group of its own, so a terminal's Ctrl-C would not reach it: hand the signal on.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    stopJest(signal);
    typecheck.kill(signal);
  });
}

const ended = (child) => new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
const typeCode = ended(typecheck).then((code) => {
  if (code === 0) {
    process.stderr.write(`type check passed (npm run typecheck, ${seconds()} s)\n`);
  } else {
    process.stderr.write(`${typeOutput}\ntype check failed (npm run typecheck): jest stopped\n`);
    stopJest('SIGTERM');
  }
  return code;
});
const [types, tests] = await Promise.all([typeCode, ended(jest)]);
process.exit(types !== 0 ? types : tests);
