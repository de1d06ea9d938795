import { getUserEventChangesParams } from '../core/route-params.js';
import { hostChanges } from '../core/feeds.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/changes/users/{username}/events?cursor&limit (PRODUCT P16) */
export const build = httpRoute({
  params: getUserEventChangesParams,
  run: async (q, { feeds, cursorKeys, clock, config }) => ({
    message: `Event changes of user ${q.username} retrieved`,
    data: await hostChanges({ feeds, keyring: cursorKeys, now: clock() }, { ...q, variant: config.userEventsVariant }, config.siteUrl),
  }),
});

export const handler = lambdaEntry(build);
