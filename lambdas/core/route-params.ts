/**
 * Each route's parameter schema (path + query, merged), in one place so that
 * the handler validates with the very object the OpenAPI documents are
 * generated from (lambdas/openapi/operations.ts).
 */
import * as z from 'zod';
import { MESSAGES } from './errors.js';
import { cityParam, countryParam, requireAPlace } from './search-params.js';
import { cursorParam, eventIdParam, eventTypeParam, guestStatusParam, limitParam, offsetParam, orderParam, requiredUsername, startWindowShape, usernameParam } from './params.js';

export const getEventParams = z.object({ eventId: eventIdParam });
export const getEventGuestsParams = z.object({ eventId: eventIdParam, status: guestStatusParam, limit: limitParam(10), offset: offsetParam });
/** Variant B (typed, paginated): its unknown-user answer is a 400 (PRODUCT P5). */
export const getUserEventsTypedParams = z.object({
  username: requiredUsername(MESSAGES.typedUserNotFound),
  type: eventTypeParam,
  limit: limitParam(20),
  offset: offsetParam,
  ...startWindowShape,
});
/** Variant A (dated): every hosted event in the window. */
export const getUserEventsDatedParams = z.object({ username: usernameParam, ...startWindowShape });
export const getUserProfileEventsParams = z.object({ username: usernameParam, ...startWindowShape });
export const getUserTimelineParams = z.object({ username: usernameParam, limit: limitParam(10), offset: offsetParam });
export const embedGetEventParams = z.object({ eventId: eventIdParam });
export const embedGetUserEventsParams = z.object({ username: usernameParam, limit: limitParam(50), order: orderParam, ...startWindowShape });
/** The iCalendar feeds (PRODUCT P15): the window is fixed, no query parameters. */
export const embedGetUserFeedParams = z.object({ username: usernameParam });
export const embedGetEventFeedParams = z.object({ eventId: eventIdParam });
/**
 * A place's calendar (PRODUCT P17): the place as discovery takes it, the
 * window fixed (any other parameter, a `from` say, is ignored like every
 * unknown one: PRODUCT P6).
 */
export const embedGetPlaceFeedParams = z.object({ city: cityParam, country: countryParam }).superRefine(requireAPlace, { when: () => true });
/** The OpenAPI documents take no parameters. */
export const noParams = z.object({});

/** The changes feeds (PRODUCT P16): `cursor` and `limit`; unknown query parameters are ignored, as on every route (PRODUCT P6). */
export const getEventChangesParams = z.object({ cursor: cursorParam, limit: limitParam(100) });
export const getUserEventChangesParams = z.object({ username: usernameParam, cursor: cursorParam, limit: limitParam(100) });
export const getEventGuestChangesParams = z.object({ eventId: eventIdParam, cursor: cursorParam, limit: limitParam(100) });
/** A place's feed (PRODUCT P17): `city`, `country` or both, checked as discovery checks them. */
export const getPlaceEventChangesParams = z.object({ city: cityParam, country: countryParam, cursor: cursorParam, limit: limitParam(100) }).superRefine(requireAPlace, { when: () => true });
