/**
 * The feeds' writes (docs/data-model.md, "Changes feeds"): a member's
 * membership of a scope, and its entries, appended to its shard's head with
 * the flush each append may set off (feed-flush.ts).
 */
import type { Item, TableIO } from '../table/table-io.js';
import type { Clock } from '../../core/clock.js';
import { all } from '../table/waves.js';
import { FEED_SHARDS, HEAD_NAMES, MAX_CHUNK_ENTRIES, MAX_TAIL_ENTRIES, TAIL_FLUSH_BYTES, headKey, listBytes, memberKey } from './feed-layout.js';
import { feedMemberOf, groupByShard, scopesShowing } from './feed-scopes.js';
import { flushTail } from './feed-flush.js';

/** An append refused for room flushes and tries again this many times in all before its change fails. */
const MAX_APPEND_ATTEMPTS = 3;

/** A head with no room for an append after flushing: its change fails and is delivered again. */
export class FeedHeadFullError extends Error {
  override name = 'FeedHeadFullError';
  constructor(
    readonly scope: string,
    readonly shard: number,
  ) {
    super(`The feed head ${shard} of ${scope} stayed full after flushing`);
  }
}

/**
 * The flushes a change's appends set off, run beside the rest of its work
 * rather than before it (FeedWriter's `flushes`). An append is done when it
 * has landed: its entries are in the head, where every reader finds them,
 * and a flush only moves them to a chunk. So a change need not wait for its
 * chunk and its trim (two round trips) before it goes on and clears its
 * `pending`; it waits for them only before it answers, so that no call is
 * left in flight. One that fails, or never runs (a crash), leaves its
 * entries in the head as a failed flush always has: the head stays within
 * MAX_TAIL_ENTRIES, and the next append that crosses the flush size, or one
 * refused for room, flushes them (feed-head-bound.test.ts); the change is
 * complete either way, so the failure is not its own.
 */
export class PendingFlushes {
  private readonly running = new Set<Promise<void>>();

  add(flush: Promise<void>): void {
    // A failure is not the change's (above): the entries stay in the head for the next flush.
    const tracked = flush.catch(() => undefined);
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  /** Settles once every flush added has landed or failed. */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running]);
  }
}

/** The feeds' writes: membership and entries. */
export class FeedWriter {
  constructor(
    private readonly io: TableIO,
    private readonly clock: Clock,
    private readonly flushBytes = TAIL_FLUSH_BYTES,
    private readonly maxChunkEntries = MAX_CHUNK_ENTRIES,
    private readonly maxTailEntries = MAX_TAIL_ENTRIES,
    private readonly shards = FEED_SHARDS,
    /** The change path's: an append's flush goes on beside the change (PendingFlushes); without it an append waits for its flush (the loader's, a resync's). */
    private readonly flushes?: PendingFlushes,
  ) {}

  /**
   * What one version of a derived item owes each scope of its note: its
   * membership, then its entry. `before`: the version it replaced, and the
   * scopes for which that comparison holds (those computed against it), so
   * that a member staying in a scope costs no membership write; elsewhere
   * (a settle finishing a note it found, a note carried from an earlier
   * version) the membership is written as this version shows it.
   *
   * In two waves (waves.ts): the joins, the leaves and the entries of scopes
   * the member does not join, then the entries of the scopes it joined. A
   * member joins before its entry: a start that read the scope's position
   * before the entry lists it, or meets the entry later. A leave may land
   * with its entry: a start that lists the member before the leave lands
   * reads its item, no longer shown, and leaves it out.
   */
  async record(version: Item, scopes: readonly string[], before?: { item: Item | undefined; scopes: readonly string[] }): Promise<void> {
    const member = feedMemberOf(version);
    const gen = typeof version.gen === 'number' ? version.gen : 0;
    const now = scopesShowing(version);
    const was = scopesShowing(before?.item);
    const joins: string[] = [];
    const leaves: string[] = [];
    for (const scope of scopes) {
      const known = before?.scopes.includes(scope) ?? false;
      if (now.includes(scope)) {
        if (!(known && was.includes(scope))) joins.push(scope);
      } else if (!(known && !was.includes(scope))) {
        leaves.push(scope);
      }
    }
    await all([...joins.map((scope) => this.join(scope, member, gen)), ...leaves.map((scope) => this.leave(scope, member, gen)), ...scopes.filter((scope) => !joins.includes(scope)).map((scope) => this.append(scope, [member]))]);
    await all(joins.map((scope) => this.append(scope, [member])));
  }

