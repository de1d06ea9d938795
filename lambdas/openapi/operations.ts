/**
 * The OpenAPI description of every route of lambdas/routes.ts: what it is for,
 * its parameter schema (the same object its handler validates with), its
 * success body (schema, media type, example) and the statuses its handler
 * answers. The type below makes an entry mandatory for every route id, so a
 * route added to the table without one fails `npm run typecheck`, and
 * test/unit/openapi.test.ts fails if the generated documents miss it.
 *
 * Statuses the gateway adds are not listed here: document.ts adds 401, 403 and
 * 429 to every `auth: 'key'` route, CORS headers and 304 to the Embed API's
 * cacheable routes, 503 to every route that reads the table (a throttle
 * that lasted), and 500 everywhere.
 */
import * as z from 'zod';
import type { UserEventsVariant } from '../core/config.js';
import { UNPAGINATED_MAX_BYTES, UNPAGINATED_MAX_EVENTS } from '../core/list-bounds.js';
import {
  embedEventList,
  embedSearchPage,
  publicSearchPage,
  eventChangesPage,
  guestChangesPage,
  embedEventSchema,
  guestPage,
  openApiDocumentSchema,
  pagedEventsSchema,
  publicEventPage,
  publicEventSchema,
  publicEventWindow,
  successEnvelope,
} from '../core/response-schemas.js';
import {
  embedGetEventFeedParams,
  embedGetPlaceFeedParams,
  embedGetEventParams,
  embedGetUserEventsParams,
  embedGetUserFeedParams,
  getEventGuestChangesParams,
  getEventChangesParams,
  getEventGuestsParams,
  getUserEventChangesParams,
  getPlaceEventChangesParams,
  getEventParams,
  getUserEventsDatedParams,
  getUserEventsTypedParams,
  getUserProfileEventsParams,
  getUserTimelineParams,
  noParams,
} from '../core/route-params.js';
import { searchEventsParams, SEARCH_DEFAULT_DAYS, SEARCH_WINDOW_MAX_DAYS } from '../core/search-params.js';
import type { RouteId } from '../routes.js';
import { PLACE_FEED_PAST_DAYS } from '../core/embed-feeds.js';
import type { ExampleName } from './examples.generated.js';

export interface OperationContext {
  userEventsVariant: UserEventsVariant;
}

export interface OperationDoc {
  summary: string;
  description: string;
  tag: 'Events' | 'Guests' | 'Users' | 'Documents';
  /** Path + query parameters; path parameters are the ones named in the route's path. */
  params: z.ZodObject;
  success: {
    description: string;
    /**
     * The 200 body's media type. JSON bodies are described (and checked in the
     * end-to-end tests) by `schema`; any other type (e.g. `text/calendar`) is
     * described as a string of that type.
     */
    mediaType: 'application/json' | 'text/calendar';
    schema: z.ZodType;
    /** Generated from the demo data (lambdas/openapi/examples.generated.ts). */
    example?: ExampleName;
  };
  /** Errors the handler itself answers, each with its examples. */
  errors: Partial<Record<400 | 404 | 410, readonly ExampleName[]>>;
  /** The Embed API's ETag / If-None-Match → 304 (lambdas/http/conditional-get.ts). */
  conditional?: boolean;
  /** A 308 the handler answers for some paths matching the route's template (its `Location` relative). */
  redirect?: { description: string };
}

const json = 'application/json' as const;
const calendar = 'text/calendar' as const;
const calendarFormat =
  'RFC 5545 (`text/calendar; charset=utf-8`, CRLF lines, folded at 75 octets): one VEVENT per event with a stable `UID` (`{id}@{site host}`), `CREATED` (the event\'s creation), `SEQUENCE` (how many times what a calendar shows of the event changed: title, description, location, start, end; 0 before any, never decreasing), `LAST-MODIFIED` and `DTSTAMP` (when the last such change was applied; the creation before any), `DTSTART`/`DTEND` in UTC (an event without an end lasts to the end of its local day), `SUMMARY`, `DESCRIPTION`, `LOCATION`, `URL`. Errors are JSON envelopes like every other route\'s.';
