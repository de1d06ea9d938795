/**
 * Whether `npm test` runs the tests that need the Lambda runtime's Node (24)
 * beside the project's own (test/lambda-node/: the same derivation on both
 * runtimes, issue 59 d10), and what it says when it does not. Plain
 * JavaScript, like second-store.js: jest.config.js imports it natively.
 *
 * - The Lambda runtime's Node found: LAMBDA_NODE, or the one `npm run
 *   lambda-node` installs from the npm registry into .lambda-node/ (the
 *   `node-{platform}-{arch}` package of LAMBDA_NODE_VERSION): the
 *   "lambda-node" project runs, with LAMBDA_NODE set for its workers.
 * - Not found: the project is left out, and the run ends with one line naming
 *   its files and how to add it (lambda-node-reporter.js).
 * - REQUIRE_LAMBDA_NODE=1 (.ci/run sets it, after `npm run lambda-node`), or
 *   the project asked for by name: it stays, and its global setup fails the
 *   run at once saying how to install it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { optionalProject } from './second-store.js';

export const PROJECT = 'lambda-node';
export const REQUIRE_VARIABLE = 'REQUIRE_LAMBDA_NODE';
export const LAMBDA_NODE_TESTS = ['<rootDir>/test/lambda-node/*.test.ts'];
/** The Node release installed as the Lambda runtime's (lib/route-function.ts: NODEJS_24_X). */
export const LAMBDA_NODE_VERSION = '24.21.0';

const ROOT = new URL('../..', import.meta.url).pathname;

/** The binary `npm run lambda-node` installs, for this machine's platform. */
export function installedLambdaNode(root = ROOT) {
  return join(root, '.lambda-node', 'node_modules', `node-${process.platform}-${process.arch}`, 'bin', 'node');
}

/** LAMBDA_NODE, or the installed binary, or undefined. */
export function lambdaNodePath(env = process.env, root = ROOT) {
  if (env.LAMBDA_NODE) return env.LAMBDA_NODE;
  const installed = installedLambdaNode(root);
  return existsSync(installed) ? installed : undefined;
}

export const LAMBDA_NODE_MISSING =
  `The Lambda runtime's Node (${LAMBDA_NODE_VERSION.split('.')[0]}) was not found: set LAMBDA_NODE to its binary, or run ` +
  '`npm run lambda-node` (it installs the Node binary package from the npm registry into .lambda-node/; .ci/run does this in CI).';

export function lambdaNodeTests({ env = process.env, argv = process.argv, present = () => lambdaNodePath(env) !== undefined } = {}) {
  return optionalProject({ env, argv, project: PROJECT, variable: REQUIRE_VARIABLE, missing: "Lambda runtime's Node", present });
}

/** The test files of the project, relative to the root. */
export function lambdaNodeTestFiles(root = ROOT) {
  return readdirSync(join(root, 'test/lambda-node'))
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => `test/lambda-node/${f}`);
}

/** The one line printed when a run left them out. */
export function lambdaNodeLeftOutLine(files) {
  return (
    `No Lambda runtime Node (${LAMBDA_NODE_VERSION.split('.')[0]}), so ${files.length} test file(s) that compare it with this Node did not run: ${files.join(', ')}. ` +
    `To add them: npm run lambda-node (or LAMBDA_NODE=/path/to/node24), then npm test again (${REQUIRE_VARIABLE}=1 makes a missing one fail the run, as in CI).`
  );
}
