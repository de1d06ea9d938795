/**
 * Changes feeds (PRODUCT P16): where they live in the table and how the write
 * side writes them (docs/data-model.md, "Changes feeds").
 *
 * An entry says only "member M of scope S may have changed": position and
 * member id, never content. The feed route reads each member's current item
 * when it answers, so it shows what the read routes show then, and a hidden
 * or deleted member is `removed` whatever happened in between.
 *
 * One partition per scope, `FEED#{scope}`, its entries in FEED_SHARDS head
 * shards: a member's entries always go to the same shard (shardOf, a hash of
 * its id), and each shard is an independent log with its own positions 1, 2,
 * … The shards are there for the head's size: an entry stays in a head from
 * its append until its chunk is written and the head trimmed (two more round
 * trips), so N appenders back to back keep about 2·N entries in one head
 * (Little's law), over 1 KB (2 write units an append) with 16 appenders and
 * long ids; H shards share them, about 2·N/H entries a head.
 * - heads `H#{shard}`: `base` and `tail`, the shard's newest entries
 *   (positions base, base + 1, …). An append is one UpdateItem, `list_append`
 *   onto the tail: DynamoDB applies the updates of one item one at a time,
 *   so each append takes the shard's next positions with no read before it.
 *   Positions are dense and never reused: a head never expires.
 * - chunks `C#{last position}#{shard}`: runs of a shard's older entries
 *   (`lo`, `members`), keyed position first so that one Query from the
 *   lowest position a cursor still needs reads every shard's chunks after it
 *   and then the heads. The append whose tail crosses a multiple of the
 *   flush size copies the tail into a chunk, then removes those entries from
 *   the tail (conditional on `base`, so only once). A crash between leaves
 *   them in both places, the same entries at the same positions. A chunk
 *   expires 31 days after it is written: entries are kept at least 30 days
 *   (feed-cursor.ts, `asOf`).
 * - members `M#{member}`: the scope's current members, for a start from no
 *   cursor (which reads them, not the entries: it costs the members there
 *   are now, not the history). A member joins (`gen`: the version that
 *   showed it) before the entry that announces it, so a start that read the
 *   scope's position before its members either lists it or meets that entry
 *   later. One that leaves is deleted. Both are conditional on `gen`, so a
 *   late leave of an older version cannot remove a newer join; a late join
 *   of an older version can list a member that is not shown (a start skips
 *   it), until the member's next change in the scope.
 * A member is appended only to scopes that the version written or the one it
 * replaced shows it in (derivation.ts), so `removed` appears only in a scope
 * that showed the id: the replaced version was there, on the read routes.
 */
import { INDEXES, PK, SK, TTL_ATTRIBUTE, keys } from '../table/table.js';
import type { Item, Key, TableIO } from '../table/table-io.js';
import type { Clock } from '../../core/clock.js';
import { createHash } from 'node:crypto';
import { FEED_SHARDS, everyShardAt, feedScopes } from '../../core/feed-cursor.js';
import { sameContent } from '../table/item-content.js';
import { placeName, placeOf, placeQueriesOf } from '../../core/place.js';
import { all } from '../table/waves.js';

export const FEED_PARTITION_PREFIX = 'FEED#';
/** A head shard's sort key is `H#{shard}`; `H` alone is the single head of the layout before the shards, read by nothing. */
export const FEED_HEAD_PREFIX = 'H#';
/** Above every head's sort key and below the members': the end of an entries read's range. */
export const FEED_HEADS_END = 'H#~';
export const FEED_CHUNK_PREFIX = 'C#';
export const FEED_MEMBER_PREFIX = 'M#';
/**
 * The attribute of a derived item that holds its feed note (derivation.ts):
 * the scopes its writes are appended to. Owed only while a source item that
 * derived it is still `pending`; a settle of such an item appends them again.
 */
