/**
 * Turns a handler factory into a Lambda export. In Lambda the configuration is
 * parsed and clients are created at module load (init phase), so a bad
 * configuration fails the cold start loudly; elsewhere (local server, tests)
 * importing a handler file has no side effects.
 *
 * Every Lambda invocation also goes through Powertools' middy middleware
 * (request id, cold start, function name on every log line; debug sampling
 * re-drawn per invocation; keys reset after it), gets API Gateway's request id
 * as its correlation id, and an HTTP handler's answer is counted per route
 * and status class (lambdas/http/metrics.ts).
 */
import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { configFromEnv } from '../core/config.js';
import { routeForResource } from '../routes.js';
import { createDeps, type Deps } from './deps.js';
import { DIMENSIONS, METRICS, statusClass } from './metrics.js';
import { lambdaLogger, lambdaMetrics } from './powertools.js';

// `any` only widens the constraint so that every Lambda handler signature fits;
// the handler's own parameter types are kept by the generic `H`.
type AnyHandler = (event: any, context: any) => Promise<any>;

let shared: Deps | undefined;
const lambdaDeps = (): Deps => (shared ??= createDeps(configFromEnv(process.env), { logger: lambdaLogger(), metrics: lambdaMetrics() }));

export type EntryKind = 'http' | 'authorizer';

export function lambdaEntry<H extends AnyHandler>(build: (deps: Deps) => H, kind: EntryKind = 'http'): H {
  const instrumented = (deps: Deps) => instrument(build(deps), deps, kind);
  let built: H | undefined = process.env.AWS_LAMBDA_FUNCTION_NAME ? instrumented(lambdaDeps()) : undefined;
  return ((event, context) => (built ??= instrumented(lambdaDeps()))(event, context)) as H;
}

function instrument<H extends AnyHandler>(handler: H, deps: Deps, kind: EntryKind): H {
  const logger = lambdaLogger();
  const chain = middy(handler)
    // logEvent stays off whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the API key.
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(correlationId((requestId) => logger.setCorrelationId(requestId)));
  if (kind === 'http') chain.use(requestMetrics(deps));
  return chain as unknown as H;
}

/** API Gateway's request id (the `x-amzn-requestid` the client sees) on every log line of the invocation. */
function correlationId(set: (requestId: string) => void): MiddlewareObj<APIGatewayProxyEvent | APIGatewayRequestAuthorizerEvent> {
  return {
    before: (request) => {
      const requestId = request.event?.requestContext?.requestId;
      if (typeof requestId === 'string' && requestId !== '') set(requestId);
    },
  };
}

/**
 * Requests (and 5xx answers) per route and status class, and one DEBUG line
 * per request (seen in the sampled share of invocations); an error escaping
 * the handler counts as 5xx.
 */
function requestMetrics({ metrics, logger }: Pick<Deps, 'metrics' | 'logger'>): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const count = (event: APIGatewayProxyEvent, statusCode: number) => {
    const cls = statusClass(statusCode);
    const route = routeForResource(event.resource, event.httpMethod)?.id ?? 'unmatched';
    logger.debug('Request answered', { route, statusCode });
    metrics.publish(
      { [DIMENSIONS.route]: route, [DIMENSIONS.statusClass]: cls },
      [
        { name: METRICS.requests, unit: 'Count', value: 1 },
        { name: METRICS.errors, unit: 'Count', value: cls === '5xx' ? 1 : 0 },
      ],
    );
  };
  return {
    after: (request) => count(request.event, request.response?.statusCode ?? 500),
    onError: (request) => count(request.event, 500),
  };
}
