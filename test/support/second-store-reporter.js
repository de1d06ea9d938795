/**
 * Jest reporter: when jest.config.js left the second store out (no Java 17),
 * the run prints one line, just before jest's summary (which jest adds after
 * every reporter), naming the change-path files that ran on dynalite only
 * and how to add DynamoDB Local (second-store.js). Silent when the second
 * store ran, and when no change-path file ran at all.
 */
import { relative } from 'node:path';
import { leftOutLine } from './second-store.js';

export default class SecondStoreReporter {
  /** @param {unknown} _globalConfig @param {{ leftOut: boolean, changePathTests: string[], rootDir: string }} options */
  constructor(_globalConfig, options) {
    this.options = options;
  }

  onRunComplete(_contexts, results) {
    const line = leftOutNotice(this.options, results);
    // stderr, where jest's own summary goes.
    if (line) process.stderr.write(`\n${line}\n`);
  }
}

/** The line for a run's results, or undefined (exported for its test). */
export function leftOutNotice({ leftOut, changePathTests, rootDir }, results) {
  if (!leftOut) return undefined;
  const changePath = new Set(changePathTests.map((t) => t.replace('<rootDir>/', '')));
  const ran = [...new Set(results.testResults.map((r) => relative(rootDir, r.testFilePath)))].filter((f) => changePath.has(f)).sort();
  return ran.length ? leftOutLine(ran) : undefined;
}