const dateWindow = 'Filter with `since` (alias `from`) and `to`, inclusive bounds on the start date.';
/** The bound of the unpaginated lists (lambdas/core/queries.ts), so the answer stays under Lambda's 6 MB. */
const unpaginatedBound = `A window holding more than ${UNPAGINATED_MAX_EVENTS} events (or more than ${UNPAGINATED_MAX_BYTES / 1_000_000} MB of them) answers 400 asking for a narrower one, never a cut list.`;

const feedDescription = (scope: string) =>
  `What changed in ${scope} since \`cursor\`, in order: \`{id, change: "upserted", …}\` with the object as its read route shows it now, or \`{id, change: "removed"}\` (hidden, unpublished or deleted; no content). Without a cursor the first answer holds no changes yet, only the cursor of a start and \`has_more: true\`; the next pages give the current contents, each once, as upserts, then what changed since. Pass \`next_cursor\` next; \`has_more: false\` means up to date for now (poll later with it); a page may hold fewer than \`limit\` changes (at most 5 MB of answer). Cursors are signed: an edited one, or one of another feed, answers 400. A consumer more than 30 days behind (its cursor last up to date more than 30 days ago) answers 410: start again without one.`;

const searchDescription = (objects: string) =>
  `Discovery: the public events at a place whose start date, in each event's own time zone, is from \`from\` to \`to\` (inclusive; default today's UTC date and ${SEARCH_DEFAULT_DAYS} days on; at most ${SEARCH_WINDOW_MAX_DAYS} days), ordered by local start date-time then id, as ${objects}. Give \`city\`, \`country\` or both: a city matches whatever its case, accents and spacing; a country is an ISO 3166-1 alpha-2 code or its English name. Pages follow \`pagination.next_cursor\` (present while \`has_more\`); a cursor is signed and bound to its query: an edited one, or one of another city, country or window, answers 400 naming \`cursor\`. No total, no offset. A page may hold fewer than \`limit\` events when one has just moved or been hidden.`;

const openApiOperation = (surface: string): OperationDoc => ({
  summary: `This document`,
  description: `The ${surface} API's OpenAPI 3.1 document, generated from the same zod schemas that validate requests and shape responses. No key needed, not counted against any quota, not wrapped in the envelope.`,
  tag: 'Documents',
  params: noParams,
  success: { description: 'The OpenAPI 3.1 document.', mediaType: json, schema: openApiDocumentSchema },
  errors: {},
});