export const FEED_NOTE = 'feed_note';
/** Chunks are kept a day longer than a cursor lives, for the clocks of the functions that write and read them. */
export const CHUNK_TTL_SECONDS = 31 * 86_400;
/**
 * The tail is copied into a chunk each time its size crosses a multiple of
 * this many bytes: appends stay within one write unit (1 KB) with room for
 * those that land while a flush runs (about 2 round trips of a shard's
 * appenders: with FEED_SHARDS heads, 16 appenders leave about 4 in a head).
 * Each flush bills 2 units (its chunk and its trim), shared by the appends
 * between two: at 560 bytes, 9 of the longest ids (1.22 units an append)
 * rather than 7 at 480 (1.29), which 16 appenders of the longest ids took
 * past 1.3 (scripts/bench-head.ts).
 */
export const TAIL_FLUSH_BYTES = 560;
/** At most this many entries go into one chunk (the trim's REMOVE lists each). */
export const MAX_CHUNK_ENTRIES = 200;
/**
 * Members a bulk writer (the loader, a resync's notes) appends in one call:
 * half a chunk, so the flush each such append sets off moves the whole tail
 * and a tail left long by a crash between an append and its flush drains.
 * Fewer, larger writes than a change's appends: about 0.12 billed units an
 * entry against 0.19 in appends of 16 (the head, the chunk and the trim each
 * about 4 KB).
 */
export const BULK_APPEND = 100;
/**
 * The most entries a head's tail holds (each shard's): one flush (a chunk of
 * MAX_CHUNK_ENTRIES) empties a full tail, and with the contract's longest
 * ids (68 characters) the head stays under HEAD_MAX_BYTES whatever fails.
 */
export const MAX_TAIL_ENTRIES = MAX_CHUNK_ENTRIES;
/** The contract's longest id (docs/dataset-format.md), which bounds an entry's size. */
export const MAX_MEMBER_ID_LENGTH = 68;
/**
 * The head's largest size in bytes, by construction: its keys and attributes
 * with the longest scope (an event's guest feed of the longest event id) and
 * a full tail of the longest ids. Held by test/integration/feed-head-bound.test.ts.
 */
export const HEAD_MAX_BYTES = headBytes(`GUESTS#${'e'.repeat(MAX_MEMBER_ID_LENGTH)}`, MAX_TAIL_ENTRIES, MAX_MEMBER_ID_LENGTH, FEED_SHARDS - 1);
/** An append refused for room flushes and tries again this many times in all before its change fails. */
const MAX_APPEND_ATTEMPTS = 3;
const POSITION_DIGITS = 12;
/** `base` is one of DynamoDB's reserved words. */
const HEAD_NAMES = { '#tail': 'tail', '#base': 'base' };

export { FEED_SHARDS, everyShardAt, feedScopes };

/**
 * The head shard of a member's entries in any scope, of `shards`: stable, so
 * one member's entries stay in order in one log and a retry goes where its
 * first try went.
 */
export const shardOf = (member: string, shards = FEED_SHARDS): number => (shards === 1 ? 0 : createHash('sha256').update(member).digest().readUInt32BE(0) % shards);

export const feedPartition = (scope: string): string => `${FEED_PARTITION_PREFIX}${scope}`;
export const headKey = (scope: string, shard: number): Key => ({ [PK]: feedPartition(scope), [SK]: headSortKey(shard) });
export const chunkSortKey = (last: number, shard: number): string => `${FEED_CHUNK_PREFIX}${String(last).padStart(POSITION_DIGITS, '0')}#${shard}`;
/** The first chunk key that may hold a position at or after `position`, whatever its shard. */
export const chunkRangeStart = (position: number): string => `${FEED_CHUNK_PREFIX}${String(position).padStart(POSITION_DIGITS, '0')}`;
export const memberKey = (scope: string, memberId: string): Key => ({ [PK]: feedPartition(scope), [SK]: `${FEED_MEMBER_PREFIX}${memberId}` });

/** The bytes DynamoDB counts for a list of strings (3, and per element 1 plus its UTF-8 length). */
export const listBytes = (members: readonly string[]): number => 3 + members.reduce((n, m) => n + 1 + Buffer.byteLength(m), 0);

