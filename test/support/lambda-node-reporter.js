/**
 * Jest reporter: when jest.config.js left the Lambda-runtime tests out (no
 * Node 24: lambda-node.js), the run prints one line before jest's summary
 * naming them and how to add them. Silent when they ran or when the command
 * line named projects.
 */
import { lambdaNodeLeftOutLine, lambdaNodeTestFiles } from './lambda-node.js';

export default class LambdaNodeReporter {
  /** @param {unknown} _globalConfig @param {{ leftOut: boolean, projectsNamed: boolean }} options */
  constructor(_globalConfig, options) {
    this.options = options;
  }

  onRunComplete() {
    if (!this.options.leftOut || this.options.projectsNamed) return;
    const files = lambdaNodeTestFiles();
    if (files.length) process.stderr.write(`\n${lambdaNodeLeftOutLine(files)}\n`);
  }
}
