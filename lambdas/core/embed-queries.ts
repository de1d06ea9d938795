/**
 * The Embed API's use cases (spec §4.2, PRODUCT P11). Each also says how long
 * its answer stays true: the time until the first status in it changes.
 */
import { msUntilStatusChange, toEmbedEvent, type EmbedEvent } from './embed.js';
import type { StartBounds } from './params.js';
import type { EventReader } from './ports.js';
import { loadList, requirePublicEvent, windowOf } from './queries.js';
import type { EventPayload } from './read-items.js';
import { searchPage, type SearchContext, type SearchPagination } from './search-events.js';
import type { SearchRequest } from './search-params.js';

export interface Fresh<T> {
  data: T;
  /** Until the first status in `data` changes; null if none ever will. */
  freshForMs: number | null;
}

function freshness(events: EventPayload[], now: Date): number | null {
  let soonest: number | null = null;
  for (const e of events) {
    const ms = msUntilStatusChange(e, now);
    if (ms !== null && (soonest === null || ms < soonest)) soonest = ms;
  }
  return soonest;
}

export async function embedEvent(reader: EventReader, eventId: string, now: Date, siteUrl: string): Promise<Fresh<EmbedEvent>> {
  const event = await requirePublicEvent(reader, eventId);
  return { data: toEmbedEvent(event, now, siteUrl), freshForMs: freshness([event], now) };
}

/** The user's own public events, earliest start first (latest first with `order: 'desc'`), at most `limit`. */
export async function embedUserEvents(
  reader: EventReader,
  q: { username: string; limit: number; bounds: StartBounds; order?: 'asc' | 'desc' },
  now: Date,
  siteUrl: string,
): Promise<Fresh<EmbedEvent[]>> {
  // The index order (start, then id), read forwards or backwards, is this list's order, so only the page is read.
  const events = await loadList(reader, q.username, 'HOSTED', windowOf(q.bounds), undefined, q.limit, q.order === 'desc');
  return { data: events.map((e) => toEmbedEvent(e, now, siteUrl)), freshForMs: freshness(events, now) };
}

/** Discovery on the Embed API (PRODUCT P17): a page of a place's events as Embed objects. */
export async function embedSearchEvents(ctx: SearchContext, req: SearchRequest, now: Date, siteUrl: string): Promise<Fresh<{ events: EmbedEvent[]; pagination: SearchPagination }>> {
  const page = await searchPage(ctx, req);
  return { data: { events: page.events.map((e) => toEmbedEvent(e, now, siteUrl)), pagination: page.pagination }, freshForMs: freshness(page.events, now) };
}
