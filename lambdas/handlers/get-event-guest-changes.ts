import { getEventGuestChangesParams } from '../core/route-params.js';
import { guestChanges } from '../core/feeds.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/changes/events/{eventId}/guests?cursor&limit (PRODUCT P16) */
export const build = httpRoute({
  params: getEventGuestChangesParams,
  run: async (q, { feeds, cursorKeys, reader, clock }) => ({ message: `Guest changes of event ${q.eventId} retrieved`, data: await guestChanges({ feeds, keyring: cursorKeys, now: clock() }, reader, q) }),
});

export const handler = lambdaEntry(build);