export const OPERATIONS: { readonly [K in RouteId]: (ctx: OperationContext) => OperationDoc } = {
  getEvent: () => ({
    summary: 'Get an event',
    description: 'A published, public event by id. Private, unlisted, draft and cancelled events answer 404, as unknown ids do.',
    tag: 'Events',
    params: getEventParams,
    success: { description: 'The event.', mediaType: json, schema: successEnvelope(publicEventSchema), example: 'getEvent' },
    errors: { 400: ['invalidEventId'], 404: ['notFound'] },
  }),
  getEventGuests: () => ({
    summary: "List an event's guests",
    description:
      'Guests with a linked user account, of one RSVP status (default `yes`) or `all`, in RSVP order. Anonymous RSVPs and contact details are never returned. Needs the `guests:read` scope.',
    tag: 'Guests',
    params: getEventGuestsParams,
    success: { description: 'A page of guests.', mediaType: json, schema: successEnvelope(guestPage, true), example: 'getEventGuests' },
    errors: { 400: ['validationError'], 404: ['notFound'] },
  }),
  getUserEvents: ({ userEventsVariant }) =>
    userEventsVariant === 'typed'
      ? {
          summary: "List a user's events",
          description: `This deployment serves the typed variant: \`type\` picks the list, paginated with \`limit\`/\`offset\`; \`data\` is \`{events, pagination}\`. ${dateWindow} An unknown user answers 400 \`Username missing or user not found\`.`,
          tag: 'Users',
          params: getUserEventsTypedParams,
          success: { description: 'A page of events.', mediaType: json, schema: successEnvelope(pagedEventsSchema), example: 'getUserEventsTyped' },
          errors: { 400: ['validationError', 'typedUserNotFound'] },
        }
      : {
          summary: "List a user's events",
          description: `This deployment serves the dated variant: every event the user hosts in the window, most recently created first. ${dateWindow} ${unpaginatedBound}`,
          tag: 'Users',
          params: getUserEventsDatedParams,
          success: { description: 'The events.', mediaType: json, schema: successEnvelope(publicEventWindow), example: 'getUserEventsDated' },
          errors: { 400: ['validationError', 'windowTooLarge'], 404: ['userNotFound'] },
        },
  getUserProfileEvents: () => ({
    summary: "List a user's profile events",
    description: `Events the user hosts or has RSVPed yes/maybe to, most recently created first. ${dateWindow} ${unpaginatedBound}`,
    tag: 'Users',
    params: getUserProfileEventsParams,
    success: { description: 'The events.', mediaType: json, schema: successEnvelope(publicEventWindow), example: 'getUserProfileEvents' },
    errors: { 400: ['validationError', 'windowTooLarge'], 404: ['userNotFound'] },
  }),
  getUserUpcomingEvents: () => ({
    summary: "List a user's upcoming events",
    description: 'Events the user hosts that start now or later, earliest first, paginated.',
    tag: 'Users',
    params: getUserTimelineParams,
    success: { description: 'A page of events.', mediaType: json, schema: successEnvelope(publicEventPage, true), example: 'getUserUpcomingEvents' },
    errors: { 400: ['validationError'], 404: ['userNotFound'] },
  }),
  getUserPastEvents: () => ({
    summary: "List a user's past events",
    description: 'Events the user hosts that started before now, latest first, paginated.',
    tag: 'Users',
    params: getUserTimelineParams,
    success: { description: 'A page of events.', mediaType: json, schema: successEnvelope(publicEventPage, true), example: 'getUserPastEvents' },
    errors: { 400: ['validationError'], 404: ['userNotFound'] },
  }),
  getEventChanges: () => ({
    summary: 'Follow changes to the catalogue',
    description: `${feedDescription('every public, published event')}`,
    tag: 'Events',
    params: getEventChangesParams,
    success: { description: 'A page of changes.', mediaType: json, schema: successEnvelope(eventChangesPage) },
    errors: { 400: ['validationError'], 410: ['cursorExpired'] },
  }),
  getUserEventChanges: ({ userEventsVariant }) => ({
    summary: "Follow changes to a user's events",
    description: `${feedDescription('the public events the user hosts')} The feed follows the user, not the name: after a rename a cursor keeps working under the new name.`,
    tag: 'Users',
    params: getUserEventChangesParams,
    success: { description: 'A page of changes.', mediaType: json, schema: successEnvelope(eventChangesPage) },
    errors: userEventsVariant === 'typed' ? { 400: ['validationError', 'typedUserNotFound'], 410: ['cursorExpired'] } : { 400: ['validationError'], 404: ['userNotFound'], 410: ['cursorExpired'] },
  }),
  getPlaceEventChanges: () => ({
    summary: "Follow changes to a place's events",
    description: `${feedDescription('the public events of a place, past ones included')} Give \`city\`, \`country\` or both, matched as \`GET /events\` matches them: a city whatever its case, accents and spacing, a country by its ISO 3166-1 alpha-2 code or English name. An event enters when it becomes public there and is \`removed\` when it moves away, goes private, is unpublished or deleted. A cursor of another place answers 400.`,
    tag: 'Events',
    params: getPlaceEventChangesParams,
    success: { description: 'A page of changes.', mediaType: json, schema: successEnvelope(eventChangesPage), example: 'getPlaceEventChanges' },
    errors: { 400: ['validationError', 'placeMissing'], 410: ['cursorExpired'] },
  }),
  getEventGuestChanges: () => ({
    summary: "Follow changes to an event's guests",
    description: `${feedDescription("the event's guests with a linked user account")} Needs the \`guests:read\` scope; 404 while the event is not public.`,
    tag: 'Guests',
    params: getEventGuestChangesParams,
    success: { description: 'A page of changes.', mediaType: json, schema: successEnvelope(guestChangesPage) },
    errors: { 400: ['validationError'], 404: ['notFound'], 410: ['cursorExpired'] },
  }),
  searchEvents: () => ({
    summary: 'Find events by place and date',
    description: searchDescription('Public Events'),
    tag: 'Events',
    params: searchEventsParams,
    success: { description: 'A page of events.', mediaType: json, schema: successEnvelope(publicSearchPage), example: 'searchEvents' },
    errors: { 400: ['searchValidationError', 'searchNoPlace'] },
  }),
  publicOpenApi: () => openApiOperation('Public'),
  embedGetEvent: () => ({
    summary: 'Get an event (compact)',
    description: 'A published, public event as the compact Embed Event, with its status computed at read time.',
    tag: 'Events',
    params: embedGetEventParams,
    success: { description: 'The event.', mediaType: json, schema: successEnvelope(embedEventSchema), example: 'embedGetEvent' },
    errors: { 400: ['invalidEventId'], 404: ['notFound'] },
    conditional: true,
    redirect: {
      description:
        '`/events/{eventId}.ics` (an event id followed by `.ics`) is redirected permanently to the event\'s calendar, `Location: {eventId}/event.ics` (relative), whether or not the event is public; the feed then answers 200 or 404.',
    },
  }),
  embedGetUserEvents: () => ({
    summary: "List a user's events (compact)",
    description: `The user's own public events, earliest start first (\`order=desc\`: latest first), at most \`limit\`. ${dateWindow}`,
    tag: 'Users',
    params: embedGetUserEventsParams,
    success: { description: 'The events.', mediaType: json, schema: successEnvelope(embedEventList), example: 'embedGetUserEvents' },
    errors: { 400: ['validationError'], 404: ['userNotFound'] },
    conditional: true,
  }),
  embedGetUserFeed: () => ({
    summary: "A user's calendar feed",
    description: `The user's own public events as an iCalendar feed to subscribe to: every upcoming one (earliest first, at most 100) and those that started within the last 90 days (at most 50), listed by start. ${calendarFormat}`,
    tag: 'Users',
    params: embedGetUserFeedParams,
    success: { description: 'The iCalendar feed.', mediaType: calendar, schema: z.string(), example: 'embedGetUserFeed' },
    errors: { 400: ['invalidUsername'], 404: ['userNotFound'] },
    conditional: true,
  }),
  embedGetEventFeed: () => ({
    summary: "An event's calendar",
    description: `One published, public event as an iCalendar file ("Add to calendar"). Also reachable as \`/events/{eventId}.ics\` by a 308. ${calendarFormat}`,
    tag: 'Events',
    params: embedGetEventFeedParams,
    success: { description: 'The iCalendar file.', mediaType: calendar, schema: z.string(), example: 'embedGetEventFeed' },
    errors: { 400: ['invalidEventId'], 404: ['notFound'] },
    conditional: true,
  }),
  embedGetPlaceFeed: () => ({
    summary: "A place's calendar feed",
    description: `A place's public events as an iCalendar feed to subscribe to: \`city\`, \`country\` or both, matched as \`GET /events\` matches them (and refused as it refuses them). It holds the events \`GET /events\` lists by default, by local start date from today (UTC) to 30 days on (the earliest 100), and those of the ${PLACE_FEED_PAST_DAYS} days before today (at most 50; a place with more in that week keeps yesterday's). No other parameter: the window is the feed's. ${calendarFormat}`,
    tag: 'Events',
    params: embedGetPlaceFeedParams,
    success: { description: 'The iCalendar feed.', mediaType: calendar, schema: z.string(), example: 'embedGetPlaceFeed' },
    errors: { 400: ['placeFeedNoPlace'] },
    conditional: true,
  }),
  embedSearchEvents: () => ({
    summary: 'Find events by place and date (compact)',
    description: searchDescription('Embed Events'),
    tag: 'Events',
    params: searchEventsParams,
    success: { description: 'A page of events.', mediaType: json, schema: successEnvelope(embedSearchPage), example: 'embedSearchEvents' },
    errors: { 400: ['searchValidationError', 'searchNoPlace'] },
    conditional: true,
  }),
  embedOpenApi: () => openApiOperation('Embed'),
};
