import * as z from 'zod';
import { embedUserEvents } from '../core/embed-queries.js';
import { limitParam, orderParam, resolveStartBounds, startWindowShape, usernameParam } from '../core/params.js';
import { embedRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';

/** GET /api/embed/v1/users/{username}/events?from&to&limit&order (no key, CORS) */
export const build = embedRoute({
  params: z.object({ username: usernameParam, limit: limitParam(50), order: orderParam, ...startWindowShape }),
  run: async (q, { reader, clock, config }) => ({
    message: `Events of user ${q.username} retrieved`,
    ...(await embedUserEvents(reader, { username: q.username, limit: q.limit, order: q.order, bounds: resolveStartBounds(q) }, clock(), config.siteUrl)),
  }),
});

export const handler = lambdaEntry(build);
