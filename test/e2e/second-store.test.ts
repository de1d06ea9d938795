/**
 * `npm test` on a machine without Java, for real: jest run as the README's
 * command runs it (the `npm run jest` half of `npm test`, the type check
 * left out for time), with a PATH that holds node, npm and a shell but no
 * `java`, on one change-path file. It passes on dynalite and ends with the
 * one line naming what it left to the second store; with CI's variable it
 * fails at once instead, naming the install command. The rule's every
 * combination: test/unit/dynamodb-local.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { JAVA_MISSING } from '../support/dynamodb-local.js';
import { newcomerEnv, ROOT } from '../support/process.js';

const FILE = 'test/integration/item-size.test.ts';

/** A PATH of node, npm and sh only: whatever this machine has, `java` is not on it. */
function pathWithoutJava(): string {
  const bin = mkdtempSync(join(tmpdir(), 'pe-nojava-'));
  symlinkSync(process.execPath, join(bin, 'node'));
  // npm's own launcher, beside node in every Node install.
  symlinkSync(join(process.execPath, '..', 'npm'), join(bin, 'npm'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  return bin;
}

function npmRunJest(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  // A newcomer's shell, not CI's: .ci/run exports REQUIRE_DYNAMODB_LOCAL for the whole run; a case that wants it passes it.
  const { REQUIRE_DYNAMODB_LOCAL: _ci, ...shell } = newcomerEnv();
  const childEnv: NodeJS.ProcessEnv = { ...shell, PATH: pathWithoutJava(), ...env };
  // This run is jest's worker: the nested jest must not take it for its own.
  delete childEnv.JEST_WORKER_ID;
  delete childEnv.TEST_STORE;
  const child = spawn('npm', ['run', 'jest', '--', FILE, '--ci'], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

describe('npm test without Java on the PATH', () => {
  it('passes on dynalite and ends with one line naming the files it left to the second store and how to add it', async () => {
    const run = await npmRunJest({});
    expect({ code: run.code, tail: run.output.slice(-1500) }).toMatchObject({ code: 0 });
    expect(run.output).toContain(`PASS dynalite ${FILE}`);
    expect(run.output).not.toContain('dynamodb-local test/');
    const lines = run.output.split('\n').filter((l) => l.includes('DynamoDB Local (the second store) did not run'));
    expect(lines).toEqual([
      `No Java 17, so DynamoDB Local (the second store) did not run; 1 change-path file(s) ran on dynalite only: ${FILE}. ` +
        'To add it: sudo apt-get install -y openjdk-17-jre-headless (or any Java 17+ on the PATH), then npm test again ' +
        '(REQUIRE_DYNAMODB_LOCAL=1 makes a missing Java fail the run, as in CI).',
    ]);
  }, 120_000);

  it('fails at once with CI variable set, naming the install command, having run nothing', async () => {
    const run = await npmRunJest({ REQUIRE_DYNAMODB_LOCAL: '1' });
    expect(run.code).toBe(1);
    expect(run.output).toContain(JAVA_MISSING);
    expect(run.output).not.toContain('PASS');
  }, 120_000);

  it('CI sets the variable before it runs the tests, and npm test is the type check beside this same jest', () => {
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    expect(ci.indexOf('export REQUIRE_DYNAMODB_LOCAL=1')).toBeGreaterThan(0);
    expect(ci.indexOf('export REQUIRE_DYNAMODB_LOCAL=1')).toBeLessThan(ci.indexOf('npm test -- '));
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    // scripts/test.mjs: the type check beside this same jest, with the same node flags.
    expect(scripts.test).toBe('node scripts/test.mjs');
    const runner = readFileSync(join(ROOT, 'scripts/test.mjs'), 'utf8');
    expect(scripts.jest).toBe('node --experimental-vm-modules --disable-warning=ExperimentalWarning node_modules/jest/bin/jest.js');
    expect(runner).toContain("['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', 'node_modules/jest/bin/jest.js', ...process.argv.slice(2)]");
    expect(runner).toContain("spawn('npm', ['run', '--silent', 'typecheck']");
  });
});
