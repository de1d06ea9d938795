/**
 * ANY /api/ext/v1/{proxy+} on the Public REST API (PRODUCT P15): 308 to the
 * same path under /api/public/v1, query kept. No key, no table, no
 * configuration. A Lambda rather than a MOCK integration: the Location must be
 * built from the path remainder, the stage and the whole query, which this
 * function does with the same code the local server runs and the tests check.
 * Like every Lambda it goes through the Powertools wiring (logs with the
 * Lambda context, a request count per status class under the route id
 * `legacyRedirect`), but not through lambdaEntry: it reads no configuration,
 * and its bundle stays free of zod and the store.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { LEGACY_PREFIX, legacyRedirectTarget, searchOf } from '../core/legacy-prefix.js';
import type { Deps, HttpHandler } from '../http/deps.js';
import { instrument } from '../http/instrument.js';
import { lambdaLogger, lambdaMetrics } from '../http/powertools.js';

/** The `route` dimension of its request metrics (it is no entry of the route table). */
export const LEGACY_REDIRECT_ROUTE_ID = 'legacyRedirect';

export function legacyRedirectResponse(location: string): APIGatewayProxyResult {
  return { statusCode: 308, headers: { location, 'cache-control': 'public, max-age=86400' }, body: '' };
}

export const redirect = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  // requestContext.path is the path the client used (with the stage on an execute-api URL).
  const path = event.requestContext?.path ?? event.path;
  const location = legacyRedirectTarget(path, searchOf(event.multiValueQueryStringParameters)) ?? legacyRedirectTarget(LEGACY_PREFIX, '')!;
  return legacyRedirectResponse(location);
};

export const build = (_deps: Deps): HttpHandler => redirect;

let instrumented: HttpHandler | undefined;
/** Powertools objects made on first use, never at import (the local server imports this file). */
export const handler: HttpHandler = (event, context) =>
  (instrumented ??= instrument(redirect as HttpHandler, { logger: lambdaLogger(), metrics: lambdaMetrics() }, 'http', LEGACY_REDIRECT_ROUTE_ID))(event, context);
