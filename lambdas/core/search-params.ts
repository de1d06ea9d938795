/**
 * Discovery's parameters (PRODUCT P17): `city`, `country`, `from`, `to`,
 * `limit`, `cursor`. Each field is checked on its own and gives its value or
 * its failure, never throwing, so that resolveSearch can name every failing
 * field at once, the rules that tie fields together (a place at all, the
 * window's order and length) among them.
 */
import * as z from 'zod';
import { MESSAGES, ValidationError, type FieldError } from './errors.js';
import { limitParam } from './params.js';
import { cityKey, countryKey, knownAlpha2, type PlaceKey } from './place.js';
import { parseSearchCursor, SEARCH_CURSOR_INVALID, SEARCH_CURSOR_MAX_LENGTH, type SealedSearchCursor } from './search-cursor.js';

/** A field's value, or the message of its failure. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export const PLACE_MAX_LENGTH = 100;
/** `to` may be at most this many days after `from`. */
export const SEARCH_WINDOW_MAX_DAYS = 92;
/** Without `to`: `from` plus this many days. */
export const SEARCH_DEFAULT_DAYS = 30;
export const SEARCH_DEFAULT_LIMIT = 20;

export const SEARCH_MESSAGES = {
  noPlace: 'Give a city, a country or both',
  cityEmpty: 'City must not be empty',
  cityTooLong: `City must be at most ${PLACE_MAX_LENGTH} characters`,
  countryEmpty: 'Country must not be empty',
  countryTooLong: `Country must be at most ${PLACE_MAX_LENGTH} characters`,
  unknownCountryCode: 'Unknown country code: give an ISO 3166-1 alpha-2 code (such as PT) or an English country name',
  invalidDate: 'Invalid date: use YYYY-MM-DD',
  toBeforeFrom: 'to must not be before from',
  windowTooLong: `to must be at most ${SEARCH_WINDOW_MAX_DAYS} days after from`,
} as const;

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const fail = <T>(message: string): Checked<T> => ({ ok: false, message });

/** A query field checked by `check`, absent → undefined. */
const field = <T>(check: (value: string) => Checked<T>) => z.string().optional().transform((value): Checked<T | undefined> => (value === undefined ? ok(undefined) : check(value)));

export const cityParam = field<string>((raw) => {
  // The length of what was sent and of its folded form (folding may lengthen a few characters): both bounded.
  if (raw.length > PLACE_MAX_LENGTH) return fail(SEARCH_MESSAGES.cityTooLong);
  const key = cityKey(raw);
  if (key === undefined) return fail(SEARCH_MESSAGES.cityEmpty);
  return key.length > PLACE_MAX_LENGTH ? fail(SEARCH_MESSAGES.cityTooLong) : ok(key);
}).meta({
  type: 'string',
  minLength: 1,
  maxLength: PLACE_MAX_LENGTH,
  description: 'A city, matched whatever its case, accents and spacing ("São Paulo", "sao paulo" and " SAO  PAULO " are one city). At least one of `city` and `country`.',
  example: 'Lisbon',
});

export const countryParam = field<string>((raw) => {
  if (raw.length > PLACE_MAX_LENGTH) return fail(SEARCH_MESSAGES.countryTooLong);
  const trimmed = raw.trim();
  if (trimmed === '') return fail(SEARCH_MESSAGES.countryEmpty);
  // Two letters are a code: one the standard does not assign is a mistake, not a name.
  if (/^[A-Za-z]{2}$/.test(trimmed) && !knownAlpha2(trimmed)) return fail(SEARCH_MESSAGES.unknownCountryCode);
  const key = countryKey(trimmed)!;
  return key.length > PLACE_MAX_LENGTH + 1 ? fail(SEARCH_MESSAGES.countryTooLong) : ok(key);
}).meta({
  type: 'string',
  minLength: 1,
  maxLength: PLACE_MAX_LENGTH,
  description: 'A country: its ISO 3166-1 alpha-2 code (any case) or its English name (`PT`, `pt` and `Portugal` are one country). At least one of `city` and `country`.',
  example: 'PT',
});

/** Whether `YYYY-MM-DD` names a day of the calendar. */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo);
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

const localDateParam = (description: string, example: string) =>
  field<string>((raw) => (isCalendarDate(raw) ? ok(raw) : fail(SEARCH_MESSAGES.invalidDate))).meta({ type: 'string', format: 'date', description, example });

