import { getEventGuestsParams } from '../core/route-params.js';
import { getGuests } from '../core/queries.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/events/{eventId}/guests?status&limit&offset */
export const build = httpRoute({
  params: getEventGuestsParams,
  run: async (q, { reader }) => {
    const { guests, pagination } = await getGuests(reader, q);
    return { message: `Guests of event ${q.eventId} retrieved`, data: guests, pagination };
  },
});

export const handler = lambdaEntry(build);
