/**
 * Request parameter schemas (PRODUCT P5, P6). Each route validates the merged
 * path + query parameters with one zod schema; every failure is reported as
 * `{field, message}` and the envelope's message is the first one's text.
 * Nothing reaches DynamoDB before it has passed through here.
 */
import * as z from 'zod';
import { DATE_BOUND_MAX_LENGTH, parseDateBound, type DateBound } from './dates.js';
import { MESSAGES, ValidationError, type FieldError } from './errors.js';
import { CURSOR_INVALID, CURSOR_MAX_LENGTH, parseCursor, type SealedCursor } from './feed-cursor.js';
import { EVENT_ID_MAX_LENGTH, EVENT_ID_PATTERN, USERNAME_MAX_LENGTH, USERNAME_PATTERN } from './ids.js';

type Raw = Record<string, string | undefined>;


export const GUEST_STATUSES = ['yes', 'maybe', 'no', 'all'] as const;
export type GuestStatusFilter = (typeof GUEST_STATUSES)[number];
export const EVENT_TYPES = ['upcoming', 'past', 'profile'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

function required(requiredMessage: string, pattern: RegExp, maxLength: number, invalidMessage: string) {
  return z.string().optional().transform((value, ctx): string => {
    if (value === undefined || value.trim() === '') {
      ctx.addIssue({ code: 'custom', message: requiredMessage });
      return z.NEVER;
    }
    // The length first: a value of any size is refused with the same 400 without being scanned.
    if (value.length > maxLength || !pattern.test(value)) {
      ctx.addIssue({ code: 'custom', message: invalidMessage });
      return z.NEVER;
    }
    return value;
  });
}

/*
 * Every parameter schema carries its wire contract as zod metadata (`.meta`):
 * the schemas parse strings (path and query values are strings), so the
 * metadata states what the OpenAPI documents show (type, bounds, default,
 * enum). lambdas/openapi/ reads it; the handlers never do.
 */
export const eventIdParam = required(
  MESSAGES.eventIdRequired,
  EVENT_ID_PATTERN,
  EVENT_ID_MAX_LENGTH,
  'Invalid event id: expected evt_ followed by 1-64 letters, digits, "_" or "-"',
).meta({ type: 'string', pattern: EVENT_ID_PATTERN.source, maxLength: EVENT_ID_MAX_LENGTH, description: 'The event id.', example: 'evt_jazz01' });
/** A username path parameter; Variant B words the missing case differently. */
export const requiredUsername = (missingMessage: string) =>
  required(missingMessage, USERNAME_PATTERN, USERNAME_MAX_LENGTH, 'Invalid username: expected 1-64 letters, digits, ".", "_" or "-" (no "@" prefix)').meta({
    type: 'string',
    pattern: USERNAME_PATTERN.source,
    maxLength: USERNAME_MAX_LENGTH,
    description: 'The username, without "@"; matched ignoring case.',
    example: 'alice',
  });
export const usernameParam = requiredUsername(MESSAGES.usernameRequired);

/** The largest `int32`: pagination integers are int32 on the wire (no list comes near it). */
export const INT32_MAX = 2_147_483_647;

/**
 * A decimal integer from `min` to `max`. `messages.range` answers an integer
 * out of range (the spec's text for `limit`), `messages.notInteger` anything
 * that is not one (`abc`, `1.5`, `1e2`, an empty value).
 */
function integerParam(fallback: number, min: number, max: number, messages: { range: string; notInteger: string }) {
  return z.string().optional().transform((value, ctx): number => {
    if (value === undefined) return fallback;
    if (!/^-?\d+$/.test(value)) {
      ctx.addIssue({ code: 'custom', message: messages.notInteger });
      return z.NEVER;
    }
    // More than 10 digits (INT32_MAX's) is out of range without converting it.
    const n = /^-?\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: messages.range });
      return z.NEVER;
    }
    return n;
  });
}

const offsetMessage = `Offset must be an integer from 0 to ${INT32_MAX}`;

export const limitParam = (fallback: number) =>
  integerParam(fallback, 1, 100, { range: MESSAGES.limitRange, notInteger: MESSAGES.limitNotInteger }).meta({ type: 'integer', format: 'int32', minimum: 1, maximum: 100, default: fallback, description: 'Page size.' });
export const offsetParam = integerParam(0, 0, INT32_MAX, { range: offsetMessage, notInteger: offsetMessage }).meta({
  type: 'integer',
  format: 'int32',
  minimum: 0,
  maximum: INT32_MAX,
  default: 0,
  description: 'Items to skip; stop when offset + limit >= total.',
});

function enumParam<T extends string>(values: readonly T[], name: string) {
  return z.string().optional().transform((value, ctx): T | undefined => {
    if (value === undefined) return undefined;
    if (!(values as readonly string[]).includes(value)) {
      ctx.addIssue({ code: 'custom', message: `${name} must be one of: ${values.join(', ')}` });
      return z.NEVER;
    }
    return value as T;
  });
}

