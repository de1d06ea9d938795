/** Types of second-store.js (plain JavaScript, so that jest.config.js can import it). */
export declare const REQUIRE_VARIABLE: 'REQUIRE_DYNAMODB_LOCAL';
export declare const PROJECT: 'dynamodb-local';
export declare const INSTALL_JAVA: string;
export declare const JAVA_MISSING: string;
export declare function javaMajor(java?: string): number;
export declare function selectedProjects(argv: readonly string[]): string[];
export declare function secondStore(options?: { env?: NodeJS.ProcessEnv; argv?: readonly string[]; java?: () => number }): 'run' | 'leave out';
export declare function leftOutLine(files: readonly string[]): string;
export declare function optionalProject(options: {
  env: NodeJS.ProcessEnv;
  argv: readonly string[];
  project: string;
  variable: string;
  missing: string;
  present: () => boolean;
}): 'run' | 'leave out';
