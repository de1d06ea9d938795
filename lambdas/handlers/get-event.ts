import { getEventParams } from '../core/route-params.js';
import { getEvent } from '../core/queries.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/events/{eventId} */
export const build = httpRoute({
  params: getEventParams,
  run: async ({ eventId }, { reader, config }) => ({
    message: `Event ${eventId} retrieved`,
    data: await getEvent(reader, eventId, config.siteUrl),
  }),
});

export const handler = lambdaEntry(build);