export const searchFromParam = localDateParam("First day (inclusive) of the events' local start dates, each in its event's own time zone. Default: today's UTC date.", '2027-03-06');
export const searchToParam = localDateParam(`Last day (inclusive), at most ${SEARCH_WINDOW_MAX_DAYS} days after \`from\`. Default: \`from\` + ${SEARCH_DEFAULT_DAYS} days.`, '2027-03-07');

/** The shared `limit` (1-100), its failure kept as a value like the other fields'. */
const inner = limitParam(SEARCH_DEFAULT_LIMIT);
export const searchLimitParam = z
  .string()
  .optional()
  .transform((value): Checked<number> => {
    const r = inner.safeParse(value);
    return r.success ? ok(r.data) : fail(r.error.issues[0]?.message ?? MESSAGES.limitRange);
  })
  .meta({ ...(inner.meta() ?? {}), description: 'Events per page.' });

export const searchCursorParam = field<SealedSearchCursor>((raw) => {
  const sealed = parseSearchCursor(raw);
  return sealed ? ok(sealed) : fail<SealedSearchCursor>(SEARCH_CURSOR_INVALID);
}).meta({ type: 'string', maxLength: SEARCH_CURSOR_MAX_LENGTH, description: 'The `next_cursor` of the previous page, as given, with the same `city`, `country`, `from` and `to` (or without `from`/`to`: the cursor keeps its window).' });

export const searchEventsParams = z.object({
  city: cityParam,
  country: countryParam,
  from: searchFromParam,
  to: searchToParam,
  limit: searchLimitParam,
  cursor: searchCursorParam,
});

export type SearchParams = z.output<typeof searchEventsParams>;

/** A search as the request resolves it: every field checked, defaults applied (a cursor's window comes later: search-events.ts). */
export interface SearchRequest {
  place: PlaceKey;
  from: string;
  to: string;
  /** The window's ends the request stated (a cursor must carry the same). */
  stated: { from?: string; to?: string };
  limit: number;
  cursor?: SealedSearchCursor;
}

const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of a calendar date (years 0000-9999). */
function dayNumber(date: string): number {
  const d = new Date(0);
  d.setUTCFullYear(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)));
  return Math.round(d.getTime() / DAY_MS);
}

/** The calendar date `days` after `date`, no later than 9999-12-31 (dates stay four-digit years). */
export function addDays(date: string, days: number): string {
  const d = new Date(Math.min((dayNumber(date) + days) * DAY_MS, dayNumber('9999-12-31') * DAY_MS));
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`;
}

/** Days from `from` to `to` (negative when `to` is before). */
export const daysBetween = (from: string, to: string): number => dayNumber(to) - dayNumber(from);

/**
 * Every field's failure, and the rules between fields, as one 400 naming
 * each failing field; else the search with its defaults (`from`: today's
 * UTC date; `to`: `from` + 30 days).
 */
export function resolveSearch(p: SearchParams, now: Date): SearchRequest {
  const errors: FieldError[] = [];
  const value = <T>(name: string, c: Checked<T>): T | undefined => {
    if (c.ok) return c.value;
    errors.push({ field: name, message: c.message });
    return undefined;
  };
  const city = value('city', p.city);
  const country = value('country', p.country);
  const statedFrom = value('from', p.from);
  const statedTo = value('to', p.to);
  const limit = value('limit', p.limit);
  const cursor = value('cursor', p.cursor);
  if (p.city.ok && p.country.ok && city === undefined && country === undefined) errors.unshift({ field: 'city', message: SEARCH_MESSAGES.noPlace });
  const from = statedFrom ?? now.toISOString().slice(0, 10);
  const to = statedTo ?? addDays(from, SEARCH_DEFAULT_DAYS);
  if (p.from.ok && p.to.ok) {
    const days = daysBetween(from, to);
    if (days < 0) errors.push({ field: 'to', message: SEARCH_MESSAGES.toBeforeFrom });
    else if (days > SEARCH_WINDOW_MAX_DAYS) errors.push({ field: 'to', message: SEARCH_MESSAGES.windowTooLong });
  }
  if (errors.length) throw new ValidationError(errors);
  return {
    place: { ...(country !== undefined ? { country } : {}), ...(city !== undefined ? { city } : {}) },
    from,
    to,
    stated: { ...(statedFrom !== undefined ? { from: statedFrom } : {}), ...(statedTo !== undefined ? { to: statedTo } : {}) },
    limit: limit!,
    ...(cursor !== undefined ? { cursor } : {}),
  };
}
