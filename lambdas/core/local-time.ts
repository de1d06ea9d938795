/**
 * Wall-clock readings of an instant in an IANA time zone, with the runtime's
 * own ICU data (Node ships full ICU): the embed status's "end of the local
 * day" and discovery's local start dates (PRODUCT P17) read the same clock.
 */
import { isIanaTimeZone } from './dataset.js';

const formatters = new Map<string, Intl.DateTimeFormat>();
function wallClock(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall-clock fields of an instant in a time zone (which must be a valid IANA name). */
export function partsIn(instant: number, timeZone: string) {
  const get = (parts: Intl.DateTimeFormatPart[], type: string) => Number(parts.find((p) => p.type === type)?.value);
  const parts = wallClock(timeZone).formatToParts(new Date(instant));
  return {
    year: get(parts, 'year'),
    month: get(parts, 'month'),
    day: get(parts, 'day'),
    hour: get(parts, 'hour'),
    minute: get(parts, 'minute'),
    second: get(parts, 'second'),
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * `YYYY-MM-DDTHH:mm:ss`: the instant as the wall clock of `timeZone` shows it
 * (an unknown zone counts as UTC, as the dataset's loader warns). Fixed width
 * for years 0000-9999, so string order is local date-time order.
 */
export function localDateTime(instant: number, timeZone: string): string {
  const p = partsIn(instant, isIanaTimeZone(timeZone) ? timeZone : 'UTC');
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
}

/** `YYYY-MM-DD`: the instant's calendar date in `timeZone`. */
export function localDate(instant: number, timeZone: string): string {
  return localDateTime(instant, timeZone).slice(0, 10);
}

/**
 * `YYYY-MM-DDTHH:mm:ss±HH:MM`: the instant on the wall clock of `timeZone`
 * with that zone's offset at the instant (an unknown zone: UTC, `+00:00`),
 * what an assistant states as the local start (the MCP adapter's
 * search-events).
 */
export function localStartWithOffset(instant: number, timeZone: string): string {
  const local = localDateTime(instant, timeZone);
  const clock = new Date(0);
  // setUTCFullYear, not Date.UTC: that reads the years 0 to 99 as 1900 to 1999.
  clock.setUTCFullYear(Number(local.slice(0, 4)), Number(local.slice(5, 7)) - 1, Number(local.slice(8, 10)));
  const wall = clock.setUTCHours(Number(local.slice(11, 13)), Number(local.slice(14, 16)), Number(local.slice(17, 19)));
  const minutes = Math.round((wall - Math.floor(instant / 1000) * 1000) / 60_000);
  const abs = Math.abs(minutes);
  return `${local}${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
