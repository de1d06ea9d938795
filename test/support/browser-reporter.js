/**
 * Jest reporter: when jest.config.js left the browser tests out (no Chromium:
 * browser.js), the run prints one line just before jest's summary naming the
 * browser files it would have run and how to add them. Silent when they ran,
 * when the command line named projects (then it asked for these or not), and
 * when its file patterns match no browser file.
 */
import { browserLeftOutLine, browserTestFiles } from './browser.js';

export default class BrowserReporter {
  /** @param {{ rootDir: string, testPathPattern?: string }} globalConfig @param {{ leftOut: boolean, projectsNamed: boolean }} options */
  constructor(globalConfig, options) {
    this.globalConfig = globalConfig;
    this.options = options;
  }

  onRunComplete() {
    const line = browserLeftOutNotice(this.options, this.globalConfig, browserTestFiles(this.globalConfig.rootDir));
    // stderr, where jest's own summary goes.
    if (line) process.stderr.write(`\n${line}\n`);
  }
}

/**
 * The line for a run, or undefined (exported for its test). `files` are the browser test files, relative to
 * `rootDir`; a run's file patterns select those whose absolute path they match, as jest's do (case-insensitive).
 */
export function browserLeftOutNotice({ leftOut, projectsNamed }, { rootDir, testPathPattern = '' }, files) {
  if (!leftOut || projectsNamed) return undefined;
  const pattern = new RegExp(testPathPattern, 'i');
  const missed = files.filter((f) => pattern.test(`${rootDir.replace(/\/$/, '')}/${f}`));
  return missed.length ? browserLeftOutLine(missed) : undefined;
}
