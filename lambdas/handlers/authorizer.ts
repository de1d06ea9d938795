/**
 * API Gateway REQUEST authorizer for the Public API. API Gateway's contract:
 * throwing `Unauthorized` answers 401 (gateway response UNAUTHORIZED), a Deny
 * policy answers 403 (ACCESS_DENIED), an Allow lets the request through with
 * `context` in `requestContext.authorizer`.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { authorize } from '../core/authorize.js';
import { NotAuthenticatedError } from '../core/errors.js';
import type { AuthorizerHandler, Deps } from '../http/deps.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { routeForResource } from '../routes.js';

export const build =
  ({ keys, config, clock }: Deps): AuthorizerHandler =>
  async (event) => {
    const route = routeForResource(event.resource, event.httpMethod);
    try {
      const decision = await authorize(keys, { headers: event.headers, requiredScope: route?.scope }, config.serviceName, clock());
      const result = policy(decision.principalId, decision.allow ? 'Allow' : 'Deny', event.methodArn, decision.context);
      return decision.usageIdentifierKey ? { ...result, usageIdentifierKey: decision.usageIdentifierKey } : result;
    } catch (error) {
      if (error instanceof NotAuthenticatedError) throw new Error('Unauthorized');
      throw error;
    }
  };

function policy(principalId: string, effect: 'Allow' | 'Deny', resource: string, context: Record<string, string | number>): APIGatewayAuthorizerResult {
  return {
    principalId,
    policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }] },
    context,
  };
}

export const handler = lambdaEntry(build);
