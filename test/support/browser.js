/**
 * Whether `npm test` runs the browser tests (test/browser/: the embed widget
 * and the API reference in a real headless Chromium, Debian's
 * /usr/bin/chromium driven by playwright-core), and what it says when it does
 * not. Plain JavaScript: jest.config.js imports it natively, before any
 * transform exists. The same three cases as the second store's Java
 * (second-store.js):
 *
 * - Chromium at /usr/bin/chromium (or at CHROMIUM_PATH): the "browser"
 *   project runs, in the same run and on the same workers as every other test.
 * - No Chromium: the project is left out, and the run ends with one line
 *   naming the browser files it left out and how to add them
 *   (browser-reporter.js). A newcomer's `npm test` passes.
 * - REQUIRE_BROWSER=1 (.ci/run sets it, with the Chromium it installs), or the
 *   project asked for by name (`--selectProjects browser`, which is what `npm
 *   run test:browser` does): the project stays, and its global setup
 *   (browser.setup.js) fails the run at once saying how to install Chromium.
 */
import { accessSync, constants, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { optionalProject } from './second-store.js';

export const PROJECT = 'browser';

/** The variable that makes a missing Chromium a failure instead of a note. */
export const REQUIRE_VARIABLE = 'REQUIRE_BROWSER';

/** Where the tests launch Chromium from: CHROMIUM_PATH, else where Debian's package puts it. */
export const DEFAULT_CHROMIUM = '/usr/bin/chromium';
export const chromiumPath = (env = process.env) => env.CHROMIUM_PATH || DEFAULT_CHROMIUM;

export const INSTALL_CHROMIUM = 'sudo apt-get install -y chromium';

export const BROWSER_TESTS = ['<rootDir>/test/browser/*.test.ts'];

/** The browser test files, relative to the root, as BROWSER_TESTS matches them. */
export function browserTestFiles(root = new URL('../..', import.meta.url).pathname) {
  return readdirSync(join(root, 'test/browser'))
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => `test/browser/${f}`);
}

export const chromiumMissing = (path = chromiumPath()) =>
  `The browser tests need Chromium at ${path}, and there is none. ` +
  `Install it with \`${INSTALL_CHROMIUM}\` (Debian/Ubuntu; .ci/run does this in CI), or set CHROMIUM_PATH to one, ` +
  `or leave them out: unset ${REQUIRE_VARIABLE} and do not select the "${PROJECT}" project.`;

/** Whether an executable is at `path`. */
export function hasChromium(path = chromiumPath()) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * 'run' or 'leave out' the browser tests. `env`, `argv` and `present` are the
 * process's own unless given (the tests give them).
 */
export function browserTests({ env = process.env, argv = process.argv, present = () => hasChromium() } = {}) {
  return optionalProject({ env, argv, project: PROJECT, variable: REQUIRE_VARIABLE, missing: 'Chromium', present });
}

/** The one line printed when a run left browser test files out: `files`, relative to the root. */
export function browserLeftOutLine(files, path = chromiumPath()) {
  return (
    `No Chromium at ${path}, so ${files.length} browser test file(s) did not run: ${files.join(', ')}. ` +
    `To add them: ${INSTALL_CHROMIUM} (or CHROMIUM_PATH=/path/to/chromium), then npm test again ` +
    `(${REQUIRE_VARIABLE}=1 makes a missing Chromium fail the run, as in CI).`
  );
}
