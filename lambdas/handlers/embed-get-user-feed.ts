import * as z from 'zod';
import { userFeed } from '../core/embed-feeds.js';
import { usernameParam } from '../core/params.js';
import { embedCalendarRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';

/** GET /api/embed/v1/users/{username}/events.ics (no key, CORS, text/calendar) */
export const build = embedCalendarRoute({
  params: z.object({ username: usernameParam }),
  run: async ({ username }, { reader, clock, config }) => userFeed(reader, username, clock(), config.siteUrl),
});

export const handler = lambdaEntry(build);
