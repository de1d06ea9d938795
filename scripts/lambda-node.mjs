/**
 * `npm run lambda-node`: installs the Lambda runtime's Node (LAMBDA_NODE_VERSION, the `node-{platform}-{arch}`
 * binary package the npm registry serves, no install script) into .lambda-node/, for the tests that compare it
 * with this Node (test/lambda-node/, test/support/lambda-node.js). Needs only the npm registry; idempotent.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LAMBDA_NODE_VERSION, installedLambdaNode } from '../test/support/lambda-node.js';

const root = new URL('..', import.meta.url).pathname;
const dir = join(root, '.lambda-node');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ private: true, description: "The Lambda runtime's Node for the tests (npm run lambda-node)" }, null, 2)}\n`);
const pkg = `node-${process.platform}-${process.arch}@${LAMBDA_NODE_VERSION}`;
execFileSync('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', pkg], { cwd: dir, stdio: 'inherit' });
const node = installedLambdaNode(root);
process.stdout.write(`${execFileSync(node, ['-p', 'process.version + " (tz " + process.versions.tz + ")"'], { encoding: 'utf8' }).trim()} at ${node}\n`);
