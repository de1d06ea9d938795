/**
 * The Powertools wiring every Lambda invocation goes through, apart from how
 * the handler's deps are made (lambda-entry.ts for the handlers that read
 * configuration; the old-prefix redirect, which reads none, uses it directly
 * so that its bundle carries neither zod nor the store).
 */
import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { routeForResource } from '../routes.js';
import type { Logger } from './logger.js';
import { DIMENSIONS, METRICS, statusClass, type MetricsSink } from './metrics.js';
import { lambdaLogger } from './powertools.js';

// `any` only widens the constraint so that every Lambda handler signature fits;
// the handler's own parameter types are kept by the generic `H`.
export type AnyHandler = (event: any, context: any) => Promise<any>;

export type EntryKind = 'http' | 'authorizer';

interface Telemetry {
  logger: Logger;
  metrics: MetricsSink;
}

export function instrument<H extends AnyHandler>(handler: H, deps: Telemetry, kind: EntryKind, routeId?: string): H {
  const logger = lambdaLogger();
  const chain = middy(handler)
    // logEvent stays off whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the API key.
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(correlationId((requestId) => logger.setCorrelationId(requestId)));
  if (kind === 'http') chain.use(requestMetrics(deps, routeId));
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
function requestMetrics({ metrics, logger }: Telemetry, routeId: string | undefined): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const count = (event: APIGatewayProxyEvent, statusCode: number) => {
    const cls = statusClass(statusCode);
    const route = routeId ?? routeForResource(event.resource, event.httpMethod)?.id ?? 'unmatched';
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
