/**
 * The tools: the spec's two (§1) and discovery's `search-events` (PRODUCT
 * P17), their zod input and output schemas, and the normalisation of API
 * answers. Both variants of GET /users/{username}/events
 * are normalised to `{message, data: Event[]}`, plus `pagination` exactly
 * when the API gave one (the typed variant; the dated variant has none).
 */
import * as z from 'zod';
import { EVENT_ID_PATTERN, USERNAME_PATTERN } from '../lambdas/core/ids.js';
import { localStartWithOffset } from '../lambdas/core/local-time.js';
import type { Outcome } from './public-api.js';

/**
 * A value that goes into a URL path must stay exactly one segment: "." and
 * ".." are dot segments that URL resolution drops or climbs (encoding does not
 * help: %2E%2E is a dot segment too), so they are refused before any request.
 */
export function isDotSegment(value: string): boolean {
  return /^(?:\.|%2e){1,2}$/i.test(value);
}

/** The path segment for a placeholder's value; throws on a value that could not stay one segment. */
export function pathSegment(name: string, value: string): string {
  if (value === '' || isDotSegment(value)) throw new Error(`${name} must not be empty, "." or ".."`);
  return encodeURIComponent(value);
}

export { TOOL_NAMES, type ToolName } from './tool-names.js';

export const listEventsInput = {
  username: z
    .string()
    .regex(USERNAME_PATTERN, { error: 'username must be 1-64 letters, digits, ".", "_" or "-", without "@"' })
    .refine((v) => !isDotSegment(v), { error: 'username must not be "." or ".." (it would not name a user in the URL)' })
    .describe('The username, without "@" (case-insensitive), e.g. "alice"'),
  type: z
    .enum(['upcoming', 'past', 'profile'])
    .optional()
    .describe('upcoming: starting now or later, earliest first; past: already started, latest first; profile: hosted plus attended (yes/maybe). Omit for the events the user hosts.'),
  limit: z.number().int().min(1).max(100).optional().describe('How many events to return, 1-100 (the API defaults to 20)'),
};

export const getEventInput = {
  eventId: z
    .string()
    .regex(EVENT_ID_PATTERN, { error: 'eventId must look like evt_ followed by 1-64 letters, digits, "_" or "-"' })
    .describe('The event id, e.g. "evt_jazz01"'),
};

// Events are passed through as the API gives them; these are the fields an
// assistant relies on, the rest is kept.
const event = z.looseObject({
  id: z.string(),
  title: z.string(),
  start_date: z.string(),
  end_date: z.string().nullable(),
  timezone: z.string(),
  location: z.string(),
  creator: z.looseObject({ username: z.string() }),
});

const pagination = z.object({ limit: z.number(), offset: z.number(), total: z.number() });

/** A calendar date as the API takes it; a day that does not exist (2027-02-30) is refused here too. */
function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return day.toISOString().slice(0, 10) === value;
}

const localDate = (name: string, meaning: string) =>
  z
    .string()
    .refine(isCalendarDate, { error: `${name} must be a date YYYY-MM-DD` })
    .optional()
    .describe(meaning);

/** The API's bound on `city` and `country` (lambdas/core/search-params.ts PLACE_MAX_LENGTH; test/e2e/mcp.test.ts holds them equal). */
export const MCP_PLACE_MAX_LENGTH = 300;
/** The API's bound on a discovery cursor (lambdas/core/search-cursor.ts SEARCH_CURSOR_MAX_LENGTH). */
export const MCP_CURSOR_MAX_LENGTH = 2048;

/** A city or a country: 1-300 characters once trimmed (the API's bound on either). */
const placePart = (name: string, meaning: string) =>
  z
    .string()
    .trim()
    .min(1, { error: `${name} must not be empty` })
    .max(MCP_PLACE_MAX_LENGTH, { error: `${name} must be at most ${MCP_PLACE_MAX_LENGTH} characters` })
    .optional()
    .describe(meaning);

/** At least one of city and country, reported on `city` as the API reports it. */
export const PLACE_REQUIRED = 'Give a city, a country or both';

/**
 * search-events' arguments: the route's query, `cursor` included (a local
 * day can hold more events than one call's 100: an assistant goes on with
 * the answer's `next_cursor`). An object schema rather than a raw shape, so
 * that the "city or country" rule is checked before any request like every
 * other argument rule.
 */