/** A function, not a const: HEAD_MAX_BYTES needs it while the module loads. */
export function headSortKey(shard: number): string {
  return `${FEED_HEAD_PREFIX}${shard}`;
}

/** The bytes of head `shard` of this scope holding `entries` ids of `idLength` ASCII characters (`base` at its widest). */
export function headBytes(scope: string, entries: number, idLength: number, shard = 0): number {
  const keyBytes = PK.length + Buffer.byteLength(`${FEED_PARTITION_PREFIX}${scope}`) + SK.length + headSortKey(shard).length;
  const attributes = 'type'.length + 'FEED_HEAD'.length + 'base'.length + 21 + 'tail'.length;
  return keyBytes + attributes + 3 + entries * (1 + idLength);
}

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

/** Shown on a read route: in the event index (both event items and RSVP items). */
export const isShown = (item: Item | undefined): boolean => !!item && item.type !== 'TOMBSTONE' && item[INDEXES.event.partitionKey] !== undefined;

/**
 * The scopes a derived item shows its member in: an event item in the
 * catalogue, its host's feed and the feed of each place query it answers
 * (city and country, country alone, city alone: lambdas/core/place.ts, the
 * discovery index's rule), an RSVP item in its event's guest feed; none
 * while it is not shown. An event that moves is then appended to its old
 * places (a removal there) and its new ones.
 */
export function scopesShowing(item: Item | undefined): string[] {
  if (!isShown(item)) return [];
  const sk = String(item![SK]);
  if (sk === 'EVENT') {
    const places = placeQueriesOf(placeOf(item!.location as Parameters<typeof placeOf>[0])).map((q) => feedScopes.place(placeName(q)));
    return [feedScopes.catalogue(), feedScopes.host(String((item!.creator as { id: string }).id)), ...places];
  }
  if (sk.startsWith('RSVP#')) return [feedScopes.guests(String(item!.event_id))];
  return [];
}

/** What a feed shows of an item; guest counts are not part of a public event. */
const VIEW_IGNORES = new Set(['guest_counts', 'revealing', FEED_NOTE]);
const view = (item: Item): Item => Object.fromEntries(Object.entries(item).filter(([k]) => !VIEW_IGNORES.has(k)));

/**
 * The scopes a write from `have` to `want` must be appended to: every scope
 * either version shows the member in, unless both show the same thing there
 * (a guest-count change of an event is no change to its feeds).
 */
export function scopesToAppend(have: Item | undefined, want: Item): string[] {
  const before = scopesShowing(have);
  const after = scopesShowing(want);
  if (have && before.length && after.length && sameContent(view(have), view(want))) return [];
  return [...new Set([...before, ...after])];
}

/** The member id of a derived item in its feeds. */
export function feedMemberOf(item: Item): string {
  const sk = String(item[SK]);
  return sk === 'EVENT' ? String(item.event_id ?? String(item[PK]).slice('EVENT#'.length)) : sk.slice(sk.indexOf('#') + 1);
}

/** The item whose current state a feed shows for a member. */
export function memberItemKey(scope: string, memberId: string): Key {
  if (scope.startsWith('GUESTS#')) return keys.rsvp(scope.slice('GUESTS#'.length), memberId);
  return keys.event(memberId);
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
        await this.flush(scope, shard, Number(head.base), tail);
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
        await this.flush(scope, shard, Number(stored!.base), tail);
        chunks++;
      }
    }
  }

  /** Copies the tail as read into a chunk, then removes those entries from the head (only if no flush did since). */
  private async flush(scope: string, shard: number, base: number, tail: readonly string[]): Promise<void> {
    const moved = tail.slice(0, this.maxChunkEntries);
    const last = base + moved.length - 1;
    await this.io.put({ [PK]: feedPartition(scope), [SK]: chunkSortKey(last, shard), type: 'FEED_CHUNK', lo: base, members: moved, [TTL_ATTRIBUTE]: this.chunkExpiry() });
    // Highest index first: DynamoDB reads every index of one REMOVE against the list as it was, dynalite removes them
    // one after another; from the end both remove the same elements (test/integration/store-differences.test.ts).
    const removes = moved.map((_, i) => `#tail[${moved.length - 1 - i}]`).join(', ');
    await this.io.updateIf(headKey(scope, shard), `REMOVE ${removes} SET #base = :next`, '#base = :base', { ':next': last + 1, ':base': base }, HEAD_NAMES);
  }

  private chunkExpiry(): number {
    return Math.floor(this.clock().getTime() / 1000) + CHUNK_TTL_SECONDS;
  }
}

