/**
 * Discovery's parameters (PRODUCT P17): `city`, `country`, `from`, `to`,
 * `limit`, `cursor`, each checked on its own, and the rules that tie them
 * together (a place at all, the window's order and length), all in one
 * parse so that a 400 names every failing field.
 */
import * as z from 'zod';
import { ValidationError } from './errors.js';
import { limitParam } from './params.js';
import { cityKey, countryKey, PLACE_QUERY_MAX_LENGTH, type PlaceKey } from './place.js';
import { parseSearchCursor, SEARCH_CURSOR_INVALID, SEARCH_CURSOR_MAX_LENGTH, type SealedSearchCursor } from './search-cursor.js';

/** The longest `city` or `country` a query may send (place.ts says why 300). */
export const PLACE_MAX_LENGTH = PLACE_QUERY_MAX_LENGTH;
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
  invalidDate: 'Invalid date: use YYYY-MM-DD',
  toBeforeFrom: 'to must not be before from',
  windowTooLong: `to must be at most ${SEARCH_WINDOW_MAX_DAYS} days after from`,
} as const;

/** A query field checked by `check` (a value, or the message of its failure), absent → undefined. */
const field = <T>(check: (value: string) => T | Failure) =>
  z
    .string()
    .optional()
    .transform((value, ctx): T | undefined => {
      if (value === undefined) return undefined;
      const out = check(value);
      if (out instanceof Failure) {
        ctx.addIssue({ code: 'custom', message: out.message });
        return z.NEVER;
      }
      return out;
    });
class Failure {
  constructor(readonly message: string) {}
}
const fail = (message: string) => new Failure(message);

export const cityParam = field<string>((raw) => {
  if (raw.length > PLACE_MAX_LENGTH) return fail(SEARCH_MESSAGES.cityTooLong);
  return cityKey(raw) ?? fail(SEARCH_MESSAGES.cityEmpty);
}).meta({
  type: 'string',
  minLength: 1,
  maxLength: PLACE_MAX_LENGTH,
  description:
    'A city, matched whatever its case, accents and spacing ("São Paulo", "sao paulo" and " SAO  PAULO " are one city; "Łódź" is "Lodz", "Gießen" is "GIESSEN"), in any script. At least one of `city` and `country`.',
  example: 'Lisbon',
});

export const countryParam = field<string>((raw) => {
  if (raw.length > PLACE_MAX_LENGTH) return fail(SEARCH_MESSAGES.countryTooLong);
  // Mapped as the dataset's values are: a code or name the country table does not know is matched by its spelling.
  return countryKey(raw) ?? fail(SEARCH_MESSAGES.countryEmpty);
}).meta({
  type: 'string',
  minLength: 1,
  maxLength: PLACE_MAX_LENGTH,
  description:
    'A country: its ISO 3166-1 code (alpha-2 or alpha-3, any case), its English name or a common alias (`PT`, `pt`, `PRT` and `Portugal` are one country; `UK` is `GB`, `Viet Nam` is `VN`), or its name in its own language (`Deutschland`). A value no country is known by matches the events whose country is spelt the same way. At least one of `city` and `country`.',
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
  field<string>((raw) => (isCalendarDate(raw) ? raw : fail(SEARCH_MESSAGES.invalidDate))).meta({ type: 'string', format: 'date', minLength: 10, maxLength: 10, description, example });

export const searchFromParam = localDateParam("First day (inclusive) of the events' local start dates, each in its event's own time zone. Default: today's UTC date.", '2027-03-06');
export const searchToParam = localDateParam(`Last day (inclusive), at most ${SEARCH_WINDOW_MAX_DAYS} days after \`from\`. Default: \`from\` + ${SEARCH_DEFAULT_DAYS} days.`, '2027-03-07');

export const searchCursorParam = field<SealedSearchCursor>((raw) => {
  const sealed = parseSearchCursor(raw);
  return sealed ?? fail(SEARCH_CURSOR_INVALID);
}).meta({ type: 'string', maxLength: SEARCH_CURSOR_MAX_LENGTH, description: 'The `next_cursor` of the previous page, as given, with the same `city`, `country`, `from` and `to` (or without `from`/`to`: the cursor keeps its window).' });

/**
 * The fields, and the rules between them where both are given: at least a
 * city or a country; `to` not before `from` and at most 92 days after it.
 * The rules run beside the fields' own failures (`when`), so that one 400
 * names every failing field; a field that failed is not judged again.
 * (With `from` left out, its default is today's date, which only the
 * handler knows: resolveSearch judges `to` against it.)
 */
export const searchEventsParams = z
  .object({
    city: cityParam,
    country: countryParam,
    from: searchFromParam,
    to: searchToParam,
    limit: limitParam(SEARCH_DEFAULT_LIMIT),
    cursor: searchCursorParam,
  })
  .superRefine(
    (p, ctx) => {
      requireAPlace(p, ctx);
      // A field that failed holds z.NEVER's marker, not a string.
      if (typeof p.from === 'string' && typeof p.to === 'string') {
        const failure = windowFailure(p.from, p.to);
        if (failure) ctx.addIssue({ code: 'custom', path: ['to'], message: failure });
      }
    },
    { when: () => true },
  );

export type SearchParams = z.output<typeof searchEventsParams>;

function windowFailure(from: string, to: string): string | undefined {
  const days = daysBetween(from, to);
  if (days < 0) return SEARCH_MESSAGES.toBeforeFrom;
  return days > SEARCH_WINDOW_MAX_DAYS ? SEARCH_MESSAGES.windowTooLong : undefined;
}

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

/** Neither a city nor a country: a 400 naming `city`, beside any other field's failure (every route that takes a place). */
export function requireAPlace(p: { city?: string | undefined; country?: string | undefined }, ctx: z.RefinementCtx): void {
  if (p.city === undefined && p.country === undefined) ctx.addIssue({ code: 'custom', path: ['city'], message: SEARCH_MESSAGES.noPlace });
}

/** The place a request names, from its checked `city` and `country` (their keys). */
export function placeFrom(p: { city?: string | undefined; country?: string | undefined }): PlaceKey {
  return { ...(p.country !== undefined ? { country: p.country } : {}), ...(p.city !== undefined ? { city: p.city } : {}) };
}

/**
 * The search with its defaults (`from`: today's UTC date; `to`: `from` + 30
 * days); a stated `to` judged against a defaulted `from`, but only on a
 * first page: with a cursor the window is the cursor's (search-events.ts
 * holds the stated ends to it), and today's date, which moves between two
 * pages, judges nothing (a walk that states `to` goes on across UTC
 * midnight).
 */
export function resolveSearch(p: SearchParams, now: Date): SearchRequest {
  const from = p.from ?? now.toISOString().slice(0, 10);
  const to = p.to ?? addDays(from, SEARCH_DEFAULT_DAYS);
  const failure = p.from === undefined && p.cursor === undefined ? windowFailure(from, to) : undefined;
  if (failure) throw new ValidationError([{ field: 'to', message: failure }]);
  return {
    place: placeFrom(p),
    from,
    to,
    stated: { ...(p.from !== undefined ? { from: p.from } : {}), ...(p.to !== undefined ? { to: p.to } : {}) },
    limit: p.limit,
    ...(p.cursor !== undefined ? { cursor: p.cursor } : {}),
  };
}
