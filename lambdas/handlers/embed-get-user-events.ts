import { embedUserEvents } from '../core/embed-queries.js';
import { resolveStartBounds } from '../core/params.js';
import { embedGetUserEventsParams } from '../core/route-params.js';
import { embedRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';

/** GET /api/embed/v1/users/{username}/events?from&to&limit&order (no key, CORS) */
export const build = embedRoute({
  params: embedGetUserEventsParams,
  run: async (q, { reader, clock, config }) => ({
    message: `Events of user ${q.username} retrieved`,
    ...(await embedUserEvents(reader, { username: q.username, limit: q.limit, order: q.order, bounds: resolveStartBounds(q) }, clock(), config.siteUrl)),
  }),
});

export const handler = lambdaEntry(build);