/**
 * What a full load appends: for every scope, the members the derived items
 * show there, in the order given (the loader joins them, then appends them
 * as changes do: local/loader.ts).
 */
export function loadedMembers(derived: readonly Item[]): Map<string, string[]> {
  const byScope = new Map<string, string[]>();
  for (const item of derived) for (const scope of scopesShowing(item)) byScope.set(scope, [...(byScope.get(scope) ?? []), feedMemberOf(item)]);
  return byScope;
}

/**
 * Members grouped by their shard (shardOf), each group in the order given:
 * what one append writes to each head, and how bulk writers (the loader, a
 * resync) cut their appends so that each is one head's.
 */
export function groupByShard(members: readonly string[], shards = FEED_SHARDS): Map<number, string[]> {
  const groups = new Map<number, string[]>();
  for (const member of members) {
    const shard = shardOf(member, shards);
    groups.set(shard, [...(groups.get(shard) ?? []), member]);
  }
  return groups;
}

/** A feed item's shard and run of entries, or undefined for an item of no shard (the layout before the shards, members). */
export function feedRun(item: Item, shards = FEED_SHARDS): { shard: number; head: boolean; lo: number; members: string[] } | undefined {
  const sk = String(item[SK]);
  const head = sk.startsWith(FEED_HEAD_PREFIX);
  if (!head && !sk.startsWith(FEED_CHUNK_PREFIX)) return undefined;
  const tag = head ? sk.slice(FEED_HEAD_PREFIX.length) : sk.slice(FEED_CHUNK_PREFIX.length + POSITION_DIGITS + 1);
  if (!head && sk[FEED_CHUNK_PREFIX.length + POSITION_DIGITS] !== '#') return undefined;
  const shard = /^[0-9]+$/.test(tag) ? Number(tag) : -1;
  if (shard < 0 || shard >= shards) return undefined;
  return { shard, head, lo: Number(head ? item.base : item.lo), members: ((head ? item.tail : item.members) ?? []) as string[] };
}

/** A feed entry: the shard whose log holds it, its position there, and its member. */
export interface ShardEntry {
  shard: number;
  position: number;
  member: string;
}

/**
 * Shards whose positions lie within this many of each other are read by one
 * range: its chunks of the shards ahead of the lowest, at or below their own
 * positions, are read for nothing (about a sixtieth of a read unit a
 * position: a shard 64 positions ahead costs about one unit, what another
 * Query would).
 */
export const RANGE_GAP = 64;

/**
 * One key range of a page's read: the shards it serves, and positions
 * `from`..`to` of every shard's chunks (`to` absent: on through the heads).
 */
export interface EntriesRange {
  shards: number[];
  from: number;
  to?: number;
}

/**
 * The ranges a page after `after` reads, each one Query, all at once: the
 * cursor's positions in clusters no more than `gap` apart, each read from
 * its lowest position + 1 up to the next cluster's lowest, the last one on
 * through the heads. Usually one (the shards move on together); a shard far
 * ahead of the others (one member changed thousands of times while the
 * others rested) gets a range of its own, so that the chunks it wrote
 * between are not read at every page.
 */
export function entriesRanges(after: readonly number[], gap = RANGE_GAP): EntriesRange[] {
  const order = after.map((position, shard) => ({ position, shard })).sort((a, b) => a.position - b.position || a.shard - b.shard);
  const clusters: { shards: number[]; lo: number; hi: number }[] = [];
  for (const { position, shard } of order) {
    const last = clusters.at(-1);
    if (last && position - last.hi <= gap) {
      last.shards.push(shard);
      last.hi = position;
    } else {
      clusters.push({ shards: [shard], lo: position, hi: position });
    }
  }
  return clusters.map((c, i) => {
    const next = clusters[i + 1];
    return next ? { shards: c.shards, from: c.lo + 1, to: next.lo } : { shards: c.shards, from: c.lo + 1 };
  });
}

