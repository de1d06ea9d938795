/**
 * What the core needs from storage. lambdas/store/reads/repository.ts implements it
 * over DynamoDB; docs/data-model.md lists the calls each method makes.
 */
import type { ApiKeyItem, EventItem, EventPayload, GuestCounts, RsvpItem } from './read-items.js';
import type { ProfileList } from './read-items.js';
import type { GuestStatusFilter } from './params.js';
import type { PlaceKey } from './place.js';

/** The stored shapes the feeds map (lambdas/core/feeds.ts takes them from here, not from the store). */
export type { EventPayload, RsvpItem };

/** Start-date window as ISO strings: `from`/`to` inclusive, `before` exclusive. */
export interface StartWindow {
  from?: string;
  to?: string;
  before?: string;
}

/** A list read in start order (within a start window), or latest created first. */
export type ListOrder = { by: 'start'; descending: boolean; window: StartWindow } | { by: 'created' };

export interface EventReader {
  /** The event if it is public and published, else null. One Query. */
  getPublicEvent(eventId: string): Promise<EventItem | null>;
  /**
   * The event's linked guests per status: the sum of its count buckets'
   * summaries (at most 64 small items). One Query of the event's partition,
   * whatever the event shows or hides: the caller answers it only for a
   * public event.
   */
  getGuestCounts(eventId: string): Promise<GuestCounts>;
  /** The first `count` guests in rsvp_date, user id order. One Query (more only past 1 MB). */
  getGuests(eventId: string, status: GuestStatusFilter, count: number): Promise<RsvpItem[]>;
  /**
   * The events of the user's hosted or profile list whose start is in the
   * window, in start order (ties by id), or the reverse when `descending`;
   * all of them, or the first `limit` in that order.
   */
  listUserEvents(username: string, list: ProfileList, window: StartWindow, limit?: number, descending?: boolean): Promise<EventPayload[]>;
  /**
   * How many events of the list start in the window, from the list's tally
   * (lambdas/store/table/tally.ts), never from the list: one Query of the year
   * counts plus three per end of the window, all at once.
   */
  countUserEvents(username: string, list: ProfileList, window: StartWindow): Promise<number>;
  /**
   * The first `count` events of the list in `order`, plus any that tie with
   * the last of them (so the caller's sort puts ties in id order): one Query,
   * more only past 1 MB. Reads what the page shows, not the list.
   */
  pageUserEvents(username: string, list: ProfileList, order: ListOrder, count: number): Promise<EventPayload[]>;
  /** One GetItem. */
  userExists(username: string): Promise<boolean>;
}

export interface ApiKeyReader {
  /** One GetItem by the key's SHA-256 hash. */
  getApiKey(keyHash: string): Promise<ApiKeyItem | null>;
  /** One GetItem: whether the user the key belongs to is live (not deleted, not unknown). */
  isLiveUser(userId: string): Promise<boolean>;
}

/** A feed entry as the feed route reads it: its head shard, its position in that shard's log, and its member, nothing else. */
export interface FeedEntry {
  shard: number;
  position: number;
  member: string;
}

/** What one read of a scope's entries found. */
export interface FeedEntriesRead {
  /** In each shard the entries after its position asked for, one per position, all in order of position (then shard). */
  entries: FeedEntry[];
  /** Whether entries beyond these may exist (the read stopped at its limit). */
  more: boolean;
  /** In some shard the position right after the one asked for is gone: its chunk expired, so the reader is further behind than the feed keeps. */
  expired: boolean;
}

/** What one read of a scope's members found. */
export interface FeedMembersRead {
  /** The members (ids) after the one asked for, in id order; members that left are not among them. */
  members: string[];
  /** The last id the read passed (a member that left included), or the one asked for. */
  last: string;
  /** Whether members beyond `last` may exist. */
  more: boolean;
}

/** What a feed route reads of a member now: its current item, and whether the read routes show it (the store's test: it is in the event index). */
export interface FeedMemberState {
  item: Record<string, unknown> | undefined;
  shown: boolean;
}

/** The changes feeds' reads (PRODUCT P16); every read consistent (docs/data-model.md, "Changes feeds"). */
export interface FeedReader {
  /** Up to `count` entries after positions `after` (one per head shard). One Query of the scope's chunks and heads. */
  feedEntries(scope: string, after: readonly number[], count: number): Promise<FeedEntriesRead>;
  /** Each head shard's last position, 0 when it has none. One Query of the scope's heads. */
  feedHead(scope: string): Promise<number[]>;
  /** Up to `count` members after member id `after`, in id order. One Query. */
  feedMembers(scope: string, after: string, count: number): Promise<FeedMembersRead>;
  /** Each member's current item. One round trip (BatchGetItem, 100 keys a call, all at once). */
  feedStates(scope: string, members: readonly string[]): Promise<Map<string, FeedMemberState>>;
  /** A live user's id by username (case-insensitive), or null. One Query. */
  userIdByName(username: string): Promise<string | null>;
}

/** One page's read of discovery (PRODUCT P17): a place query and a window of local start dates. */
export interface PlaceSearch {
  /** Country key, city key, or both (lambdas/core/place.ts); never neither. */
  place: PlaceKey;
  /** Inclusive local start dates, `YYYY-MM-DD`. */
  from: string;
  to: string;
  /** Events wanted, 1-100. */
  limit: number;
  /** The sort key of the last event given before (a cursor's): the page starts strictly after it. */
  after?: string;
}

/** One page found: the events in order, and, when more may follow, the sort key to go on after. */
export interface PlaceSearchPage {
  events: EventPayload[];
  /** Present when index entries follow the page: pass it as the next search's `after`. */
  next?: string;
}

/** Discovery's read (lambdas/store/reads/search.ts). */
export interface EventSearcher {
  /**
   * The public events of `place` whose local start date is in the window,
   * ordered by local start date-time then id, after `after`, at most
   * `limit`: one round trip of PLACE_SHARDS Queries, then one BatchGetItem.
   */
  searchEvents(search: PlaceSearch): Promise<PlaceSearchPage>;
}
