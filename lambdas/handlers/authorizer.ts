/**
 * API Gateway REQUEST authorizer for the Public API. API Gateway's contract:
 * throwing `Unauthorized` answers 401 (gateway response UNAUTHORIZED), a Deny
 * policy answers 403 (ACCESS_DENIED), an Allow lets the request through with
 * `context` in `requestContext.authorizer`.
 *
 * Every decision is counted by outcome (allowed, unauthenticated,
 * insufficient_scope, error) and logged at DEBUG with the route and the
 * non-secret key id; never the key or its hash.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { authorize } from '../core/authorize.js';
import { NotAuthenticatedError } from '../core/errors.js';
import type { AuthorizerHandler, Deps } from '../http/deps.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { errorFields } from '../http/logger.js';
import { DIMENSIONS, METRICS, type AuthorizerOutcome } from '../http/metrics.js';
import { routeForResource } from '../routes.js';

export const build =
  ({ keys, config, clock, logger, metrics }: Deps): AuthorizerHandler =>
  async (event) => {
    const route = routeForResource(event.resource, event.httpMethod);
    const decided = (outcome: AuthorizerOutcome, keyId?: string) => {
      metrics.publish({ [DIMENSIONS.outcome]: outcome }, [{ name: METRICS.authorizerDecisions, unit: 'Count', value: 1 }]);
      logger.debug('Authorizer decision', { outcome, route: route?.id ?? 'unmatched', ...(keyId ? { keyId } : {}) });
    };
    try {
      const decision = await authorize(keys, { headers: event.headers, requiredScope: route?.scope }, config.serviceName, clock());
      decided(decision.allow ? 'allowed' : 'insufficient_scope', decision.principalId);
      const result = policy(decision.principalId, decision.allow ? 'Allow' : 'Deny', event.methodArn, decision.context);
      return decision.usageIdentifierKey ? { ...result, usageIdentifierKey: decision.usageIdentifierKey } : result;
    } catch (error) {
      if (error instanceof NotAuthenticatedError) {
        decided('unauthenticated');
        throw new Error('Unauthorized');
      }
      decided('error');
      logger.error('Authorizer failed', { route: route?.id ?? 'unmatched', ...errorFields(error) });
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

export const handler = lambdaEntry(build, 'authorizer');
