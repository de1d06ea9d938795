/**
 * Every AWS call a rehearsed function makes is decided by its role's policies
 * in the template, with @cloud-copilot/iam-simulate (a real IAM policy
 * evaluator: action and resource matching, condition operators, explicit
 * deny), never by a matcher of our own. A call it does not allow is recorded
 * as a denial naming the function, the action and the resource, and answered
 * as AWS answers it (AccessDeniedException).
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';

export const ACCOUNT = '123456789012';
export const REGION = 'us-east-1';

// `any`: an IAM policy document as the template holds it (resolved JSON).
export type PolicyDocument = Record<string, any>;

export interface AwsCall {
  /** The function's logical id in the template. */
  readonly fn: string;
  /** `dynamodb:Query`, `sqs:SendMessage`… */
  readonly action: string;
  readonly resource: string;
  readonly context: Record<string, string | string[]>;
}

export interface Denial extends AwsCall {
  readonly decision: string;
}

export async function evaluate(call: AwsCall, roleName: string, policies: readonly PolicyDocument[]): Promise<{ allowed: boolean; decision: string }> {
  return evaluateAs(`arn:aws:sts::${ACCOUNT}:assumed-role/${roleName}/${call.fn}`, call, policies, roleName);
}

/** The same evaluation for any principal of the account (the web product's role calling execute-api:Invoke). */
export async function evaluateAs(
  principal: string,
  call: Pick<AwsCall, 'action' | 'resource' | 'context'>,
  policies: readonly PolicyDocument[],
  policyName = 'policy',
  /** The resource's own policy (an API's): its explicit deny wins, its allow lets a principal of the account in. */
  resourcePolicy?: PolicyDocument,
): Promise<{ allowed: boolean; decision: string }> {
  const result = await runSimulation(
    {
      request: {
        principal,
        action: call.action,
        resource: { resource: call.resource, accountId: ACCOUNT },
        contextVariables: { ...principalKeys(principal), ...call.context },
      },
      identityPolicies: policies.map((policy, i) => ({ name: `${policyName}-${i}`, policy })),
      ...(resourcePolicy ? { resourcePolicy } : {}),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (result.resultType === 'error') return { allowed: false, decision: `simulation error: ${JSON.stringify(result.errors)}` };
  return { allowed: result.overallResult === 'Allowed', decision: result.overallResult };
}

export const describeDenial = (d: Denial) => `${d.fn} may not ${d.action} on ${d.resource} (${d.decision}${Object.keys(d.context).length ? `, context ${JSON.stringify(d.context)}` : ''})`;

/**
 * The global condition keys AWS sets for every request from this principal:
 * aws:PrincipalArn is the role's ARN for one of its sessions (not the
 * session's), and aws:PrincipalAccount its account.
 */
export function principalKeys(principal: string): Record<string, string> {
  const session = /^arn:(aws[a-z-]*):sts::(\d{12}):assumed-role\/([^/]+)\/.+$/.exec(principal);
  const arn = session ? `arn:${session[1]}:iam::${session[2]}:role/${session[3]}` : principal;
  const account = /^arn:aws[a-z-]*:(?:iam|sts)::(\d{12}):/.exec(principal)?.[1];
  return { 'aws:PrincipalArn': arn, ...(account ? { 'aws:PrincipalAccount': account } : {}) };
}