export const guestStatusParam = enumParam(GUEST_STATUSES, 'Status')
  .transform((v) => v ?? 'yes')
  .meta({ type: 'string', enum: [...GUEST_STATUSES], default: 'yes', description: 'RSVP status to list; `all` lists every status.' });
export const eventTypeParam = enumParam(EVENT_TYPES, 'Type').meta({
  type: 'string',
  enum: [...EVENT_TYPES],
  description: 'upcoming: start >= now, earliest first; past: start < now, latest first; profile: hosted + yes/maybe RSVPs, newest created first. Absent: every hosted event, newest created first.',
});
export const ORDERS = ['asc', 'desc'] as const;
/** Embed user events: `asc` (default, earliest start first) or `desc` (latest first, e.g. a widget's past events). */
export const orderParam = enumParam(ORDERS, 'Order')
  .transform((v) => v ?? 'asc')
  .meta({ type: 'string', enum: [...ORDERS], default: 'asc', description: 'By start date: `asc` earliest first, `desc` latest first (say, past events with `to=now`).' });

const dateParam = (bound: DateBound, description: string) =>
  z
    .string()
    .optional()
    .transform((value, ctx): Date | undefined => {
      if (value === undefined) return undefined;
      const date = value.length > DATE_BOUND_MAX_LENGTH ? null : parseDateBound(value, bound);
      if (!date) {
        ctx.addIssue({ code: 'custom', message: MESSAGES.invalidDate });
        return z.NEVER;
      }
      return date;
    })
    .meta({
      type: 'string',
      maxLength: DATE_BOUND_MAX_LENGTH,
      description: `${description} ISO 8601 date-time with \`Z\` or an offset, or \`YYYY-MM-DD\` (a whole UTC day).`,
      example: bound === 'lower' ? '2027-01-01' : '2027-12-31T23:59:59Z',
    });

/** `since`/`from` (alias) and `to`, inclusive bounds on start date. */
export const startWindowShape = {
  since: dateParam('lower', 'Inclusive lower bound on the start date.'),
  from: dateParam('lower', 'Alias of `since`; when both are given they must be the same instant.'),
  to: dateParam('upper', 'Inclusive upper bound on the start date; not before `since`.'),
};

export interface StartBounds {
  /** Inclusive lower bound, from `since` or its alias `from`. */
  since?: Date;
  /** Inclusive upper bound. */
  to?: Date;
}

/** Cross-field rules on the date window (PRODUCT P5, P6). */
export function resolveStartBounds(p: { since?: Date; from?: Date; to?: Date }): StartBounds {
  const errors: FieldError[] = [];
  if (p.since && p.from && p.since.getTime() !== p.from.getTime()) {
    errors.push({ field: 'from', message: 'from is an alias of since; when both are given they must be the same instant' });
  }
  const since = p.since ?? p.from;
  const sinceName = p.since ? 'since' : 'from';
  if (since && p.to && since.getTime() > p.to.getTime()) {
    errors.push({ field: sinceName, message: `${sinceName} must not be after to` });
  }
  if (errors.length) throw new ValidationError(errors);
  return { since, to: p.to };
}

/**
 * Validates raw path and query parameters against a route's schema. Path
 * parameters win over query parameters of the same name; unknown query
 * parameters are ignored, on every route of both surfaces (PRODUCT P6): the
 * Embed distribution's cache key and origin requests carry only the
 * parameters a route reads, so an answer must not depend on any other.
 */
export function parseParams<S extends z.ZodObject>(
  schema: S,
  path: Raw | null | undefined,
  query: Raw | null | undefined,
): z.output<S> {
  // Keyed by client input: API Gateway hands over any parameter name as an own
  // property (`__proto__`, `constructor` included), so the merge target has no
  // prototype and copies own properties only.
  const input: Raw = Object.assign(Object.create(null) as Raw, query, path);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(result.error.issues.map((issue) => ({ field: String(issue.path[0] ?? 'request'), message: issue.message })));
}

/** A changes feed's cursor: its structure here (400 naming `cursor`); its signature, scope and age where the feed is known (feeds.ts). */
export const cursorParam = z
  .string()
  .optional()
  .transform((value, ctx): SealedCursor | undefined => {
    if (value === undefined) return undefined;
    const cursor = parseCursor(value);
    if (!cursor) {
      ctx.addIssue({ code: 'custom', message: CURSOR_INVALID });
      return z.NEVER;
    }
    return cursor;
  })
  .meta({ type: 'string', maxLength: CURSOR_MAX_LENGTH, description: 'The `next_cursor` of the previous page, as given; absent: start from the current contents.' });
