/**
 * What a delivery container knows of one scope's feed entries (PRODUCT
 * P16/P18; feed-cache.ts reads them): pure, no I/O.
 *
 * An entry is a fact that never changes once written: position p of shard s
 * holds member m for as long as the feed keeps it (positions are dense and
 * never reused, docs/data-model.md "Where a feed lives"). Only which
 * positions exist grows. So what one store read showed of a shard (its
 * entries after some position, with no position missing between them:
 * feed-entries.ts, entriesAfter) stays true, and the next read need only
 * ask for what lies past it. Each shard is kept as one such run,
 * positions `base` … `base + members.length - 1`: a run knows nothing
 * before `base` and nothing after its last position, so an answer from it
 * never passes a position it has not seen (the rule of P16: a cursor never
 * passes an entry that becomes visible later at a position before it).
 *
 * Content is not here: what a member shows is read fresh for each page
 * (feed-cache.ts, its states), since that changes and an entry does not.
 */
import type { FeedEntriesRead, FeedEntry } from '../core/ports.js';

/** One shard's known entries: positions base, base + 1, … in order, none missing. */
export interface ShardRun {
  base: number;
  members: string[];
}

export const runHigh = (run: ShardRun): number => run.base + run.members.length - 1;

/** A cursor's position in shard `s` is served by the run when the run holds every position after it that it knows of. */
const covers = (run: ShardRun | undefined, after: number): run is ShardRun => !!run && after >= run.base - 1 && after <= runHigh(run);

export class ScopeEntries {
  /** Per shard; empty until the first read. */
  runs: ShardRun[] = [];
  /** The entries held, all shards. */
  size = 0;

  constructor(readonly shards: number) {}

  /** Whether every shard's run serves this cursor (each shard's position within what its run knows). */
  serves(after: readonly number[]): boolean {
    return after.length === this.shards && this.runs.length === this.shards && after.every((p, s) => covers(this.runs[s], p));
  }

  /** Entries known after the cursor, all shards (the cursor served). */
  known(after: readonly number[]): number {
    return after.reduce((n, p, s) => n + (runHigh(this.runs[s]!) - p), 0);
  }

  /**
   * Up to `count` known entries after a served cursor, in order of position
   * then shard (as a store read gives them), each shard's from its position
   * on with none missing.
   */
  after(after: readonly number[], count: number): FeedEntry[] {
    const out: FeedEntry[] = [];
    after.forEach((from, shard) => {
      const run = this.runs[shard]!;
      const last = Math.min(runHigh(run), from + count);
      for (let p = from + 1; p <= last; p++) out.push({ shard, position: p, member: run.members[p - run.base]! });
    });
    return out.sort((a, b) => a.position - b.position || a.shard - b.shard).slice(0, count);
  }

  /**
   * Takes in what a store read after `after` gave (`read.entries`: in each
   * shard positions after + 1, after + 2, … with none missing). A shard's
   * run grows by what lies past its last position; a run is started where
   * there was none, or replaced by this one when it lies wholly past it (a
   * cursor ahead of what this container had seen). Answers whether a run
   * grew or changed.
   */
  merge(after: readonly number[], read: FeedEntriesRead): boolean {
    if (after.length !== this.shards || read.expired) return false;
    const byShard = after.map(() => [] as string[]);
    for (const e of read.entries) byShard[e.shard]?.push(e.member);
    let changed = false;
    after.forEach((from, shard) => {
      const got = byShard[shard]!;
      const run = this.runs[shard];
      if (!run || from > runHigh(run)) {
        this.size += got.length - (run?.members.length ?? 0);
        this.runs[shard] = { base: from + 1, members: got };
        changed = true;
        return;
      }
      if (from < run.base - 1) {
        // A read from before this run: taken only if it reaches the run (then the run starts earlier), else left.
        const reach = from + got.length;
        if (reach < run.base - 1) return;
        const before = got.slice(0, run.base - 1 - from);
        const past = got.slice(run.base - 1 - from + run.members.length);
        run.base = from + 1;
        run.members = [...before, ...run.members, ...past];
        this.size += before.length + past.length;
        changed ||= before.length + past.length > 0;
        return;
      }
      const past = got.slice(runHigh(run) - from);
      if (!past.length) return;
      run.members.push(...past);
      this.size += past.length;
      changed = true;
    });
    return changed;
  }

  /** Drops each shard's oldest entries until at most `max` are held in all (about a shard's share each). */
  trim(max: number): void {
    if (this.size <= max) return;
    const keep = Math.floor((max * 3) / 4 / this.shards);
    for (const run of this.runs) {
      if (!run || run.members.length <= keep) continue;
      const drop = run.members.length - keep;
      run.members = run.members.slice(drop);
      run.base += drop;
      this.size -= drop;
    }
  }
}
