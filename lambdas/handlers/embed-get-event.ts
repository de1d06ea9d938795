import { embedEvent } from '../core/embed-queries.js';
import { embedGetEventParams } from '../core/route-params.js';
import type { Deps, HttpHandler } from '../http/deps.js';
import { EMBED_CORS } from '../http/embed-cors.js';
import { embedRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { EVENT_ID_PATTERN } from '../core/ids.js';

const json = embedRoute({
  params: embedGetEventParams,
  run: async ({ eventId }, { reader, clock, config }) => ({
    message: `Event ${eventId} retrieved`,
    ...(await embedEvent(reader, eventId, clock(), config.siteUrl)),
  }),
});

/**
 * GET /api/embed/v1/events/{eventId} (no key, CORS). `{eventId}.ics` lands
 * here too (API Gateway cannot route on part of a segment) and is redirected
 * to the event's feed, `{eventId}/event.ics`, served by its own Lambda.
 */
export const build = (deps: Deps): HttpHandler => {
  const answer = json(deps);
  return async (event, context) => {
    const id = /^(.*)\.ics$/.exec(event.pathParameters?.eventId ?? '')?.[1];
    if (id === undefined || !EVENT_ID_PATTERN.test(id)) return answer(event, context);
    return {
      statusCode: 308,
      // Relative to …/events/{id}.ics, so it holds behind any stage or base path.
      headers: { location: `${id}/event.ics`, 'access-control-allow-origin': EMBED_CORS.allowOrigin, 'cache-control': 'public, max-age=86400' },
      body: '',
    };
  };
};

export const handler = lambdaEntry(build);
