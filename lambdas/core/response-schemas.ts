/**
 * The response bodies as zod schemas: the single description of what the API
 * answers. The mappers' TypeScript types are inferred from them (so a field
 * cannot be added to a mapper without appearing here), the OpenAPI documents
 * are generated from them, and the tests parse real responses with them.
 * Objects are strict: a field the schema does not name is a defect.
 *
 * `id` metadata names each reusable schema in the documents' components.
 */
import * as z from 'zod';
import { ISO_STRING_LENGTH } from './dates.js';
import { EVENT_ID_MAX_LENGTH, USERNAME_MAX_LENGTH, USER_ID_MAX_LENGTH } from './ids.js';
import { INT32_MAX } from './params.js';
import { UNPAGINATED_MAX_EVENTS } from './list-bounds.js';
import { SEARCH_CURSOR_MAX_LENGTH } from './search-cursor.js';

/*
 * Bounds (OWASP API4: maxLength, maxItems, int32 with minimum and maximum)
 * are stated wherever the API really has one: ids and usernames by their
 * patterns, datetimes by toISOString(), messages and field names by this
 * code, list lengths by `limit` or the unpaginated lists' cap. The source's
 * own texts (titles, descriptions, names, places, URLs, time zones) have
 * none: the dataset contract leaves their length open, so they are left
 * unbounded here and the ruleset says why (.spectral.yaml).
 */
const dateTime = z.iso.datetime({ offset: true }).max(ISO_STRING_LENGTH);
const uri = z.url();
const verification = z.enum(['verified', 'id_verified']).nullable();
const eventId = z.string().max(EVENT_ID_MAX_LENGTH);
const userId = z.string().max(USER_ID_MAX_LENGTH);
const username = z.string().max(USERNAME_MAX_LENGTH);
/** Every `message` is this code's text, with at most an id or a username in it. */
export const MESSAGE_MAX_LENGTH = 256;
const message = z.string().max(MESSAGE_MAX_LENGTH);
/** A page holds at most `limit` items, and `limit` is at most this. */
export const PAGE_MAX_ITEMS = 100;
const int32 = (min: number, max: number) => z.number().int().min(min).max(max).meta({ format: 'int32' });

export const paginationSchema = z
  .strictObject({
    limit: int32(1, PAGE_MAX_ITEMS),
    offset: int32(0, INT32_MAX),
    total: int32(0, INT32_MAX).meta({ description: 'Items in the whole list; clients stop when offset + limit >= total.' }),
  })
  .meta({ id: 'Pagination', description: 'Offset pagination (PRODUCT P8).' });

export const publicEventSchema = z
  .strictObject({
    id: eventId,
    title: z.string(),
    description: z.string().meta({ description: 'Empty string when the event has none.' }),
    cover: uri.meta({ description: 'The cover image, or the site default.' }),
    location: z.string().meta({ description: "The venue's name; empty string when none." }),
    start_date: dateTime,
    end_date: dateTime.nullable(),
    timezone: z.string().meta({ description: 'IANA time zone of the event.', example: 'America/Chicago' }),
    status: z.literal('published'),
    visibility: z.literal('public'),
    cost: z.number().min(0).nullable(),
    created_at: dateTime,
    creator: z.strictObject({ id: userId, username, image: uri, verification_status: verification }),
    links: z.strictObject({ spotify_url: uri.nullable(), wavlake_url: uri.nullable() }),
    contributions: z.strictObject({
      cashapp: z.string().nullable(),
      venmo: z.string().nullable(),
      paypal: z.string().nullable(),
      btc_lightning: z.string().nullable(),
    }),
  })
  .meta({ id: 'PublicEvent', description: 'A published, public event (Public API).' });

export const guestSchema = z
  .strictObject({
    id: userId,
    username,
    name: z.string().nullable(),
    image: uri.nullable(),
    verification_status: verification,
    rsvp_status: z.enum(['yes', 'maybe', 'no']),
    rsvp_date: dateTime,
  })
  .meta({ id: 'Guest', description: 'A guest with a linked user account; anonymous RSVPs are never listed.' });

export const embedStatusSchema = z.enum(['upcoming', 'ongoing', 'past']);

export const embedEventSchema = z
  .strictObject({
    id: eventId,
    title: z.string(),
    description: z.string().nullable(),
    cover: uri.nullable(),
    start_date: dateTime,
    end_date: dateTime.nullable(),
    timezone: z.string(),
    location: z.strictObject({ name: z.string(), city: z.string().nullable(), country: z.string().nullable() }).nullable(),
    url: uri.meta({ description: 'The event page: {siteUrl}/e/{id}.' }),
    creator: z.strictObject({ username, image: uri.nullable(), verified: z.boolean() }),
    status: embedStatusSchema.meta({
      description:
        'Computed at read time: upcoming before the start, ongoing until the end (no end: until the end of the start day in the event time zone), then past.',
    }),
  })
  .meta({ id: 'EmbedEvent', description: 'The compact event of the Embed API.' });

