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

const dateTime = z.iso.datetime({ offset: true });
const uri = z.url();
const verification = z.enum(['verified', 'id_verified']).nullable();

export const paginationSchema = z
  .strictObject({
    limit: z.number().int().min(1).max(100),
    offset: z.number().int().min(0),
    total: z.number().int().min(0).meta({ description: 'Items in the whole list; clients stop when offset + limit >= total.' }),
  })
  .meta({ id: 'Pagination', description: 'Offset pagination (PRODUCT P8).' });

export const publicEventSchema = z
  .strictObject({
    id: z.string(),
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
    creator: z.strictObject({ id: z.string(), username: z.string(), image: uri, verification_status: verification }),
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
    id: z.string(),
    username: z.string(),
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
    id: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    cover: uri.nullable(),
    start_date: dateTime,
    end_date: dateTime.nullable(),
    timezone: z.string(),
    location: z.strictObject({ name: z.string(), city: z.string().nullable(), country: z.string().nullable() }).nullable(),
    url: uri.meta({ description: 'The event page: {siteUrl}/e/{id}.' }),
    creator: z.strictObject({ username: z.string(), image: uri.nullable(), verified: z.boolean() }),
    status: embedStatusSchema.meta({
      description:
        'Computed at read time: upcoming before the start, ongoing until the end (no end: until the end of the start day in the event time zone), then past.',
    }),
  })
  .meta({ id: 'EmbedEvent', description: 'The compact event of the Embed API.' });

export const fieldErrorSchema = z.strictObject({ field: z.string(), message: z.string() }).meta({ id: 'FieldError' });

export const errorEnvelopeSchema = z
  .strictObject({ success: z.literal(false), message: z.string() })
  .meta({ id: 'Error', description: 'Every error body (PRODUCT P12).' });

export const validationErrorSchema = z
  .strictObject({ success: z.literal(false), message: z.string().meta({ description: "The first failure's message." }), errors: z.array(fieldErrorSchema).min(1) })
  .meta({ id: 'ValidationError', description: 'A 400 for bad parameters: every failing parameter by name.' });

/** The success envelope around `data`, with top-level `pagination` on paginated lists (PRODUCT P8). */
export function successEnvelope<D extends z.ZodType>(data: D, paginated = false) {
  const base = { success: z.literal(true), message: z.string(), data };
  return paginated ? z.strictObject({ ...base, pagination: paginationSchema }) : z.strictObject(base);
}

/** Variant B's `data` of GET /users/{username}/events. */
export const pagedEventsSchema = z.strictObject({ events: z.array(publicEventSchema), pagination: paginationSchema }).meta({ id: 'PagedEvents' });

/** A loose check of the served OpenAPI documents themselves. */
export const openApiDocumentSchema = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

