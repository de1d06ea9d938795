import { placeFeed, placeOfFeedQuery, placeWindowRead } from '../core/embed-feeds.js';
import { embedGetPlaceFeedParams } from '../core/route-params.js';
import { embedCalendarRoute } from '../http/embed-route.js';
import { lambdaEntry } from '../http/lambda-entry.js';

/** GET /api/embed/v1/events.ics?city&country (no key, CORS, text/calendar; PRODUCT P17) */
export const build = embedCalendarRoute({
  params: embedGetPlaceFeedParams,
  run: async (q, { search, clock, config }) => {
    const place = placeOfFeedQuery(q);
    return placeFeed(placeWindowRead(search, place), place, clock(), config.siteUrl);
  },
});

export const handler = lambdaEntry(build);
