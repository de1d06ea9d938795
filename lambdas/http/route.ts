/**
 * The shape every Public API data handler shares: validate path + query with
 * the route's zod schema, run one core function, wrap the result in the
 * envelope. Status codes other than 200 only ever come from typed errors.
 * Every answer, errors included, carries the rate-limit headers
 * (lambdas/core/rate-limit.ts).
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { z } from 'zod';
import { parseParams } from '../core/params.js';
import { rateLimitHeaders } from '../core/rate-limit.js';
import type { Deps, HttpHandler } from './deps.js';
import { envelopeErrors, successResponse, type Success } from './envelope.js';

export interface RouteSpec<S extends z.ZodObject> {
  params: S;
  run: (params: z.output<S>, deps: Deps) => Promise<Success>;
}

export function httpRoute<S extends z.ZodObject>(spec: RouteSpec<S>): (deps: Deps) => HttpHandler {
  return (deps) => {
    const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(envelopeErrors(deps.logger))
      .handler(async (event) => {
        const params = parseParams(spec.params, event.pathParameters, event.queryStringParameters);
        return successResponse(await spec.run(params, deps));
      });
    // Outside the chain, so the envelope of an error gets them as a success does.
    return async (event, context) => {
      const response = await chain(event, context);
      return { ...response, headers: { ...response.headers, ...rateLimitHeaders(deps.clock()) } };
    };
  };
}
