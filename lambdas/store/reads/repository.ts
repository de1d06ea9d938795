/**
 * The read side of the table: the only module that issues DynamoDB reads.
 * Each method is one access pattern from docs/data-model.md; the comments give
 * its round trips. No Scan anywhere.
 */
import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { readApiKey, readUserLive } from './api-key-reads.js';
import type { ApiKeyReader, EventReader, EventSearcher, FeedEntriesRead, FeedMemberState, FeedMembersRead, FeedReader, ListOrder, PlaceSearch, PlaceSearchPage, StartWindow } from '../../core/ports.js';
import { searchEvents } from './search.js';
import { FeedReads } from '../feeds/feed-reads.js';
import { batchGetAll, type BatchGetOptions } from '../table/batch-get.js';
import type { GuestStatusFilter } from '../../core/params.js';
import type { ApiKeyItem, EventItem, EventPayload, GuestCounts, RsvpItem } from '../table/items.js';
import { halfOpen, prefixRanges, summaryPartition, tallyPartition, YEAR_RANGE, yearsBefore, type SortKeyRange } from '../table/tally.js';
import { countLiveEntries, readSummaries } from './tally-queries.js';
import { findUserIdByName } from '../table/user-lookup.js';
import {
  GUEST_COUNT_SUMMARY_PREFIX,
  GUEST_SORT_PREFIX,
  INDEXES,
  guestPartition,
  indexKeys,
  keys,
  sortKeyBounds,
  type IndexDefinition,
  userEventsPartition,
  type ProfileList,
} from '../table/table.js';

/** DynamoDB's Limit is a 32-bit integer; a page never needs more than this per call (1 MB ends a call first anyway). */
const MAX_LIMIT = 1000;

