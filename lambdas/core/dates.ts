/**
 * Date handling shared by the dataset contract and the query parameters.
 *
 * Every datetime the service stores or returns is `Date.prototype.toISOString()`
 * output (UTC, milliseconds, `Z`, 24 characters for years 0000-9999). That fixed
 * width is what lets DynamoDB sort keys that start with a datetime sort
 * chronologically as plain strings.
 */

// RFC 3339 / ISO 8601 extended date-time. Seconds are optional for query
// parameters (`2026-05-01T10:00Z` is unambiguous) but required by the dataset
// contract (JSON Schema `date-time` is RFC 3339, which requires them).
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})$/;
const PLAIN_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * The longest date bound DATE_TIME accepts, `2026-05-01T10:00:00.123456789+02:00`
 * (35 characters): query parameters longer than this are refused before parsing,
 * and the OpenAPI documents state it as their maxLength.
 */
export const DATE_BOUND_MAX_LENGTH = 35;
/** Every datetime the API answers is toISOString() output of a UTC year 0001-9999: always 24 characters. */
export const ISO_STRING_LENGTH = 24;

export type DateBound = 'lower' | 'upper';

function validCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= daysInMonth;
}

/**
 * Parses an ISO 8601 date-time with `Z` or an offset. Returns null for anything
 * else, including impossible calendar dates such as 2026-02-30 that `Date.parse`
 * would silently roll over.
 */
export function parseDateTime(value: string, opts: { requireSeconds?: boolean } = {}): Date | null {
  const m = DATE_TIME.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, , offset] = m;
  if (opts.requireSeconds && s === undefined) return null;
  if (!validCalendarDate(Number(y), Number(mo), Number(d))) return null;
  if (Number(h) > 23 || Number(mi) > 59 || (s !== undefined && Number(s) > 59)) return null;
  if (offset && offset.length > 1) {
    const digits = offset.replace(':', '');
    if (Number(digits.slice(1, 3)) > 23 || Number(digits.slice(3, 5)) > 59) return null;
  }
  // Normalise forms Date.parse does not accept everywhere (lower-case t/z,
  // offsets without a colon) before handing over.
  let normalised = value.replace(/t/, 'T').replace(/z$/, 'Z');
  normalised = normalised.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(normalised);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/**
 * Parses a query-string date bound: a date-time as above, or a plain
 * `YYYY-MM-DD` that means the first millisecond of that UTC day as a lower bound
 * and the last one as an upper bound (PRODUCT P6).
 *
 * A `+` in an offset often arrives as a space because form-style decoding turns
 * `+` into a space; `2026-05-01T10:00:00 02:00` can only mean `+02:00`, so it is
 * read that way rather than rejected.
 */
export function parseDateBound(raw: string, bound: DateBound): Date | null {
  const value = raw.replace(/ (\d{2}:?\d{2})$/, '+$1');
  const plain = PLAIN_DATE.exec(value);
  if (plain) {
    const [, y, mo, d] = plain;
    if (!validCalendarDate(Number(y), Number(mo), Number(d))) return null;
    const start = Date.UTC(Number(y), Number(mo) - 1, Number(d));
    // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear undoes that.
    const date = new Date(start);
    date.setUTCFullYear(Number(y));
    return bound === 'lower' ? date : new Date(date.getTime() + 86_400_000 - 1);
  }
  return parseDateTime(value);
}

/** The one serialisation of datetimes used in items and responses. */
export function toIso(date: Date): string {
  return date.toISOString();
}
