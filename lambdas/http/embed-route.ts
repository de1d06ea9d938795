/**
 * The Embed API's handler shapes: the same validate → core → envelope as the
 * Public routes, plus CORS on every response (errors included, via
 * @middy/http-cors) and conditional caching (conditional-get.ts). JSON routes
 * answer the envelope; calendar routes answer iCalendar text, with the same
 * caching, CORS and JSON error envelopes.
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
  return embedChain(spec.params, async (params, deps) => {
    const { freshForMs, ...success } = await spec.run(params, deps);
    return successResponse(success, { 'cache-control': cacheControl(deps, freshForMs) });
  });
}

export interface CalendarSuccess {
  /** The iCalendar text. */
  data: string;
  freshForMs: number | null;
  /** File name offered to a browser that downloads it, without `.ics`. */
  filename: string;
}

/** An Embed route answering `text/calendar` (PRODUCT P15); its errors stay JSON envelopes. */
export function embedCalendarRoute<S extends z.ZodObject>(spec: {
  params: S;
  run: (params: z.output<S>, deps: Deps) => Promise<CalendarSuccess>;
}): (deps: Deps) => HttpHandler {
  return embedChain(spec.params, async (params, deps) => {
    const { data, freshForMs, filename } = await spec.run(params, deps);
    return {
      statusCode: 200,
      headers: {
        'content-type': 'text/calendar; charset=utf-8',
        'content-disposition': `inline; filename="${filename.replace(/[^\w.-]/g, '_')}.ics"`,
        'x-content-type-options': 'nosniff',
        'cache-control': cacheControl(deps, freshForMs),
      },
      body: data,
    };
  });
}

function cacheControl(deps: Deps, freshForMs: number | null): string {
  return `public, max-age=${maxAgeSeconds(deps.config.embedCacheMaxAgeSeconds, freshForMs)}`;
}

function embedChain<S extends z.ZodObject>(
  schema: S,
  respond: (params: z.output<S>, deps: Deps) => Promise<APIGatewayProxyResult>,
): (deps: Deps) => HttpHandler {
  return (deps) =>
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      // Order matters: after/onError run last-used first, so the envelope is
      // rendered, then conditioned, then given its CORS header.
      .use(cors({ origin: EMBED_CORS.allowOrigin }))
      .use(conditionalGet())
      .use(envelopeErrors(deps.logger))
      .handler(async (event) => respond(parseParams(schema, event.pathParameters, event.queryStringParameters), deps));
}
