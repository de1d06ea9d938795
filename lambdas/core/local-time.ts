/**
 * Wall-clock readings of an instant in an IANA time zone, from the project's
 * own time-zone database (tz-database.ts: one IANA release, the same on
 * every runtime), not the runtime's ICU: the embed status's "end of the local
 * day", discovery's indexed local start dates (PRODUCT P17) and the MCP
 * adapter's local starts read the same clock.
 */
import { isKnownZone, offsetMinutesAt } from './tz-database.js';

/** The wall-clock fields of an instant in a time zone (a zone the database does not know reads as UTC). */
export function partsIn(instant: number, timeZone: string) {
  const wall = new Date(instant + offsetMinutesAt(instant, timeZone) * 60_000);
  return {
    year: wall.getUTCFullYear(),
    month: wall.getUTCMonth() + 1,
    day: wall.getUTCDate(),
    hour: wall.getUTCHours(),
    minute: wall.getUTCMinutes(),
    second: wall.getUTCSeconds(),
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * `YYYY-MM-DDTHH:mm:ss`: the instant as the wall clock of `timeZone` shows it
 * (an unknown zone counts as UTC, as the dataset's loader warns). Fixed width
 * for years 0000-9999, so string order is local date-time order.
 */
export function localDateTime(instant: number, timeZone: string): string {
  const p = partsIn(instant, isKnownZone(timeZone) ? timeZone : 'UTC');
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
