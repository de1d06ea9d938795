import { userFeed } from '../core/embed-feeds.js';
import { embedGetUserFeedParams } from '../core/route-params.js';
import { embedCalendarRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';

/** GET /api/embed/v1/users/{username}/events.ics (no key, CORS, text/calendar) */
export const build = embedCalendarRoute({
  params: embedGetUserFeedParams,
  run: async ({ username }, { reader, clock, config }) => userFeed(reader, username, clock(), config.siteUrl),
});

export const handler = lambdaEntry(build);