/** A field name is one of a route's parameter names (or `request`). */
const FIELD_NAME_MAX_LENGTH = 32;
export const fieldErrorSchema = z.strictObject({ field: z.string().max(FIELD_NAME_MAX_LENGTH), message }).meta({ id: 'FieldError' });
/** One field error per failing parameter: no route has more parameters than this. */
export const FIELD_ERRORS_MAX_ITEMS = 8;

export const errorEnvelopeSchema = z
  .strictObject({ success: z.literal(false), message })
  .meta({ id: 'Error', description: 'Every error body (PRODUCT P12).' });

export const validationErrorSchema = z
  .strictObject({
    success: z.literal(false),
    message: message.meta({ description: "The first failure's message." }),
    errors: z.array(fieldErrorSchema).min(1).max(FIELD_ERRORS_MAX_ITEMS),
  })
  .meta({ id: 'ValidationError', description: 'A 400 for bad parameters: every failing parameter by name.' });

/** The success envelope around `data`, with top-level `pagination` on paginated lists (PRODUCT P8). */
export function successEnvelope<D extends z.ZodType>(data: D, paginated = false) {
  const base = { success: z.literal(true), message, data };
  return paginated ? z.strictObject({ ...base, pagination: paginationSchema }) : z.strictObject(base);
}

/** Variant B's `data` of GET /users/{username}/events. */
export const pagedEventsSchema = z.strictObject({ events: z.array(publicEventSchema).max(PAGE_MAX_ITEMS), pagination: paginationSchema }).meta({ id: 'PagedEvents' });

/** `data` of a paginated Public list: one page. */
export const publicEventPage = z.array(publicEventSchema).max(PAGE_MAX_ITEMS);
/** `data` of an unpaginated Public list (the dated variant, profile-events): capped, never cut (lambdas/core/queries.ts). */
export const publicEventWindow = z.array(publicEventSchema).max(UNPAGINATED_MAX_EVENTS);
/** `data` of the guest list: one page. */
export const guestPage = z.array(guestSchema).max(PAGE_MAX_ITEMS);
/** `data` of the Embed user events: at most `limit`. */
export const embedEventList = z.array(embedEventSchema).max(PAGE_MAX_ITEMS);

/** A loose check of the served OpenAPI documents themselves. */
export const openApiDocumentSchema = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string().max(100), version: z.string().max(32) }),
  paths: z.record(z.string(), z.unknown()),
});


/** A changes feed's page (PRODUCT P16): changes in order, the cursor to pass next, whether more is waiting now. */
const removedChange = z.strictObject({ id: z.string().max(80), change: z.literal('removed') }).meta({ id: 'RemovedChange', description: 'The id left the feed (hidden, unpublished or deleted): no reason, no content.' });
function feedPage<C extends z.ZodType>(change: C, id: string) {
  return z.strictObject({ changes: z.array(z.union([change, removedChange])).max(PAGE_MAX_ITEMS), next_cursor: z.string().max(400), has_more: z.boolean() }).meta({ id });
}
export const eventChangesPage = feedPage(z.strictObject({ id: z.string().max(80), change: z.literal('upserted'), event: publicEventSchema }).meta({ id: 'EventUpserted' }), 'EventChanges');
export const guestChangesPage = feedPage(z.strictObject({ id: z.string().max(80), change: z.literal('upserted'), guest: guestSchema }).meta({ id: 'GuestUpserted' }), 'GuestChanges');

/** Discovery's pagination (PRODUCT P17): keyed cursors, no total, no offset. */
export const searchPaginationSchema = z
  .strictObject({
    limit: int32(1, PAGE_MAX_ITEMS),
    has_more: z.boolean().meta({ description: 'More events follow in the window: pass `next_cursor`.' }),
    next_cursor: z.string().max(SEARCH_CURSOR_MAX_LENGTH).optional().meta({ description: 'Present only when `has_more` is true.' }),
  })
  .meta({ id: 'SearchPagination', description: 'Cursor pagination of a search (no total: a count of a place and window is not worth its cost).' });
/** `data` of Public GET /events. */
export const publicSearchPage = z.strictObject({ events: z.array(publicEventSchema).max(PAGE_MAX_ITEMS), pagination: searchPaginationSchema }).meta({ id: 'EventSearchPage' });
/** `data` of Embed GET /events. */
export const embedSearchPage = z.strictObject({ events: z.array(embedEventSchema).max(PAGE_MAX_ITEMS), pagination: searchPaginationSchema }).meta({ id: 'EmbedEventSearchPage' });
