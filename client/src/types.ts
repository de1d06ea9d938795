/**
 * Names for the shapes of both APIs, all taken from the types generated from
 * the OpenAPI documents (src/generated/), so they follow the API exactly.
 */
import type { components as PublicComponents, operations as PublicOperations } from './generated/public.js';
import type { components as EmbedComponents, operations as EmbedOperations } from './generated/embed.js';

export type PublicEvent = PublicComponents['schemas']['PublicEvent'];
export type Guest = PublicComponents['schemas']['Guest'];
/** A change of a changes feed: an upsert with the object as its read route shows it now, or a bare removal. */
export type EventChange = PublicComponents['schemas']['EventUpserted'] | PublicComponents['schemas']['RemovedChange'];
export type GuestChange = PublicComponents['schemas']['GuestUpserted'] | PublicComponents['schemas']['RemovedChange'];
/**
 * Where a feed starts (`cursor`: a saved `next_cursor`; absent or undefined:
 * the current contents) and its page size. Every optional parameter and option
 * of the client takes `undefined` as absent, so a `string | undefined` (a
 * saved cursor, `feed.cursor`, `process.env.X`) passes under
 * `exactOptionalPropertyTypes` too.
 */
export interface ChangeFeedParams {
  cursor?: string | undefined;
  limit?: number | undefined;
}
export type EmbedEvent = EmbedComponents['schemas']['EmbedEvent'];
export type { FieldError } from './errors.js';
export type { Pagination, Page } from './paged-list.js';
export type { CursorPagination, CursorPage } from './cursor-list.js';

/** Every parameter optional, `undefined` taken as absent (the generated types say `limit?: number`). */
type UndefinedAsAbsent<T> = { [K in keyof T]?: T[K] | undefined };

/** The query parameters of a Public API operation, `limit` and `offset` left to the list. */
type PublicQuery<Op extends keyof PublicOperations> = UndefinedAsAbsent<NonNullable<PublicOperations[Op]['parameters']['query']>>;
type EmbedQuery<Op extends keyof EmbedOperations> = UndefinedAsAbsent<NonNullable<EmbedOperations[Op]['parameters']['query']>>;

/** `limit` is the page size the list reads with; `offset` where it starts. */
export type UserEventsParams = PublicQuery<'getUserEvents'>;
export type UserProfileEventsParams = PublicQuery<'getUserProfileEvents'>;
export type UserUpcomingEventsParams = PublicQuery<'getUserUpcomingEvents'>;
export type UserPastEventsParams = PublicQuery<'getUserPastEvents'>;
export type EventGuestsParams = PublicQuery<'getEventGuests'>;
export type EmbedUserEventsParams = EmbedQuery<'embedGetUserEvents'>;
/**
 * Discovery (`searchEvents`): `city`, `country` or both (the API answers 400
 * naming `city` without either), `from`/`to` (YYYY-MM-DD, local start
 * dates), `limit` (the page size) and `cursor` (a saved `next_cursor`).
 */
export type SearchEventsParams = PublicQuery<'searchEvents'>;
export type EmbedSearchEventsParams = EmbedQuery<'embedSearchEvents'>;
/** A place's calendar (`placeFeed`): `city`, `country` or both. */
export type EmbedPlaceFeedParams = EmbedQuery<'embedGetPlaceFeed'>;
/** A place's changes feed (`followPlace`): `city`, `country` or both, and where the feed starts (`cursor`, `limit` as ChangeFeedParams). */
export type FollowPlaceParams = PublicQuery<'getPlaceEventChanges'>;

/** The OpenAPI document each surface serves about itself. */
export type PublicOpenApiDocument = PublicOperations['publicOpenApi']['responses'][200]['content']['application/json'];
export type EmbedOpenApiDocument = EmbedOperations['embedOpenApi']['responses'][200]['content']['application/json'];

/** The success data of each operation, to check the client's results against the documents. */
export type PublicData<Op extends Exclude<keyof PublicOperations, 'publicOpenApi'>> = PublicOperations[Op]['responses'][200]['content']['application/json']['data'];
