import { eventFeed } from '../core/embed-feeds.js';
import { embedGetEventFeedParams } from '../core/route-params.js';
import { embedCalendarRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';

/** GET /api/embed/v1/events/{eventId}/event.ics (no key, CORS, text/calendar) */
export const build = embedCalendarRoute({
  params: embedGetEventFeedParams,
  run: async ({ eventId }, { reader, config }) => eventFeed(reader, eventId, config.siteUrl),
});

export const handler = lambdaEntry(build);
