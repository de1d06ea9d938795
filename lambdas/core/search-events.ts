/**
 * Discovery (PRODUCT P17): a place's public events in a window of local
 * start dates, a page at a time, with keyed cursors. The rules here; the
 * read is the EventSearcher port's (lambdas/store/reads/search.ts).
 */
import { ValidationError } from './errors.js';
import type { CursorKeyring } from './feed-cursor.js';
import type { EventPayload, EventSearcher } from './ports.js';
import { openSearchCursor, sealSearchCursor, SEARCH_CURSOR_INVALID, type SearchCursor } from './search-cursor.js';
import type { SearchRequest } from './search-params.js';

export interface SearchPagination {
  limit: number;
  has_more: boolean;
  /** Absent when `has_more` is false. */
  next_cursor?: string;
}

export interface SearchPage {
  events: EventPayload[];
  pagination: SearchPagination;
}

/** What a search needs besides the request: the read and the cursor keys. */
export interface SearchContext {
  search: EventSearcher;
  keyring: CursorKeyring;
}

const badCursor = () => new ValidationError([{ field: 'cursor', message: SEARCH_CURSOR_INVALID }]);

/**
 * The cursor, if this API signed it for this same query: the same place,
 * and the same `from`/`to` where the request states them (a request that
 * leaves them out goes on with the cursor's window). Else 400, `cursor`.
 */
async function openFor(req: SearchRequest, keyring: CursorKeyring): Promise<SearchCursor | undefined> {
  if (!req.cursor) return undefined;
  const claimed = req.cursor.cursor;
  const sameQuery =
    claimed.place.country === req.place.country &&
    claimed.place.city === req.place.city &&
    (req.stated.from === undefined || req.stated.from === claimed.from) &&
    (req.stated.to === undefined || req.stated.to === claimed.to);
  // Another query's cursor is refused before its MAC is checked: it costs no key read.
  if (!sameQuery) throw badCursor();
  const cursor = await openSearchCursor(req.cursor, keyring);
  if (!cursor) throw badCursor();
  return cursor;
}

/** One page: the events (as stored; each surface maps them) and the pagination. */
export async function searchPage(ctx: SearchContext, req: SearchRequest): Promise<SearchPage> {
  const cursor = await openFor(req, ctx.keyring);
  const window = cursor ? { from: cursor.from, to: cursor.to } : { from: req.from, to: req.to };
  const found = await ctx.search.searchEvents({ place: req.place, ...window, limit: req.limit, ...(cursor ? { after: cursor.after } : {}) });
  if (found.next === undefined) return { events: found.events, pagination: { limit: req.limit, has_more: false } };
  const next_cursor = await sealSearchCursor({ place: req.place, ...window, after: found.next }, ctx.keyring);
  return { events: found.events, pagination: { limit: req.limit, has_more: true, next_cursor } };
}