/** What one read of a scope's chunks and heads holds after a cursor's positions. */
export interface EntriesAfter {
  /**
   * At most `count` entries: in each shard those at after + 1, after + 2, …
   * with no position missing between them, all shards' in order of position
   * (then shard), so that a page cut anywhere moves every shard forward alike.
   */
  entries: ShardEntry[];
  /** Whether entries beyond these were seen or may exist. */
  more: boolean;
  /**
   * In some shard, position after + 1 is held nowhere while later ones are:
   * expired, or a flush moved it between two item reads.
   */
  frontHole: boolean;
}

/**
 * What a read left unread: `true` when the read stopped at its Limit before
 * its end (one Query: the heads are last, so unread too), or per shard,
 * whether the range that serves it stopped early (`cut`) and whether every
 * head was read (`headsRead`: the range through the heads reached its end).
 */
export type ReadCut = boolean | { cut: readonly boolean[]; headsRead: boolean };

/**
 * The entries a read of chunks and heads (in any state a concurrent flush
 * leaves them: a Query reads each item when it reaches it, not all at one
 * moment, and several Queries at once read in any order) holds after `after`
 * (one position per shard), stopping in each shard at its first position
 * held nowhere. A flush writes its chunk before it trims the head, so a
 * position missing between two that were read is one a flush moved while
 * this read ran: the next read finds it. The same entry in two items is the
 * same member. Items of another shard count (or none: the layout before the
 * shards) are not read.
 *
 * A shard is known to its end when its head was read and either its range
 * was read to its end or its head holds every entry after its position:
 * only then can its first position held nowhere be judged (a front hole),
 * and only then does it say nothing more is there.
 */
export function entriesAfter(items: readonly Item[], after: readonly number[], count: number, read: ReadCut): EntriesAfter {
  const shards = after.length;
  const cut = typeof read === 'boolean' ? after.map(() => read) : read.cut;
  const headsRead = typeof read === 'boolean' ? !read : read.headsRead;
  const byPosition = Array.from({ length: shards }, () => new Map<number, string>());
  const highest = [...after];
  const heads = new Map<number, number>();
  for (const item of items) {
    const run = feedRun(item, shards);
    if (!run) continue;
    if (run.head) heads.set(run.shard, run.lo);
    run.members.forEach((member, i) => {
      if (run.lo + i > after[run.shard]!) byPosition[run.shard]!.set(run.lo + i, member);
    });
    highest[run.shard] = Math.max(highest[run.shard]!, run.lo + run.members.length - 1);
  }
  const runs = after.map((from, shard) => {
    const run: ShardEntry[] = [];
    for (let p = from + 1; byPosition[shard]!.has(p) && run.length < count; p++) run.push({ shard, position: p, member: byPosition[shard]!.get(p)! });
    return run;
  });
  const known = after.map((from, shard) => {
    const base = heads.get(shard);
    // A head read, or (every head read) none: the shard has never had an entry.
    if (base === undefined) return headsRead && !items.some((item) => feedRun(item, shards)?.shard === shard);
    const reached = runs[shard]!.at(-1)?.position ?? from;
    return !cut[shard] || base <= reached + 1;
  });
  const merged = runs.flat().sort((a, b) => a.position - b.position || a.shard - b.shard);
  const entries = merged.slice(0, count);
  const taken = after.map((from, shard) => entries.reduce((last, e) => (e.shard === shard ? e.position : last), from));
  return {
    entries,
    more: merged.length > count || taken.some((last, shard) => !known[shard] || highest[shard]! > last),
    frontHole: runs.some((run, shard) => run.length === 0 && known[shard] && highest[shard]! > after[shard]!),
  };
}
