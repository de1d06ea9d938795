/**
 * The read side's pure part: the key ranges a page after a cursor reads, and
 * the entries those reads hold after it (feed-reads.ts does the reading).
 */
import type { Item } from '../table/table-io.js';
import { feedRun } from './feed-layout.js';

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
 * its end (one Query: the heads are last, so unread too), or the ranges
 * read (entriesRanges) and, for each, whether its Queries reached its end
 * (`done`): a range cut short left its keys after the last one read unread.
 */
export type ReadCut = boolean | { ranges: readonly EntriesRange[]; done: readonly boolean[] };

/**
 * Whether every chunk key that may hold `position` (a chunk is keyed by its
 * LAST position, so any key from `chunkRangeStart(position)` on, whatever
 * range it falls in) and every head were read. A chunk of more than
 * RANGE_GAP entries that starts in one range can end in the next, or in any
 * later one: only the ranges wholly below `position` may have been cut.
 */
function readFrom(position: number, read: ReadCut): boolean {
  if (typeof read === 'boolean') return !read;
  return read.ranges.every((range, i) => read.done[i] || (range.to !== undefined && range.to < position));
}

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
 * A shard is known to its end when its head was read and either its head
 * holds every entry after the last one found or every key that may hold
 * that next entry was read (readFrom): only then can its first position
 * held nowhere be judged (a front hole), and only then does it say nothing
 * more is there. Which range's Query serves a shard says nothing of where
 * its next chunk lies: keyed by its last position, it may be in any range
 * from its shard's on.
 */
export function entriesAfter(items: readonly Item[], after: readonly number[], count: number, read: ReadCut): EntriesAfter {
  const shards = after.length;
  // The heads are the last keys of the last range.
  const headsRead = typeof read === 'boolean' ? !read : read.done.at(-1) === true;
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
    const next = (runs[shard]!.at(-1)?.position ?? from) + 1;
    // Its head holds every entry from the next one on, or every key where a chunk holding that one could be was read.
    return base <= next || readFrom(next, read);
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