  /** The member is in the scope, as of version `gen` (a newer version's word stands). */
  async join(scope: string, member: string, gen: number): Promise<void> {
    await this.io.putIf({ ...memberKey(scope, member), type: 'FEED_MEMBER', gen }, 'attribute_not_exists(#pk) OR gen < :gen', { ':gen': gen });
  }

  /** The member left the scope, as of version `gen` (a newer version's join stands). */
  async leave(scope: string, member: string, gen: number): Promise<void> {
    await this.io.deleteIf(memberKey(scope, member), 'attribute_not_exists(#pk) OR gen <= :gen', { ':gen': gen });
  }

  /**
   * Appends "may have changed" for these members, each at the next position
   * of its shard (shardOf), in order within a shard: one UpdateItem of each
   * shard's head they go to, all at once. A lost response's retry appends
   * them again (an entry more only says "look again"). Answers how many
   * chunks it wrote, for the loader's count of items written. Bulk writers
   * group their members by shard first (groupByShard), so that each call is
   * one head's.
   */
  async append(scope: string, members: readonly string[]): Promise<number> {
    const groups = groupByShard(members, this.shards);
    const chunks = await all([...groups].map(([shard, some]) => this.appendToShard(scope, shard, some)));
    return chunks.reduce((n, c) => n + c, 0);
  }

  /**
   * One shard's append: one UpdateItem of its head, and the flush it sets off.
   *
   * The head is bounded by construction: an append lands only while the tail
   * has room for it (MAX_TAIL_ENTRIES), so no run of failed flushes (a
   * partition throttled for minutes while appends go on) can grow the head
   * towards DynamoDB's 400 KB item limit, where no append, and so no flush,
   * would ever land again. An append refused for room flushes the tail as
   * stored first, then appends: the first append after such a run recovers
   * the shard.
   */
  private async appendToShard(scope: string, shard: number, members: readonly string[]): Promise<number> {
    if (members.length > this.maxTailEntries) throw new RangeError(`an append of ${members.length} members is over the tail's ${this.maxTailEntries}`);
    const key = headKey(scope, shard);
    let chunks = 0;
    for (let attempt = 1; ; attempt++) {
      const head = await this.io.updateIf(
        key,
        'SET #type = :type, #tail = list_append(if_not_exists(#tail, :empty), :members), #base = if_not_exists(#base, :one)',
        'attribute_not_exists(#tail) OR size(#tail) <= :room',
        { ':type': 'FEED_HEAD', ':empty': [], ':members': [...members], ':one': 1, ':room': this.maxTailEntries - members.length },
        { ...HEAD_NAMES, '#type': 'type' },
      );
      if (head) {
        const tail = head.tail as string[];
        const before = listBytes(tail.slice(0, tail.length - members.length));
        if (Math.floor(before / this.flushBytes) >= Math.floor(listBytes(tail) / this.flushBytes)) return chunks;
        const flush = flushTail(this.io, this.clock, scope, shard, Number(head.base), tail, this.maxChunkEntries);
        if (this.flushes) this.flushes.add(flush);
        else await flush;
        return chunks + 1;
      }
      // No room: the flushes of the appends before failed (or are still on their way). Flush what is stored, then
      // append again. Concurrent appenders may fill the room again in between; past a few rounds the change fails
      // and its redelivery (with its backoff) tries again, as for any other failed write.
      if (attempt === MAX_APPEND_ATTEMPTS) throw new FeedHeadFullError(scope, shard);
      const stored = await this.io.get(key);
      const tail = (stored?.tail ?? []) as string[];
      // A flush that landed since leaves room: append again, without a chunk shorter than a flush's.
      if (tail.length > this.maxTailEntries - members.length) {
        await flushTail(this.io, this.clock, scope, shard, Number(stored!.base), tail, this.maxChunkEntries);
        chunks++;
      }
    }
  }
}
