import { getPlaceEventChangesParams } from '../core/route-params.js';
import { placeChanges } from '../core/feeds.js';
import { placeFrom } from '../core/search-params.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/changes/places/events?city&country&cursor&limit (PRODUCT P17, a place's feed) */
export const build = httpRoute({
  params: getPlaceEventChangesParams,
  run: async (q, { feeds, cursorKeys, clock, config }) => ({
    message: 'Place event changes retrieved',
    data: await placeChanges({ feeds, keyring: cursorKeys, now: clock() }, { ...q, place: placeFrom(q) }, config.siteUrl),
  }),
});

export const handler = lambdaEntry(build);
