import { resolveStartBounds } from '../core/params.js';
import { getUserEventsDatedParams, getUserEventsTypedParams } from '../core/route-params.js';
import { datedUserEvents, typedUserEvents } from '../core/queries.js';
import type { Deps } from '../http/deps.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { httpRoute } from '../http/route.js';

/** GET /api/public/v1/users/{username}/events, Variant B: typed and paginated (PRODUCT P5). */
const typed = httpRoute({
  params: getUserEventsTypedParams,
  run: async (q, { reader, clock, config }) => ({
    message: `Events of user ${q.username} retrieved`,
    data: await typedUserEvents(reader, { ...q, bounds: resolveStartBounds(q) }, clock(), config.siteUrl),
  }),
});

/** Variant A: every hosted event in the date window, most recently created first. */
const dated = httpRoute({
  params: getUserEventsDatedParams,
  run: async (q, { reader, config }) => ({
    message: `Events of user ${q.username} retrieved`,
    data: await datedUserEvents(reader, { username: q.username, list: 'HOSTED', bounds: resolveStartBounds(q) }, config.siteUrl),
  }),
});

/** The deployment's `userEventsVariant` setting picks the variant. */
export const build = (deps: Deps) => (deps.config.userEventsVariant === 'typed' ? typed : dated)(deps);

export const handler = lambdaEntry(build);
