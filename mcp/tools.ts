/**
 * The two tools (spec §1): their zod input and output schemas, and the
 * normalisation of API answers. Both variants of GET /users/{username}/events
 * are normalised to `{message, data: Event[]}`, plus `pagination` exactly
 * when the API gave one (the typed variant; the dated variant has none).
 */
import * as z from 'zod';
import { EVENT_ID_PATTERN, USERNAME_PATTERN } from '../lambdas/core/ids.js';
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
