/**
 * The browser tests' rule (test/support/browser.js): where Chromium is, `npm
 * test` runs test/browser/ in its own run; without it a newcomer's run leaves
 * them out and ends saying which files and how to add them; CI
 * (REQUIRE_BROWSER=1) and an explicit `--selectProjects browser` (`npm run
 * test:browser`) fail instead, naming the install command. The runs
 * themselves, with no Chromium where they look: test/e2e/no-browser.test.ts.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { browserLeftOutNotice } from '../support/browser-reporter.js';
import { DEFAULT_CHROMIUM, REQUIRE_VARIABLE, browserTestFiles, browserTests, chromiumPath, hasChromium } from '../support/browser.js';
import { ROOT } from '../support/process.js';

describe('whether npm test runs the browser tests', () => {
  const ENVS = [undefined, '', '0', '1'];
  const ARGVS = [
    [],
    ['--selectProjects', 'dynalite'],
    ['--selectProjects', 'browser'],
    ['--selectProjects=browser'],
    ['--selectProjects', 'dynalite', 'browser', '--ci'],
    ['--select-projects', 'browser'],
    ['test/browser/widget.test.ts'],
  ];

  it('runs them where Chromium is, and where they are required or asked for by name; leaves them out otherwise (every combination)', () => {
    for (const required of ENVS) {
      for (const argv of ARGVS) {
        for (const present of [false, true]) {
          const env = required === undefined ? {} : { [REQUIRE_VARIABLE]: required };
          const askedFor = argv.some((a) => a.endsWith('browser')) && argv.some((a) => a.startsWith('--select'));
          const expected = required === '1' || askedFor || present ? 'run' : 'leave out';
          expect({ required, argv, present, decision: browserTests({ env, argv: ['node', 'jest.js', ...argv], present: () => present }) }).toEqual({
            required,
            argv,
            present,
            decision: expected,
          });
        }
      }
    }
  });

  it('does not even look for Chromium when the answer does not depend on it', () => {
    const present = () => {
      throw new Error('asked');
    };
    expect(browserTests({ env: { [REQUIRE_VARIABLE]: '1' }, argv: [], present })).toBe('run');
    expect(browserTests({ env: {}, argv: ['--selectProjects', 'browser'], present })).toBe('run');
  });

  it.each(['yes', 'true', '2', ' 1'])('refuses %j as the variable (1, 0 or unset)', (value) => {
    expect(() => browserTests({ env: { [REQUIRE_VARIABLE]: value }, argv: [], present: () => true })).toThrow(`${REQUIRE_VARIABLE} must be 1`);
  });

  it('looks for an executable at CHROMIUM_PATH, else at Debian\'s path', () => {
    expect(chromiumPath({})).toBe(DEFAULT_CHROMIUM);
    expect(chromiumPath({ CHROMIUM_PATH: '' })).toBe(DEFAULT_CHROMIUM);
    expect(chromiumPath({ CHROMIUM_PATH: '/opt/chromium/chrome' })).toBe('/opt/chromium/chrome');
    const dir = mkdtempSync(join(tmpdir(), 'pe-chromium-path-'));
    const file = join(dir, 'chromium');
    expect(hasChromium(file)).toBe(false);
    writeFileSync(file, '#!/bin/sh\n');
    expect(hasChromium(file)).toBe(false);
    chmodSync(file, 0o755);
    expect(hasChromium(file)).toBe(true);
  });

  it('npm run test:browser is the jest of npm test, asking for the project by name', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts['test:browser']).toBe(`${scripts.jest} --selectProjects browser`);
  });

  it('CI requires them, and installs Chromium before the tests run', () => {
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    const tests = ci.indexOf('npm test -- ');
    expect(ci.indexOf('export REQUIRE_BROWSER=1')).toBeGreaterThan(0);
    expect(ci.indexOf('export REQUIRE_BROWSER=1')).toBeLessThan(tests);
    expect(ci.indexOf('apt_install chromium')).toBeGreaterThan(0);
    expect(ci.indexOf('apt_install chromium')).toBeLessThan(tests);
  });
});

describe('the line before jest\'s summary when the browser tests were left out', () => {
  const files = browserTestFiles(ROOT);
  const run = (testPathPattern = '') => ({ rootDir: ROOT, testPathPattern });

  it('are the files of test/browser/', () => {
    expect(files).toEqual([
      'test/browser/d6-widget-place-tonight.test.ts',
      'test/browser/docs-page.test.ts',
      'test/browser/s2-widget-markdown-nesting.test.ts',
      'test/browser/s3-widget-strict-csp.test.ts',
      'test/browser/widget-markdown.test.ts',
      'test/browser/widget-release.test.ts',
      'test/browser/widget.test.ts',
    ]);
  });

  it('names the browser files the run would have run, and how to add them', () => {
    const line = browserLeftOutNotice({ leftOut: true, projectsNamed: false }, run(), files);
    expect(line).toBe(
      `No Chromium at ${chromiumPath()}, so ${files.length} browser test file(s) did not run: ${files.join(', ')}. ` +
        'To add them: sudo apt-get install -y chromium (or CHROMIUM_PATH=/path/to/chromium), then npm test again ' +
        '(REQUIRE_BROWSER=1 makes a missing Chromium fail the run, as in CI).',
    );
    expect(line).not.toContain('\n');
    expect(browserLeftOutNotice({ leftOut: true, projectsNamed: false }, run('test/unit/x|Browser/Widget\\.test'), files)).toContain(
      '1 browser test file(s) did not run: test/browser/widget.test.ts.',
    );
  });

  it('says nothing when they ran, when projects were named, or when the run\'s patterns match no browser file', () => {
    expect(browserLeftOutNotice({ leftOut: false, projectsNamed: false }, run(), files)).toBeUndefined();
    expect(browserLeftOutNotice({ leftOut: true, projectsNamed: true }, run(), files)).toBeUndefined();
    expect(browserLeftOutNotice({ leftOut: true, projectsNamed: false }, run('test/unit/dates'), files)).toBeUndefined();
  });
});
