import { getUserTimelineParams } from '../core/route-params.js';
import { timelineEvents } from '../core/queries.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/users/{username}/past-events?limit&offset */
export const build = httpRoute({
  params: getUserTimelineParams,
  run: async (q, { reader, clock, config }) => {
    const { events, pagination } = await timelineEvents(reader, 'past', q, clock(), config.siteUrl);
    return { message: `Past events of user ${q.username} retrieved`, data: events, pagination };
  },
});

export const handler = lambdaEntry(build);
