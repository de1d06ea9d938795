/**
 * The web product as the rehearsal's AWS_IAM methods see it: an IAM principal
 * of the rehearsal's account that signs with the documented local key pair
 * (local/sigv4-check.ts), granted exactly the one statement
 * docs/managing-keys.md tells the operator to give the web product's role:
 * Allow execute-api:Invoke on the stack's KeyAdminInvokeArn output.
 */
import type { LocalPrincipal } from '../sigv4-check.js';
import type { PolicyDocument } from './iam.js';

export interface WebProduct extends LocalPrincipal {
  /** Its identity policies: what execute-api:Invoke is evaluated against. */
  readonly policies: readonly PolicyDocument[];
}

/** The documented grant (docs/managing-keys.md), on the ARN the stack outputs. */
export function webProductGrant(invokeArn: string): PolicyDocument {
  return { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: invokeArn }] };
}
