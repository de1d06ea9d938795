/**
 * `npm test` on a machine without Chromium, for real: jest run as the
 * README's command runs it (the `npm run jest` half of `npm test`, the type
 * check left out for time), with CHROMIUM_PATH naming a file that does not
 * exist, on one unit file and one browser file. It passes, running the unit
 * file, and ends with the one line naming the browser file it left out; with
 * CI's variable it fails at once instead, naming the install command. The
 * rule's every combination: test/unit/browser-project.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { chromiumMissing } from '../support/browser.js';
import { newcomerEnv, ROOT } from '../support/process.js';

const UNIT = 'test/unit/browser-project.test.ts';
const BROWSER = 'test/browser/docs-page.test.ts';

function npmRunJest(env: Record<string, string>): Promise<{ code: number | null; output: string; chromium: string }> {
  const chromium = join(mkdtempSync(join(tmpdir(), 'pe-nochromium-')), 'chromium');
  // A newcomer's shell, not CI's: .ci/run exports REQUIRE_BROWSER for the whole run; a case that wants it passes it.
  const { REQUIRE_BROWSER: _ci, ...shell } = newcomerEnv();
  const childEnv: NodeJS.ProcessEnv = { ...shell, CHROMIUM_PATH: chromium, ...env };
  // This run is jest's worker: the nested jest must not take it for its own.
  delete childEnv.JEST_WORKER_ID;
  delete childEnv.TEST_STORE;
  // The second store is not what this is about: its project has no file here, so its JVMs are not started.
  const child = spawn('npm', ['run', 'jest', '--', UNIT, BROWSER, '--ci'], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output, chromium })));
}

describe('npm test without Chromium', () => {
  it('passes without the browser files and ends with one line naming them and how to add them', async () => {
    const run = await npmRunJest({});
    expect({ code: run.code, tail: run.output.slice(-1500) }).toMatchObject({ code: 0 });
    expect(run.output).toContain(`PASS dynalite ${UNIT}`);
    expect(run.output).not.toContain(`browser ${BROWSER}`);
    const lines = run.output.split('\n').filter((l) => l.includes('browser test file(s) did not run'));
    expect(lines).toEqual([
      `No Chromium at ${run.chromium}, so 1 browser test file(s) did not run: ${BROWSER}. ` +
        'To add them: sudo apt-get install -y chromium (or CHROMIUM_PATH=/path/to/chromium), then npm test again ' +
        '(REQUIRE_BROWSER=1 makes a missing Chromium fail the run, as in CI).',
    ]);
  }, 120_000);

  it('fails at once with CI variable set, naming the install command, having run nothing', async () => {
    const run = await npmRunJest({ REQUIRE_BROWSER: '1' });
    expect(run.code).toBe(1);
    expect(run.output).toContain(chromiumMissing(run.chromium));
    expect(run.output).not.toContain('PASS');
  }, 120_000);
});