export const searchEventsInput = z
  .object({
    city: placePart('city', 'A city in any script, any case, with or without accents, e.g. "Lisbon", "São Paulo" or "Lodz"'),
    country: placePart('country', 'An ISO 3166-1 code (e.g. "PT" or "PRT"), an English country name or alias (e.g. "Portugal", "UK"), or its name in its own language (e.g. "Deutschland")'),
    from: localDate('from', 'First local start date, YYYY-MM-DD, inclusive (default: today, UTC). Dates are local to each event: "Saturday in Lisbon" is Saturday in Lisbon.'),
    to: localDate('to', 'Last local start date, YYYY-MM-DD, inclusive (default: from + 30 days; at most 92 days after from)'),
    limit: z.number().int().min(1).max(100).optional().describe('How many events to return, 1-100 (the API defaults to 20)'),
    cursor: z
      .string()
      .min(1, { error: 'cursor must not be empty' })
      .max(MCP_CURSOR_MAX_LENGTH, { error: `cursor must be at most ${MCP_CURSOR_MAX_LENGTH} characters` })
      .optional()
      .describe('The next_cursor of the previous answer, with the same city and country (from and to may be left out: the cursor keeps its window). Omit for the first page.'),
  })
  .superRefine((args, ctx) => {
    if (args.city === undefined && args.country === undefined) ctx.addIssue({ code: 'custom', path: ['city'], message: PLACE_REQUIRED });
  });

/** The route's pagination: `next_cursor` while `has_more`. */
const cursorPagination = z.object({ limit: z.number(), has_more: z.boolean(), next_cursor: z.string().optional() });
/** An event as search-events gives it: the API's, and its start on the wall clock of its own zone. */
const foundEvent = event.extend({
  local_start: z.string().describe("The start in the event's own time zone, ISO 8601 with that zone's offset, e.g. 2027-03-06T21:30:00+00:00"),
});
export const searchEventsOutput = { message: z.string(), data: z.array(foundEvent), pagination: cursorPagination };
export type SearchEventsResult = z.infer<z.ZodObject<typeof searchEventsOutput>>;

/** `data = {events, pagination}` as the route answers it, each event with its local start; null for any other shape. */
export function normaliseSearch(body: Extract<Outcome, { ok: true }>['body']): SearchEventsResult | null {
  const data = body.data as { events?: unknown; pagination?: { limit?: unknown; has_more?: unknown; next_cursor?: unknown } } | null;
  if (typeof data !== 'object' || data === null || !Array.isArray(data.events)) return null;
  const { limit, has_more, next_cursor } = data.pagination ?? {};
  if (typeof limit !== 'number' || typeof has_more !== 'boolean' || (next_cursor !== undefined && typeof next_cursor !== 'string')) return null;
  const events = data.events as { start_date?: unknown; timezone?: unknown }[];
  if (!events.every((e) => typeof e?.start_date === 'string' && !Number.isNaN(Date.parse(e.start_date)) && typeof e.timezone === 'string')) return null;
  return {
    message: body.message,
    data: events.map((e) => ({ ...e, local_start: localStartWithOffset(Date.parse(e.start_date as string), e.timezone as string) })) as SearchEventsResult['data'],
    pagination: { limit, has_more, ...(has_more && next_cursor !== undefined ? { next_cursor } : {}) },
  };
}

export const listEventsOutput = { message: z.string(), data: z.array(event), pagination: pagination.optional() };
export const getEventOutput = { message: z.string(), data: event };

export type ListEventsResult = z.infer<z.ZodObject<typeof listEventsOutput>>;

/**
 * Typed variant: data = {events, pagination}; dated variant: data = Event[],
 * the whole list (the API has no paging), cut to `limit` here. Nothing is
 * invented: `pagination` is the API's own, and absent when it gave none.
 * Null when the answer has neither shape.
 */
export function normaliseUserEvents(body: Extract<Outcome, { ok: true }>['body'], limit: number | undefined): ListEventsResult | null {
  const data = body.data as unknown;
  if (Array.isArray(data)) {
    return { message: body.message, data: limit === undefined ? data : data.slice(0, limit) };
  }
  const typed = data as { events?: unknown; pagination?: unknown } | null;
  if (typeof typed !== 'object' || typed === null || !Array.isArray(typed.events)) return null;
  return {
    message: body.message,
    data: typed.events as ListEventsResult['data'],
    ...(typed.pagination !== undefined ? { pagination: typed.pagination as NonNullable<ListEventsResult['pagination']> } : {}),
  };
}

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export function success(payload: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(payload, null, 2) }], structuredContent: payload };
}

export function failure(outcome: Extract<Outcome, { ok: false }>): ToolResult {
  const error = { status: outcome.status, message: outcome.message, details: outcome.details, attempts: outcome.attempts };
  return { content: [{ type: 'text', text: JSON.stringify({ error }, null, 2) }], isError: true };
}
