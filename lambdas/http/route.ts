/**
 * The shape every HTTP handler shares: validate path + query with the route's
 * zod schema, run one core function, wrap the result in the envelope. Status
 * codes other than 200 only ever come from typed errors.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { z } from 'zod';
import { parseParams } from '../core/params.js';
import type { Deps, HttpHandler } from './deps.js';
import { envelopeErrors, successResponse, type Success } from './envelope.js';

export interface RouteSpec<S extends z.ZodObject> {
  params: S;
  run: (params: z.output<S>, deps: Deps) => Promise<Success>;
}

export function httpRoute<S extends z.ZodObject>(spec: RouteSpec<S>): (deps: Deps) => HttpHandler {
  return (deps) =>
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(envelopeErrors(deps.logger))
      .handler(async (event) => {
        const params = parseParams(spec.params, event.pathParameters, event.queryStringParameters);
        return successResponse(await spec.run(params, deps));
      });
}
