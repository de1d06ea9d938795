import * as z from 'zod';
import { eventFeed } from '../core/embed-feeds.js';
import { eventIdParam } from '../core/params.js';
import { embedCalendarRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';

/** GET /api/embed/v1/events/{eventId}/event.ics (no key, CORS, text/calendar) */
export const build = embedCalendarRoute({
  params: z.object({ eventId: eventIdParam }),
  run: async ({ eventId }, { reader, config }) => eventFeed(reader, eventId, config.siteUrl),
});

export const handler = lambdaEntry(build);
