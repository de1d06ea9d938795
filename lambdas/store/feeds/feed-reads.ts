/**
 * The changes feeds' reads (PRODUCT P16), each one round trip. All consistent:
 * a reader must not pass a position whose entry a consistent read would have
 * shown, and the member's item it reads must be at least as new as the change
 * its entry announces (the entry is written after the item).
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { FeedEntriesRead, FeedMemberState, FeedMembersRead } from '../../core/ports.js';
import { FEED_HEADS_END, FEED_HEAD_PREFIX, FEED_MEMBER_PREFIX, FEED_SHARDS, chunkRangeStart, feedMembersPartition, feedPartition, feedRun } from './feed-layout.js';
import { entriesAfter, entriesRanges } from './feed-entries.js';
import { isShown, memberItemKey } from './feed-scopes.js';
import { PK, SK } from '../table/table.js';
import { batchGetAll, itemKeyString, type BatchGetOptions } from '../table/batch-get.js';
import { findUserIdByName } from '../table/user-lookup.js';

type Item = Record<string, unknown>;

/** Moved to the shared BatchGetItem (batch-get.ts); exported here still for the feeds' callers. */
export { UnprocessedKeysError } from '../table/batch-get.js';

/**
 * Chunks hold at least this many entries (the flush size over the longest
 * member id), the load's last one aside: a page's Query asks for enough of
 * them to hold its entries, whatever their sizes.
 */
const MIN_CHUNK_ENTRIES = 6;

/** The BatchGetItem's attempts, backoff and sleep (batch-get.ts), and: */
export interface FeedReadOptions extends BatchGetOptions {
  /** The scopes' head shards (FEED_SHARDS; one for a test of one shard's log). */
  shards?: number;
  /** How far apart a cursor's positions may be and still be read by one Query (RANGE_GAP; lowered to test several at once). */
  rangeGap?: number;
}

export class FeedReads {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly opts: FeedReadOptions = {},
  ) {}

  /**
   * pk = FEED#{scope} AND sk BETWEEN C#{lowest after + 1} AND H#~,
   * consistent: every shard's chunks that may hold positions after the
   * lowest of the cursor's (a chunk is keyed by its last position, then its
   * shard), then the heads with each shard's newest entries; in each shard
   * the entries after its own position up to the first position held nowhere
   * (entriesAfter; a shard's chunks at or below its position are read and
   * dropped). When the cursor's positions lie far apart (entriesRanges), one
   * such Query per cluster of them, all at once: still one round trip. A
   * shard's position after + 1 held nowhere while later ones are: a flush
   * may have moved it between the reads of its chunk and of its head, so the
   * read is made once more (the chunk was written before the trim); missing
   * again, its chunk has expired.
   */
  async feedEntries(scope: string, after: readonly number[], count: number): Promise<FeedEntriesRead> {
    let read = await this.readEntries(scope, after, count);
    if (read.frontHole) read = await this.readEntries(scope, after, count);
    return { entries: read.entries, more: read.more, expired: read.frontHole };
  }

  /**
   * The ranges' Queries, each `Limit` enough chunks for `count` entries with
   * a first, partly read chunk for each of its shards (and the heads, for
   * the last). When the reads stop at their Limits having given no entry
   * while some shard is not known to its end (the Limit spent on chunks
   * read for nothing), the ranges cut short read on (up to 1 MB a call)
   * until one gives an entry or all are read: a page always moves a cursor
   * on, or says truly that nothing is there.
   */
  private async readEntries(scope: string, after: readonly number[], count: number) {
    const ranges = entriesRanges(after, this.opts.rangeGap);
    const items: Item[] = [];
    const starts: (Record<string, unknown> | undefined)[] = ranges.map(() => undefined);
    const done = ranges.map(() => false);
    for (let first = true; ; first = false) {
      await Promise.all(
        ranges.map(async (range, i) => {
          if (done[i]) return;
          const last = i === ranges.length - 1;
          const out = await this.client.send(
            new QueryCommand({
              TableName: this.tableName,
              KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
              ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
              ExpressionAttributeValues: { ':pk': feedPartition(scope), ':from': chunkRangeStart(range.from), ':to': range.to === undefined ? FEED_HEADS_END : `${chunkRangeStart(range.to)}#~` },
              ...(first ? { Limit: Math.ceil(count / MIN_CHUNK_ENTRIES) + 2 * range.shards.length + 2 + (last ? after.length : 0) } : { ExclusiveStartKey: starts[i] }),
              ConsistentRead: true,
            }),
          );
          items.push(...(out.Items ?? []));
          starts[i] = out.LastEvaluatedKey;
          done[i] = out.LastEvaluatedKey === undefined;
        }),
      );
      const read = entriesAfter(items, after, count, { ranges, done });
      if (read.entries.length || read.frontHole || !read.more || done.every(Boolean)) return read;
    }
  }

  /**
   * pk = FEED#{scope} AND begins_with(sk, H#), consistent: every head shard,
   * each shard's last position (0 when it has none).
   */
  async feedHead(scope: string): Promise<number[]> {
    const shards = this.opts.shards ?? FEED_SHARDS;
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :heads)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': feedPartition(scope), ':heads': FEED_HEAD_PREFIX },
        ConsistentRead: true,
      }),
    );
    const position = Array.from({ length: shards }, () => 0);
    for (const item of out.Items ?? []) {
      const run = feedRun(item, shards);
      if (run?.head) position[run.shard] = run.lo + run.members.length - 1;
    }
    return position;
  }

  /** pk = FEED#M#{scope} AND sk BETWEEN M#{after} AND M#\uffff, consistent, Limit count + 1 (`after` itself is read and dropped). */
  async feedMembers(scope: string, after: string, count: number): Promise<FeedMembersRead> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': feedMembersPartition(scope), ':from': `${FEED_MEMBER_PREFIX}${after}`, ':to': `${FEED_MEMBER_PREFIX}\uffff` },
        Limit: count + 1,
        ConsistentRead: true,
      }),
    );
    const found = (out.Items ?? []).filter((i) => i[SK] !== `${FEED_MEMBER_PREFIX}${after}`);
    const read = found.slice(0, count);
    const id = (i: Item) => String(i[SK]).slice(FEED_MEMBER_PREFIX.length);
    return {
      members: read.map(id),
      last: read.length ? id(read[read.length - 1]!) : after,
      // A Query that stopped early (its Limit, or 1 MB) says so, however few it gave: never judged the end from its count alone.
      more: found.length > count || out.LastEvaluatedKey !== undefined,
    };
  }

  /**
   * BatchGetItem (consistent) of each member's item: 100 keys a call, all
   * calls at once; keys left unprocessed are sent again with backoff, a
   * bounded number of times, then the page fails (batch-get.ts).
   */
  async feedStates(scope: string, members: readonly string[]): Promise<Map<string, FeedMemberState>> {
    const unique = [...new Set(members)];
    const found = await batchGetAll(this.client, this.tableName, unique.map((m) => memberItemKey(scope, m)), { ...this.opts, consistent: true });
    return new Map(
      unique.map((m) => {
        const item = found.get(itemKeyString(memberItemKey(scope, m)));
        return [m, { item, shown: isShown(item) }];
      }),
    );
  }

  async userIdByName(username: string): Promise<string | null> {
    return findUserIdByName(this.client, this.tableName, username);
  }
}
