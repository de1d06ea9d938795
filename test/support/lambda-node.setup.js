// globalSetup of jest's "lambda-node" project: where it is required and the Lambda runtime's Node is missing, the
// run fails here at once, saying how to install it (lambda-node.js).
import { LAMBDA_NODE_MISSING, lambdaNodePath } from './lambda-node.js';

export default function globalSetup() {
  if (lambdaNodePath() === undefined) throw new Error(LAMBDA_NODE_MISSING);
}
