/**
 * ANY /api/ext/v1/{proxy+} on the Public REST API (PRODUCT P15): 308 to the
 * same path under /api/public/v1, query kept. No key, no table, no
 * configuration. A Lambda rather than a MOCK integration: the Location must be
 * built from the path remainder, the stage and the whole query, which this
 * function does with the same code the local server runs and the tests check.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { LEGACY_PREFIX, legacyRedirectTarget, searchOf } from '../core/legacy-prefix.js';

export function legacyRedirectResponse(location: string): APIGatewayProxyResult {
  return { statusCode: 308, headers: { location, 'cache-control': 'public, max-age=86400' }, body: '' };
}

export const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  // requestContext.path is the path the client used (with the stage on an execute-api URL).
  const path = event.requestContext?.path ?? event.path;
  const location = legacyRedirectTarget(path, searchOf(event.multiValueQueryStringParameters)) ?? legacyRedirectTarget(LEGACY_PREFIX, '')!;
  return legacyRedirectResponse(location);
};
