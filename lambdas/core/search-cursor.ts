/**
 * Discovery's cursor (PRODUCT P17): keyed like the changes feeds' (the same
 * key ring and MAC, lambdas/core/feed-cursor.ts) under a version prefix of
 * its own, so that neither kind ever opens as the other.
 *
 * `d1.{keyId}.{payload}.{mac}`: payload is base64url of JSON
 * `[country, city, from, to, after]`, the query's place keys (null for an
 * absent part), its window as resolved when the first page was asked for,
 * and the sort key of the last event given. It carries the window, so a
 * cursor made yesterday with a defaulted `from` goes on with yesterday's
 * window; a request that states `from` or `to` must state the cursor's.
 */
import { isGenuine, parseToken, signToken, type CursorKeyring, type SealedToken } from './feed-cursor.js';
import type { PlaceKey } from './place.js';

export const SEARCH_CURSOR_VERSION = 'd1';
/**
 * Longest cursor accepted: two place keys of at most 200 bytes each
 * (lambdas/core/place.ts PLACE_PART_MAX_BYTES: a longer part is its hash;
 * the fold leaves no control character, so JSON doubles at most a quote or
 * a backslash), two dates and a sort key of at most 88 characters, in
 * base64url (about 1,300 characters), plus the version, key id and MAC
 * (test/integration/keys-within-limits.test.ts).
 */
export const SEARCH_CURSOR_MAX_LENGTH = 2048;
export const SEARCH_CURSOR_INVALID = 'Invalid cursor: pass a next_cursor of this same search (same city, country, from and to), or no cursor to start again.';

export interface SearchCursor {
  place: PlaceKey;
  from: string;
  to: string;
  /** The sort key of the last event given (lambdas/store/table/table.ts placeSortKey). */
  after: string;
}

export interface SealedSearchCursor extends SealedToken {
  readonly cursor: SearchCursor;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const optional = (v: unknown): v is string | null => v === null || (typeof v === 'string' && v !== '');

/** The cursor's structure, or null when it is not one discovery could have given (its MAC is checked by openSearchCursor). */
export function parseSearchCursor(text: string): SealedSearchCursor | null {
  const token = parseToken(text, SEARCH_CURSOR_VERSION, SEARCH_CURSOR_MAX_LENGTH);
  if (!token || !Array.isArray(token.value) || token.value.length !== 5) return null;
  const [country, city, from, to, after] = token.value as unknown[];
  if (!optional(country) || !optional(city) || (country === null && city === null)) return null;
  if (typeof from !== 'string' || !DATE.test(from) || typeof to !== 'string' || !DATE.test(to) || typeof after !== 'string' || after === '') return null;
  const place: PlaceKey = { ...(country !== null ? { country } : {}), ...(city !== null ? { city } : {}) };
  return { signed: token.signed, mac: token.mac, keyId: token.keyId, cursor: { place, from, to, after } };
}

export async function sealSearchCursor(c: SearchCursor, keyring: CursorKeyring): Promise<string> {
  return signToken(SEARCH_CURSOR_VERSION, [c.place.country ?? null, c.place.city ?? null, c.from, c.to, c.after], (await keyring.keys()).signing);
}

/** The cursor, if one of the accepted keys signed it, else null. */
export async function openSearchCursor(sealed: SealedSearchCursor, keyring: CursorKeyring): Promise<SearchCursor | null> {
  return (await isGenuine(sealed, keyring)) ? sealed.cursor : null;
}
