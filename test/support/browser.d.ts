/** Types of browser.js (plain JavaScript, so that jest.config.js can import it). */
export declare const PROJECT: 'browser';
export declare const REQUIRE_VARIABLE: 'REQUIRE_BROWSER';
export declare const DEFAULT_CHROMIUM: '/usr/bin/chromium';
export declare function chromiumPath(env?: NodeJS.ProcessEnv): string;
export declare const INSTALL_CHROMIUM: string;
export declare const BROWSER_TESTS: string[];
export declare function browserTestFiles(root?: string): string[];
export declare function chromiumMissing(path?: string): string;
export declare function hasChromium(path?: string): boolean;
export declare function browserTests(options?: { env?: NodeJS.ProcessEnv; argv?: readonly string[]; present?: () => boolean }): 'run' | 'leave out';
export declare function browserLeftOutLine(files: readonly string[], path?: string): string;
