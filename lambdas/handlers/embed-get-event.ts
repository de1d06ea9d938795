import { embedEvent } from '../core/embed-queries.js';
import { embedGetEventParams } from '../core/route-params.js';
import { embedRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';

/** GET /api/embed/v1/events/{eventId} (no key, CORS) */
export const build = embedRoute({
  params: embedGetEventParams,
  run: async ({ eventId }, { reader, clock, config }) => ({
    message: `Event ${eventId} retrieved`,
    ...(await embedEvent(reader, eventId, clock(), config.siteUrl)),
  }),
});

export const handler = lambdaEntry(build);
