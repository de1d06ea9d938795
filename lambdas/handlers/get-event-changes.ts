import { getEventChangesParams } from '../core/route-params.js';
import { catalogueChanges } from '../core/feeds.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/changes/events?cursor&limit (PRODUCT P16) */
export const build = httpRoute({
  params: getEventChangesParams,
  run: async (q, { feeds, cursorKeys, clock, config }) => ({ message: 'Event changes retrieved', data: await catalogueChanges({ feeds, keyring: cursorKeys, now: clock() }, q, config.siteUrl) }),
});

export const handler = lambdaEntry(build);
