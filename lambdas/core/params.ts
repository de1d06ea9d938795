/**
 * Request parameter schemas (PRODUCT P5, P6). Each route validates the merged
 * path + query parameters with one zod schema; every failure is reported as
 * `{field, message}` and the envelope's message is the first one's text.
 * Nothing reaches DynamoDB before it has passed through here.
 */
import * as z from 'zod';
import { parseDateBound, type DateBound } from './dates.js';
import { MESSAGES, ValidationError, type FieldError } from './errors.js';
import { EVENT_ID_PATTERN, USERNAME_PATTERN } from './ids.js';

type Raw = Record<string, string | undefined>;


export const GUEST_STATUSES = ['yes', 'maybe', 'no', 'all'] as const;
export type GuestStatusFilter = (typeof GUEST_STATUSES)[number];
export const EVENT_TYPES = ['upcoming', 'past', 'profile'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

function required(requiredMessage: string, pattern: RegExp, invalidMessage: string) {
  return z.string().optional().transform((value, ctx): string => {
    if (value === undefined || value.trim() === '') {
      ctx.addIssue({ code: 'custom', message: requiredMessage });
      return z.NEVER;
    }
    if (!pattern.test(value)) {
      ctx.addIssue({ code: 'custom', message: invalidMessage });
      return z.NEVER;
    }
    return value;
  });
}

export const eventIdParam = required(
  MESSAGES.eventIdRequired,
  EVENT_ID_PATTERN,
  'Invalid event id: expected evt_ followed by 1-64 letters, digits, "_" or "-"',
);
/** A username path parameter; Variant B words the missing case differently. */
export const requiredUsername = (missingMessage: string) =>
  required(missingMessage, USERNAME_PATTERN, 'Invalid username: expected 1-64 letters, digits, ".", "_" or "-" (no "@" prefix)');
export const usernameParam = requiredUsername(MESSAGES.usernameRequired);

function integerParam(fallback: number, min: number, max: number, message: string) {
  return z.string().optional().transform((value, ctx): number => {
    if (value === undefined) return fallback;
    const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return n;
  });
}

export const limitParam = (fallback: number) => integerParam(fallback, 1, 100, MESSAGES.limitRange);
export const offsetParam = integerParam(0, 0, Number.MAX_SAFE_INTEGER, 'Offset must be an integer greater than or equal to 0');

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

export const guestStatusParam = enumParam(GUEST_STATUSES, 'Status').transform((v) => v ?? 'yes');
export const eventTypeParam = enumParam(EVENT_TYPES, 'Type');

const dateParam = (bound: DateBound) =>
  z.string().optional().transform((value, ctx): Date | undefined => {
    if (value === undefined) return undefined;
    const date = parseDateBound(value, bound);
    if (!date) {
      ctx.addIssue({ code: 'custom', message: MESSAGES.invalidDate });
      return z.NEVER;
    }
    return date;
  });

/** `since`/`from` (alias) and `to`, inclusive bounds on start date. */
export const startWindowShape = {
  since: dateParam('lower'),
  from: dateParam('lower'),
  to: dateParam('upper'),
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
 * parameters are ignored (PRODUCT P6).
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
  const errors = result.error.issues.map((issue) => ({ field: String(issue.path[0] ?? 'request'), message: issue.message }));
  throw new ValidationError(errors);
}
