import { embedSearchEvents } from '../core/embed-queries.js';
import { resolveSearch, searchEventsParams } from '../core/search-params.js';
import { embedRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';

/** GET /api/embed/v1/events?city&country&from&to&limit&cursor (no key, CORS; PRODUCT P17) */
export const build = embedRoute({
  params: searchEventsParams,
  run: async (q, { search, cursorKeys, clock, config }) => {
    const now = clock();
    return { message: 'Events retrieved', ...(await embedSearchEvents({ search, keyring: cursorKeys }, resolveSearch(q, now), now, config.siteUrl)) };
  },
});

export const handler = lambdaEntry(build);
