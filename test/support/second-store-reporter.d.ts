/** Types of second-store-reporter.js (plain JavaScript: jest loads reporters natively). */
export interface SecondStoreOptions {
  leftOut: boolean;
  changePathTests: readonly string[];
  rootDir: string;
}
export default class SecondStoreReporter {
  constructor(globalConfig: unknown, options: SecondStoreOptions);
  onRunComplete(contexts: unknown, results: { testResults: Array<{ testFilePath: string }> }): void;
}
export declare function leftOutNotice(options: SecondStoreOptions, results: { testResults: Array<{ testFilePath: string }> }): string | undefined;