export class DynamoRepository implements EventReader, ApiKeyReader, FeedReader, EventSearcher {
  /** Tally reads on the request path are eventually consistent, like the index reads beside them. */
  private readonly tally: { client: DynamoDBDocumentClient; tableName: string; consistent: false };

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Every BatchGetItem's attempts and backoff (batch-get.ts): tests inject the sleep. */
    private readonly batchGet: BatchGetOptions = {},
  ) {
    this.tally = { client, tableName, consistent: false };
    this.feeds = new FeedReads(client, tableName, batchGet);
  }

  private readonly feeds: FeedReads;

  /** The changes feeds' reads: feed-reads.ts. */
  feedEntries(scope: string, after: readonly number[], count: number): Promise<FeedEntriesRead> {
    return this.feeds.feedEntries(scope, after, count);
  }

  feedHead(scope: string): Promise<number[]> {
    return this.feeds.feedHead(scope);
  }

  feedMembers(scope: string, after: string, count: number): Promise<FeedMembersRead> {
    return this.feeds.feedMembers(scope, after, count);
  }

  feedStates(scope: string, members: readonly string[]): Promise<Map<string, FeedMemberState>> {
    return this.feeds.feedStates(scope, members);
  }

  userIdByName(username: string): Promise<string | null> {
    return this.feeds.userIdByName(username);
  }

  /** Discovery (PRODUCT P17): PLACE_SHARDS Queries of a place index at once, then one BatchGetItem (search.ts). */
  searchEvents(search: PlaceSearch): Promise<PlaceSearchPage> {
    return searchEvents(this.client, this.tableName, search, this.batchGet);
  }

  /**
   * event-index: gsi1pk = EVENT#id AND gsi1sk = EVENT. 1 Query, 1 item: what
   * the index copies (EVENT_INDEX_ATTRIBUTES), its kind from its sort key.
   */
  async getPublicEvent(eventId: string): Promise<EventItem | null> {
    const { partitionKey, sortKey, name } = INDEXES.event;
    const k = indexKeys.eventById(eventId);
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: name,
        KeyConditionExpression: '#pk = :pk AND #sk = :sk',
        ExpressionAttributeNames: { '#pk': partitionKey, '#sk': sortKey },
        ExpressionAttributeValues: { ':pk': k[partitionKey], ':sk': k[sortKey] },
        Limit: 1,
      }),
    );
    const found = out.Items?.[0];
    return found ? ({ ...found, type: 'EVENT' } as EventItem) : null;
  }

  /**
   * table: pk = EVENT#id AND begins_with(sk, COUNTS#), the count buckets'
   * summaries (yes, maybe, no only). 1 Query of at most 64 small items.
   */
  async getGuestCounts(eventId: string): Promise<GuestCounts> {
    const summaries = await this.queryAll<Partial<GuestCounts>>(
      {
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ProjectionExpression: '#yes, #maybe, #no',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', '#yes': 'yes', '#maybe': 'maybe', '#no': 'no' },
        ExpressionAttributeValues: { ':pk': keys.event(eventId).pk, ':prefix': GUEST_COUNT_SUMMARY_PREFIX },
      },
    );
    return sumCounts(summaries);
  }

  /**
   * `all`: event-index, gsi1pk = EVENT#id AND begins_with(gsi1sk, GUEST#).
   * One status: guest-index, gsi3pk = EVENT#id#status. Both in rsvp_date, user
   * id order; Limit = count, so exactly the items asked for are read.
   */
  async getGuests(eventId: string, status: GuestStatusFilter, count: number): Promise<RsvpItem[]> {
    const input: QueryCommandInput =
      status === 'all'
        ? {
            TableName: this.tableName,
            IndexName: INDEXES.event.name,
            KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
            ExpressionAttributeNames: { '#pk': INDEXES.event.partitionKey, '#sk': INDEXES.event.sortKey },
            ExpressionAttributeValues: { ':pk': indexKeys.eventById(eventId)[INDEXES.event.partitionKey], ':prefix': GUEST_SORT_PREFIX },
          }
        : {
            TableName: this.tableName,
            IndexName: INDEXES.guest.name,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': INDEXES.guest.partitionKey },
            ExpressionAttributeValues: { ':pk': guestPartition(eventId, status) },
          };
    // event-index copies no `type`: its GUEST# entries are RSVP items.
    return (await this.queryAll<RsvpItem>(input, count)).map((guest) => ({ ...guest, type: 'RSVP' }));
  }

  /**
   * user-events-index: gsi2pk = USER#username#list AND gsi2sk in the start
   * window, in index (start, id) order. Without `limit` it reads the whole
   * window (needed for `total` and for orders other than start order); with
   * it, only the first `limit` events.
   */
  async listUserEvents(username: string, list: ProfileList, window: StartWindow, limit?: number, descending = false): Promise<EventPayload[]> {
    const input = this.startWindowQuery(username, list, window, descending);
    return input ? this.eventsOf(list, await this.queryAll<EventPayload>(input, limit)) : [];
  }

  /**
   * Start order: user-events-index over the window, forwards or backwards.
   * Created order: user-created-index backwards. Both read `count` items, and
   * in the orders whose ties the index reads backwards (id descending where
   * the API wants id ascending) also the rest of the last item's tie.
   */
  async pageUserEvents(username: string, list: ProfileList, order: ListOrder, count: number): Promise<EventPayload[]> {
    if (order.by === 'start') {
      const input = this.startWindowQuery(username, list, order.window, order.descending);
      if (!input) return [];
      return this.eventsOf(list, await (order.descending ? this.latestFirst<EventPayload>(input, INDEXES.userEvents, count) : this.queryAll<EventPayload>(input, count)));
    }
    const { partitionKey, name } = INDEXES.userCreated;
    return this.eventsOf(list, await this.latestFirst<EventPayload>(
      {
        TableName: this.tableName,
        IndexName: name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': partitionKey },
        ExpressionAttributeValues: { ':pk': userEventsPartition(username, list) },
        ScanIndexForward: false,
      },
      INDEXES.userCreated,
      count,
    ));
  }

  /**
   * A HOSTED list's items are the event items themselves. A PROFILE list's
   * are entries that point at them (so an event edit rewrites one item, not
   * one per member): the events are read by key, up to 100 per BatchGetItem,
   * all at once — one more round trip (keys left unprocessed are sent again
   * with backoff, a bounded number of times, then the list fails:
   * batch-get.ts). Only an event item that is in the event index is public;
   * an entry whose event was hidden a moment ago (the index lags, or the
   * entry's own hide is still on its way) shows nothing.
   */
  private async eventsOf(list: ProfileList, items: EventPayload[]): Promise<EventPayload[]> {
    if (list === 'HOSTED' || items.length === 0) return items;
    const read = await batchGetAll(this.client, this.tableName, [...new Set(items.map((i) => i.event_id))].map((id) => keys.event(id)), { ...this.batchGet, consistent: false });
    const found = new Map<string, EventPayload>();
    for (const item of read.values() as Iterable<EventItem & Record<string, unknown>>) {
      if (item.type === 'EVENT' && item[INDEXES.event.partitionKey] !== undefined) found.set(item.event_id, item);
    }
    return items.flatMap((i) => found.get(i.event_id) ?? []);
  }

  /**
   * The list's tally partitions (tally.ts): the year counts, and for each end
   * of the window the months, days and entries before it, all at once. Counts
   * of days that are over or not yet begun, never the events themselves.
   */
  async countUserEvents(username: string, list: ProfileList, window: StartWindow): Promise<number> {
    const pk = tallyPartition(userEventsPartition(username, list));
    const { lo, hi } = halfOpen(window);
    if (lo !== undefined && hi !== undefined && lo >= hi) return 0;
    const [years, belowLo, belowHi] = await Promise.all([
      this.sumSummaries(summaryPartition(pk, 'Y'), YEAR_RANGE, true),
      lo !== undefined ? this.withinYearBefore(pk, lo) : 0,
      hi !== undefined ? this.withinYearBefore(pk, hi) : 0,
    ]);
    const before = (x: string | undefined, within: number) => yearsBefore(years.items, x) + within;
    return (hi !== undefined ? before(hi, belowHi) : before(undefined, 0)) - (lo !== undefined ? before(lo, belowLo) : 0);
  }

  /** Entries in `x`'s year that start before x: its months, days and entries before it (3 Queries at once). */
  private async withinYearBefore(pk: string, x: string): Promise<number> {
    const r = prefixRanges(x);
    const [months, days, entries] = await Promise.all([
      this.sumSummaries(summaryPartition(pk, 'M'), r.months),
      this.sumSummaries(summaryPartition(pk, 'D'), r.days),
      countLiveEntries(this.tally, pk, r.entries),
    ]);
    return months.sum + days.sum + entries;
  }

  private async sumSummaries(pk: string, range: SortKeyRange, keepItems = false): Promise<{ sum: number; items: { sk: string; count?: number }[] }> {
    const items = await readSummaries(this.tally, pk, range);
    return { sum: items.reduce((n, i) => n + (i.count ?? 0), 0), items: keepItems ? items : [] };
  }

  /** user-events-index over a start window, or null when the window is empty. */
  private startWindowQuery(username: string, list: ProfileList, window: StartWindow, descending: boolean): QueryCommandInput | null {
    const { partitionKey, sortKey, name } = INDEXES.userEvents;
    const lower = window.from !== undefined ? sortKeyBounds.startingAtOrAfter(window.from) : undefined;
    const uppers = [
      window.to !== undefined ? sortKeyBounds.startingAtOrBefore(window.to) : undefined,
      window.before !== undefined ? sortKeyBounds.startingBefore(window.before) : undefined,
    ].filter((u): u is string => u !== undefined);
    const upper = uppers.length ? uppers.reduce((a, b) => (a < b ? a : b)) : undefined;
    if (lower !== undefined && upper !== undefined && lower > upper) return null;

    const values: Record<string, string> = { ':pk': userEventsPartition(username, list) };
    let range = '';
    if (lower !== undefined && upper !== undefined) {
      range = ' AND #sk BETWEEN :lower AND :upper';
      values[':lower'] = lower;
      values[':upper'] = upper;
    } else if (lower !== undefined) {
      range = ' AND #sk >= :lower';
      values[':lower'] = lower;
    } else if (upper !== undefined) {
      range = ' AND #sk <= :upper';
      values[':upper'] = upper;
    }
    return {
      TableName: this.tableName,
      IndexName: name,
      KeyConditionExpression: `#pk = :pk${range}`,
      ExpressionAttributeNames: { '#pk': partitionKey, ...(range ? { '#sk': sortKey } : {}) },
      ExpressionAttributeValues: values,
      // Reading the index backwards gives "latest first" pages without reading what precedes them.
      ...(descending ? { ScanIndexForward: false } : {}),
    };
  }

  /**
   * The first `count` items of a backwards read, latest first. Within one
   * instant the API wants ids ascending, which backwards is the wrong way
   * round: when the page ends inside such a tie (one item read past the page
   * tells), the tie's share of the page is read forwards instead, one more
   * Query. At most 2 × count + 1 items, however many events share the instant.
   */
  private async latestFirst<T extends object>(input: QueryCommandInput, index: IndexDefinition, count: number): Promise<T[]> {
    // Both indexes' sort keys start with the instant, a 24-character ISO datetime (table.ts).
    const instantOf = (item: T) => String((item as Record<string, unknown>)[index.sortKey]).slice(0, 24);
    const items = await this.queryAll<T>(input, count + 1);
    if (items.length <= count) return items;
    const tie = instantOf(items[count - 1]!);
    if (instantOf(items[count]!) !== tie) return items.slice(0, count);
    const newer = items.slice(0, count).filter((i) => instantOf(i) > tie);
    const tied = await this.queryAll<T>(
      {
        TableName: this.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
        ExpressionAttributeValues: { ':pk': input.ExpressionAttributeValues?.[':pk'], ':from': sortKeyBounds.startingAtOrAfter(tie), ':to': sortKeyBounds.startingAtOrBefore(tie) },
      },
      count - newer.length,
    );
    return [...newer, ...tied];
  }

  /** event-index: gsi1pk = USERNAME#{lower} AND gsi1sk = USER. 1 round trip. */
  async userExists(username: string): Promise<boolean> {
    return (await findUserIdByName(this.client, this.tableName, username)) !== null;
  }

  /** The authorizer's reads (api-key-reads.ts): GetItem APIKEY#sha256, then USER#{id}, each strongly consistent (1 RCU). */
  getApiKey(keyHash: string): Promise<ApiKeyItem | null> {
    return readApiKey(this.client, this.tableName, keyHash);
  }

  isLiveUser(userId: string): Promise<boolean> {
    return readUserLive(this.client, this.tableName, userId);
  }

  /**
   * Follows LastEvaluatedKey: one round trip per 1 MB of matching items, and
   * stops as soon as `max` items are in hand.
   */
  private async queryAll<T>(input: QueryCommandInput, max = Number.POSITIVE_INFINITY): Promise<T[]> {
    const items: T[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const remaining = max - items.length;
      const out = await this.client.send(
        new QueryCommand({
          ...input,
          ExclusiveStartKey: startKey,
          ...(Number.isFinite(remaining) ? { Limit: Math.min(remaining, MAX_LIMIT) } : {}),
        }),
      );
      items.push(...((out.Items ?? []) as T[]));
      startKey = out.LastEvaluatedKey;
    } while (startKey && items.length < max);
    return items;
  }
}

/** The event's guest counts: the sum of its count buckets' summaries. */
export function sumCounts(summaries: readonly Partial<GuestCounts>[]): GuestCounts {
  const total: GuestCounts = { yes: 0, maybe: 0, no: 0 };
  for (const s of summaries) for (const status of ['yes', 'maybe', 'no'] as const) total[status] += Number(s[status] ?? 0);
  return total;
}
