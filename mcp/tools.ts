/**
 * The two tools (spec §1): their zod input and output schemas, and the
 * normalisation of API answers. Both variants of GET /users/{username}/events
 * are normalised to one shape: `{message, data: Event[], pagination}`.
 */
import * as z from 'zod';
import { EVENT_ID_PATTERN, USERNAME_PATTERN } from '../lambdas/core/ids.js';
import type { Outcome } from './public-api-client.js';

export const listEventsInput = {
  username: z
    .string()
    .regex(USERNAME_PATTERN, { error: 'username must be 1-64 letters, digits, ".", "_" or "-", without "@"' })
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

export const listEventsOutput = { message: z.string(), data: z.array(event), pagination };
export const getEventOutput = { message: z.string(), data: event };

export type ListEventsResult = z.infer<z.ZodObject<typeof listEventsOutput>>;

/** Typed variant: data = {events, pagination}; dated variant: data = Event[] (no pagination). */
export function normaliseUserEvents(body: Extract<Outcome, { ok: true }>['body'], limit: number | undefined): ListEventsResult {
  const data = body.data as unknown;
  if (Array.isArray(data)) {
    const events = limit === undefined ? data : data.slice(0, limit);
    return { message: body.message, data: events, pagination: { limit: events.length, offset: 0, total: data.length } };
  }
  const typed = data as { events: ListEventsResult['data']; pagination: ListEventsResult['pagination'] };
  return { message: body.message, data: typed.events, pagination: typed.pagination };
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
