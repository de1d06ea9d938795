/**
 * The changes feeds' pages (lambdas/core/feeds.ts) over an in-memory
 * FeedReader: a start from no cursor (its position only), the members in id
 * order, then the entries after the start's position; and the answer bound:
 * a page stops before FEED_PAGE_MAX_BYTES of Lambda's answer whatever its
 * limit, with has_more, and the next page goes on from the first change left
 * out, so nothing is lost or given twice in a start.
 */
import { describe, expect, it } from '@jest/globals';
import { FEED_SHARDS, everyShardAt, parseCursor, type SealedCursor } from '../../lambdas/core/feed-cursor.js';
import { FEED_PAGE_MAX_BYTES, catalogueChanges, type EventChange, type FeedPage } from '../../lambdas/core/feeds.js';
import type { FeedEntriesRead, FeedMemberState, FeedMembersRead, FeedReader } from '../../lambdas/core/ports.js';
import { responseBytes } from '../../lambdas/core/response-size.js';
import { deriveEventItem } from '../../lambdas/store/changes/derive.js';
import { entriesAfter, headSortKey, isShown, shardOf } from '../../lambdas/store/feeds/feed.js';
import { feedContext, signed } from '../support/feed-keys.js';

const NOW = new Date('2026-11-21T12:00:00.000Z');
type Item = Record<string, unknown>;

/**
 * The store's feed reads as plain arrays: the scope's members, its entries in
 * the order appended (each in its member's shard, as the store places it),
 * its members' items.
 */
class MemoryFeeds implements FeedReader {
  constructor(
    readonly members: string[],
    readonly entries: string[],
    readonly items: Map<string, Item>,
  ) {}
  /** Each shard's log, as heads holding all of it. */
  private heads(): Item[] {
    return Array.from({ length: FEED_SHARDS }, (_, shard) => ({ sk: headSortKey(shard), base: 1, tail: this.entries.filter((m) => shardOf(m) === shard) }));
  }
  async feedHead(): Promise<number[]> {
    return this.heads().map((head) => (head.tail as string[]).length);
  }
  async feedMembers(_scope: string, after: string, count: number): Promise<FeedMembersRead> {
    const rest = [...this.members].sort().filter((m) => m > after);
    const read = rest.slice(0, count);
    return { members: read, last: read.at(-1) ?? after, more: rest.length > count };
  }
  async feedEntries(_scope: string, after: readonly number[], count: number): Promise<FeedEntriesRead> {
    const read = entriesAfter(this.heads(), after, count, false);
    return { entries: read.entries, more: read.more, expired: false };
  }
  async feedStates(_scope: string, members: readonly string[]): Promise<Map<string, FeedMemberState>> {
    return new Map(members.map((m) => [m, { item: this.items.get(m), shown: isShown(this.items.get(m)) }]));
  }
  async userIdByName(): Promise<string | null> {
    return null;
  }
}

/** A public event item with a description of `bytes` bytes (past the contract's maximum: only a store could hold it). */
function eventItem(id: string, bytes: number): Item {
  const [item] = deriveEventItem({
    event: { id, creator_id: 'usr_h', title: `Event ${id}`, description: 'd'.repeat(bytes), start_date: '2027-01-01T20:00:00.000Z', timezone: 'UTC', status: 'published', visibility: 'public', created_at: '2026-05-01T00:00:00.000Z' } as never,
    creator: { id: 'usr_h', username: 'host' } as never,
  });
  return item as unknown as Item;
}

async function readAll(feeds: FeedReader, limit: number, from?: SealedCursor): Promise<{ pages: FeedPage<EventChange>[]; bytes: number[] }> {
  const pages: FeedPage<EventChange>[] = [];
  const bytes: number[] = [];
  let cursor: SealedCursor | undefined = from;
  for (let more = true; more; ) {
    const page = await catalogueChanges(feedContext(feeds, NOW), { cursor, limit }, 'https://s.example');
    pages.push(page);
    bytes.push(responseBytes({ success: true, message: 'Event changes retrieved', data: page }));
    cursor = parseCursor(page.next_cursor)!;
    more = page.has_more;
    expect(pages.length).toBeLessThan(100);
  }
  return { pages, bytes };
}

describe('feed pages', () => {
  it('a start answers its position, then every member once in id order, then the entries after that position', async () => {
    const ids = ['evt_c', 'evt_a', 'evt_b'];
    const feeds = new MemoryFeeds(ids, ['evt_a', 'evt_b', 'evt_c', 'evt_a'], new Map(ids.map((id) => [id, eventItem(id, 10)])));
    const first = await catalogueChanges(feedContext(feeds, NOW), { limit: 2 }, 'https://s.example');
    expect(first.changes).toEqual([]);
    expect(parseCursor(first.next_cursor)?.cursor).toMatchObject({ mode: 'members', after: '' });
    expect(parseCursor(first.next_cursor)!.cursor.position.reduce((n, p) => n + p, 0)).toBe(4);
    const { pages } = await readAll(feeds, 2);
    expect(pages.flatMap((p) => p.changes.map((c) => c.id))).toEqual(['evt_a', 'evt_b', 'evt_c']);
    // A change since the start's position: the entries after it.
    feeds.entries.push('evt_b');
    const last = parseCursor(pages.at(-1)!.next_cursor)!;
    const next = await catalogueChanges(feedContext(feeds, NOW), { cursor: last, limit: 2 }, 'https://s.example');
    expect(next.changes.map((c) => c.id)).toEqual(['evt_b']);
  });

  it.each(['members', 'entries'])('a page of %s stops before the answer bound whatever its limit, and the next goes on from there', async (mode) => {
    // 100 events of 120 KB each: 12 MB, more than two answers hold.
    const ids = Array.from({ length: 100 }, (_, i) => `evt_${String(i).padStart(3, '0')}`);
    const feeds = new MemoryFeeds(mode === 'members' ? ids : [], ids, new Map(ids.map((id) => [id, eventItem(id, 120_000)])));
    // Members: a start from no cursor. Entries: a consumer that started while the scope was empty.
    const from = mode === 'entries' ? parseCursor(signed({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(0), after: '', asOf: NOW.getTime() / 1000 }))! : undefined;
    const { pages, bytes } = await readAll(feeds, 100, from);
    const given = pages.flatMap((p) => p.changes.map((c) => c.id));
    // Members come in id order; entries in position order across the shards: each id once either way.
    expect(mode === 'members' ? given : [...given].sort()).toEqual(ids);
    expect(Math.max(...bytes)).toBeLessThanOrEqual(FEED_PAGE_MAX_BYTES + 2_000);
    const cut = pages.filter((p) => p.has_more && p.changes.length > 0 && p.changes.length < 100);
    expect(cut.length).toBeGreaterThanOrEqual(2);
  });
});
