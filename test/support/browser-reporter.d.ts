/** Types of browser-reporter.js (plain JavaScript: jest loads reporters natively). */
/** leftOut: the project was left out; projectsNamed: the command line named projects (--selectProjects). */
export interface BrowserReporterOptions {
  leftOut: boolean;
  projectsNamed: boolean;
}
export interface RunPaths {
  rootDir: string;
  testPathPattern?: string;
}
export default class BrowserReporter {
  constructor(globalConfig: RunPaths, options: BrowserReporterOptions);
  onRunComplete(): void;
}
export declare function browserLeftOutNotice(options: BrowserReporterOptions, globalConfig: RunPaths, files: readonly string[]): string | undefined;
