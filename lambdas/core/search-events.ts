/**
 * Discovery (PRODUCT P17): a place's public events in a window of local
 * start dates, a page at a time, with keyed cursors. The rules here; the
 * read is the EventSearcher port's (lambdas/store/reads/search.ts).
 */
import { ValidationError } from './errors.js';
import type { CursorKeyring } from './feed-cursor.js';
import type { EventPayload, EventSearcher } from './ports.js';
import { readIfGenuine, warmKeys } from './cursor-reads.js';
import { sealSearchCursor, SEARCH_CURSOR_INVALID, type SearchCursor } from './search-cursor.js';
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
 * A sort key longer than this is none the index holds (DynamoDB's bound on
 * a sort key): a cursor carrying one is no cursor discovery gave, and its
 * key must never reach a Query (which would refuse it).
 */
const SORT_KEY_MAX_BYTES = 1024;

/**
 * Whether the cursor claims this same query: the same place, and the same
 * `from`/`to` where the request states them (a request that leaves them out
 * goes on with the cursor's window). Checked before its MAC: another query's
 * cursor costs no key read.
 */
function claimsThisQuery(req: SearchRequest & { cursor: NonNullable<SearchRequest['cursor']> }): boolean {
  const claimed = req.cursor.cursor;
  return (
    claimed.place.country === req.place.country &&
    claimed.place.city === req.place.city &&
    (req.stated.from === undefined || req.stated.from === claimed.from) &&
    (req.stated.to === undefined || req.stated.to === claimed.to) &&
    Buffer.byteLength(claimed.after) <= SORT_KEY_MAX_BYTES
  );
}

/**
 * One page: the events (as stored; each surface maps them) and the
 * pagination. From a cursor this API signed for this same query (else 400,
 * `cursor`), whose keys are read beside the page's reads, never before them
 * (cursor-reads.ts): two round trips, a container's first page and the
 * keys' refreshes included.
 */
export async function searchPage(ctx: SearchContext, req: SearchRequest): Promise<SearchPage> {
  if (!req.cursor) {
    warmKeys(ctx.keyring);
    return pageFrom(ctx, req, undefined);
  }
  if (!claimsThisQuery({ ...req, cursor: req.cursor })) throw badCursor();
  const claimed = req.cursor.cursor;
  const read = await readIfGenuine(req.cursor, ctx.keyring, () => pageFrom(ctx, req, claimed));
  if (!read) throw badCursor();
  return read.value;
}

async function pageFrom(ctx: SearchContext, req: SearchRequest, cursor: SearchCursor | undefined): Promise<SearchPage> {
  const window = cursor ? { from: cursor.from, to: cursor.to } : { from: req.from, to: req.to };
  const found = await ctx.search.searchEvents({ place: req.place, ...window, limit: req.limit, ...(cursor ? { after: cursor.after } : {}) });
  if (found.next === undefined) return { events: found.events, pagination: { limit: req.limit, has_more: false } };
  const next_cursor = await sealSearchCursor({ place: req.place, ...window, after: found.next }, ctx.keyring);
  return { events: found.events, pagination: { limit: req.limit, has_more: true, next_cursor } };
}
