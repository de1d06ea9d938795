/**
 * The Embed API's handler shape: the same validate → core → envelope as the
 * Public routes, plus CORS on every response (errors included, via
 * @middy/http-cors) and conditional caching (conditional-get.ts).
 */
import middy from '@middy/core';
import cors from '@middy/http-cors';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type * as z from 'zod';
import { parseParams } from '../core/params.js';
import type { Deps, HttpHandler } from './deps.js';
import { conditionalGet, maxAgeSeconds } from './conditional-get.js';
import { EMBED_CORS } from './embed-cors.js';
import { envelopeErrors, successResponse, type Success } from './envelope.js';

export interface EmbedSuccess extends Success {
  /** Until the first computed status in `data` changes; null if none will. */
  freshForMs: number | null;
}

export function embedRoute<S extends z.ZodObject>(spec: {
  params: S;
  run: (params: z.output<S>, deps: Deps) => Promise<EmbedSuccess>;
}): (deps: Deps) => HttpHandler {
  return (deps) =>
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      // Order matters: after/onError run last-used first, so the envelope is
      // rendered, then conditioned, then given its CORS header.
      .use(cors({ origin: EMBED_CORS.allowOrigin }))
      .use(conditionalGet())
      .use(envelopeErrors(deps.logger))
      .handler(async (event) => {
        const params = parseParams(spec.params, event.pathParameters, event.queryStringParameters);
        const { freshForMs, ...success } = await spec.run(params, deps);
        const maxAge = maxAgeSeconds(deps.config.embedCacheMaxAgeSeconds, freshForMs);
        return successResponse(success, { 'cache-control': `public, max-age=${maxAge}` });
      });
}
