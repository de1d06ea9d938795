import { resolveStartBounds } from '../core/params.js';
import { getUserProfileEventsParams } from '../core/route-params.js';
import { datedUserEvents } from '../core/queries.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/users/{username}/profile-events?since|from&to */
export const build = httpRoute({
  params: getUserProfileEventsParams,
  run: async (q, { reader, config }) => ({
    message: `Profile events of user ${q.username} retrieved`,
    data: await datedUserEvents(reader, { username: q.username, list: 'PROFILE', bounds: resolveStartBounds(q) }, config.siteUrl),
  }),
});

export const handler = lambdaEntry(build);
