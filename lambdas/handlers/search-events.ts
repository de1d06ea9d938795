import { toPublicEvent } from '../core/event-mapper.js';
import { searchPage } from '../core/search-events.js';
import { resolveSearch, searchEventsParams } from '../core/search-params.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/events?city&country&from&to&limit&cursor (PRODUCT P17) */
export const build = httpRoute({
  params: searchEventsParams,
  run: async (q, { search, cursorKeys, clock, config }) => {
    const page = await searchPage({ search, keyring: cursorKeys }, resolveSearch(q, clock()));
    return { message: 'Events retrieved', data: { events: page.events.map((e) => toPublicEvent(e, config.siteUrl)), pagination: page.pagination } };
  },
});

export const handler = lambdaEntry(build);
