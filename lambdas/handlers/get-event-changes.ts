import { getEventChangesParams } from '../core/route-params.js';
import { catalogueChanges } from '../core/feeds.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/changes/events?cursor&limit (PRODUCT P16) */
export const build = httpRoute({
  params: getEventChangesParams,
  run: async (q, { feeds, clock, config }) => ({ message: 'Event changes retrieved', data: await catalogueChanges(feeds, q, clock(), config.siteUrl) }),
});

export const handler = lambdaEntry(build);
