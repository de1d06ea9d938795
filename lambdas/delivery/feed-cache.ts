/**
 * The delivery container's reads of the changes feeds (PRODUCT P18,
 * "Freshness and scale"; docs/design.md, "Webhooks at scale"): one per
 * container, shared by every webhook it delivers, a FeedReader over the
 * store's, so that a scope's feed partition sees reads per container, not
 * per webhook, and its content stays what the read routes show when sent.
 *
 * - **Entries** (positions → members, facts that never change:
 *   entries-cache.ts) are kept per scope, and a read asks the store only
 *   for what lies past what the container holds (a refresh: the scope's
 *   heads and its chunks after those positions, one Query). A page is
 *   answered from what is held when that holds a whole page past the
 *   cursor. A page that would end the feed ("nothing more") is answered only
 *   from a refresh that started after the reader's mark (`since`): a
 *   webhook's run takes its mark when it starts, after the wake-up that
 *   the entry's head write caused, so a run never stops short of an entry
 *   that woke it; an entry written after its refresh wakes the webhook
 *   again. Refreshes of a scope are one at a time, shared by every reader
 *   they serve, and at least `refreshIntervalMs` apart, which bounds what
 *   a container reads of a scope's partition whatever its number of
 *   webhooks (docs/performance.md, "Webhooks").
 * - **Content** (feedStates: each member's current item) is never kept: it
 *   is read for every page, the reads of pages asked for together (before
 *   the read is sent) made as one BatchGetItem of their members. A page
 *   only ever joins a read that has not started yet, so what it shows is
 *   read after it was asked for, as its own read would be.
 * - A cursor behind what the container holds, the start of a scope from no
 *   cursor (its members) and its head are the store's own reads, passed
 *   through: retention (an expired position's 410), front holes and "more"
 *   are the store's rules (feed-reads.ts), unchanged.
 */
import type { FeedEntriesRead, FeedMemberState, FeedMembersRead, FeedReader } from '../core/ports.js';
import { FEED_SHARDS } from '../core/feed-cursor.js';
import { ScopeEntries, runHigh } from './entries-cache.js';

/**
 * The delivery function's most concurrent invocations (its event source's
 * maximum concurrency, lib/webhooks.ts): each is one container, each holds
 * one FeedCache.
 */
export const DELIVERY_CONCURRENCY = 1000;
/**
 * The least time between two refreshes of one scope by one container: a
 * scope's feed partition is refreshed by the webhooks' deliveries at most
 * DELIVERY_CONCURRENCY times over this a second, however many webhooks it
 * has (500 a second; a refresh at a scope's front reads about 3 read units,
 * so under half of a partition's 3,000, and far less unless every container
 * delivers that scope at its front at once: docs/performance.md,
 * "Webhooks"). A run waits at most this long for a refresh, and only when
 * its container refreshed the scope less than this long before.
 */
export const FEED_REFRESH_INTERVAL_MS = 2000;
/** Entries one refresh asks the store for (one Query: a few hundred items at most). */
export const FEED_REFRESH_ENTRIES = 1000;
/** Entries a container holds per scope (about 50 bytes each); the oldest are dropped first. */
export const FEED_CACHE_MAX_ENTRIES = 50_000;
/** Scopes a container holds; the least recently read is dropped first. */
export const FEED_CACHE_MAX_SCOPES = 64;
/**
 * What a container holds of a scope is forgotten this long after it began
 * (one refresh to hold it again): entries it read stay true, but a feed
 * keeps them 30 days only, and a container must never answer from
 * positions the feed no longer keeps (P16's retention is the store's rule).
 */
export const FEED_CACHE_MAX_AGE_MS = 6 * 3_600_000;

export interface FeedCacheOptions {
  refreshIntervalMs?: number;
  refreshEntries?: number;
  maxEntries?: number;
  maxScopes?: number;
  maxAgeMs?: number;
  /** How long content reads wait to gather pages before they are sent (0: those asked for in the same turn of the event loop). */
  statesWindowMs?: number;
  /** A monotonic clock in ms (the interval's). */
  now?: () => number;
  /** Waits out the interval (tests inject one that does not sleep). */
  sleep?: (ms: number) => Promise<void>;
}

/** A point in the container's reads: a refresh started after it has a greater epoch. */
export type FeedMark = number;

interface Refresh {
  /** Undefined while it waits for its turn: it will start after every mark taken until then. */
  epoch?: number;
  done: Promise<void>;
}

interface ScopeState {
  entries: ScopeEntries;
  /** The epoch of the last refresh that read every shard to its end (-1: none). */
  complete: number;
  refresh?: Refresh;
  lastStart: number;
  used: number;
  /** When its entries began to be held. */
  born: number;
}

interface StatesBatch {
  members: Set<string>;
  read: Promise<Map<string, FeedMemberState>>;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class FeedCache implements FeedReader {
  private epoch = 0;
  private tick = 0;
  private readonly scopes = new Map<string, ScopeState>();
  private readonly batches = new Map<string, StatesBatch>();
  private readonly opts: Required<FeedCacheOptions>;

  constructor(
    private readonly inner: FeedReader,
    opts: FeedCacheOptions = {},
  ) {
    this.opts = {
      refreshIntervalMs: opts.refreshIntervalMs ?? FEED_REFRESH_INTERVAL_MS,
      refreshEntries: opts.refreshEntries ?? FEED_REFRESH_ENTRIES,
      maxEntries: opts.maxEntries ?? FEED_CACHE_MAX_ENTRIES,
      maxScopes: opts.maxScopes ?? FEED_CACHE_MAX_SCOPES,
      maxAgeMs: opts.maxAgeMs ?? FEED_CACHE_MAX_AGE_MS,
      statesWindowMs: opts.statesWindowMs ?? 0,
      now: opts.now ?? (() => performance.now()),
      sleep: opts.sleep ?? sleepFor,
    };
  }

  /** The reader's mark: a page that ends the feed is answered only from a refresh started after it. */
  mark(): FeedMark {
    return this.epoch;
  }

  /** The feeds as seen by a reader that holds `mark` (a webhook's run, from its start). */
  since(mark: FeedMark): FeedReader {
    return {
      feedEntries: (scope, after, count) => this.entriesSince(mark, scope, after, count),
      feedHead: (scope) => this.inner.feedHead(scope),
      feedMembers: (scope, after, count) => this.inner.feedMembers(scope, after, count),
      feedStates: (scope, members) => this.feedStates(scope, members),
      userIdByName: (username) => this.inner.userIdByName(username),
    };
  }

  /** Without a mark: "nothing more" only from a refresh started after this call. */
  feedEntries(scope: string, after: readonly number[], count: number): Promise<FeedEntriesRead> {
    return this.entriesSince(this.mark(), scope, after, count);
  }

  feedHead(scope: string): Promise<number[]> {
    return this.inner.feedHead(scope);
  }

  feedMembers(scope: string, after: string, count: number): Promise<FeedMembersRead> {
    return this.inner.feedMembers(scope, after, count);
  }

  userIdByName(username: string): Promise<string | null> {
    return this.inner.userIdByName(username);
  }

  /** Each member's current item, read after this call: with the other pages' members asked for before the read is sent. */
  feedStates(scope: string, members: readonly string[]): Promise<Map<string, FeedMemberState>> {
    let batch = this.batches.get(scope);
    if (!batch) {
      const gathered = new Set<string>();
      const read = new Promise<void>((resolve) => (this.opts.statesWindowMs > 0 ? setTimeout(resolve, this.opts.statesWindowMs) : setImmediate(resolve))).then(() => {
        // From here on a page asking for members starts a read of its own.
        this.batches.delete(scope);
        return this.inner.feedStates(scope, [...gathered]);
      });
      batch = { members: gathered, read };
      this.batches.set(scope, batch);
    }
    for (const m of members) batch.members.add(m);
    return batch.read.then((all) => new Map(members.map((m) => [m, all.get(m) ?? { item: undefined, shown: false }])));
  }

  private async entriesSince(mark: FeedMark, scope: string, after: readonly number[], count: number): Promise<FeedEntriesRead> {
    const st = this.state(scope);
    const answer = this.fromHeld(st, mark, after, count);
    if (answer) return answer;
    if (!this.behind(st, after)) {
      await this.refreshed(st, scope, mark, after);
      const fresh = this.fromHeld(st, mark, after, count, true);
      if (fresh) return fresh;
    }
    // A cursor behind what the container holds, or far past it: the store's own read, and what it shows is kept. One
    // a little behind reads on until it meets what is held (its next pages are then the container's).
    const gap = this.gap(st, after);
    const ask = gap > 0 && gap <= this.opts.refreshEntries ? gap + count : count;
    const read = await this.inner.feedEntries(scope, after, ask);
    if (st.entries.merge(after, read)) st.entries.trim(this.opts.maxEntries);
    return ask === count ? read : { entries: read.entries.slice(0, count), more: read.more || read.entries.length > count, expired: read.expired };
  }

  /** The entries between a cursor behind what is held and the start of what is held, all shards (0: not behind). */
  private gap(st: ScopeState, after: readonly number[]): number {
    if (!this.behind(st, after)) return 0;
    return after.reduce((n, p, s) => n + Math.max(0, st.entries.runs[s]!.base - 1 - p), 0);
  }

  /** The answer from what is held, or undefined when a read is needed (`refreshed`: a refresh since the mark was just made). */
  private fromHeld(st: ScopeState, mark: FeedMark, after: readonly number[], count: number, refreshed = false): FeedEntriesRead | undefined {
    if (!st.entries.serves(after)) return undefined;
    const known = st.entries.known(after);
    const ended = st.complete > mark;
    if (known < count && !ended && !refreshed) return undefined;
    return { entries: st.entries.after(after, count), more: known > count || !ended, expired: false };
  }

  /** Whether some shard's position lies before the run this container holds of it (a read of the store's, not a refresh). */
  private behind(st: ScopeState, after: readonly number[]): boolean {
    return st.entries.runs.length === after.length && after.some((p, s) => p < st.entries.runs[s]!.base - 1);
  }

  /** Waits for a refresh of the scope that started after `mark` (joining one that will, or starting one). */
  private async refreshed(st: ScopeState, scope: string, mark: FeedMark, after: readonly number[]): Promise<void> {
    for (;;) {
      const current = st.refresh;
      if (current && (current.epoch === undefined || current.epoch > mark)) return current.done;
      if (current) {
        await current.done.catch(() => undefined);
        continue;
      }
      const from = st.entries.runs.length === after.length ? st.entries.runs.map(runHigh) : [...after];
      const refresh: Refresh = { done: Promise.resolve() };
      refresh.done = this.refresh(st, scope, refresh, from).finally(() => {
        if (st.refresh === refresh) st.refresh = undefined;
      });
      st.refresh = refresh;
      return refresh.done;
    }
  }

  /** One read of what lies past `from`, at least the interval after the scope's last, its epoch taken as it starts. */
  private async refresh(st: ScopeState, scope: string, refresh: Refresh, from: readonly number[]): Promise<void> {
    const wait = st.lastStart + this.opts.refreshIntervalMs - this.opts.now();
    if (wait > 0) await this.opts.sleep(wait);
    const epoch = ++this.epoch;
    refresh.epoch = epoch;
    st.lastStart = this.opts.now();
    const read = await this.inner.feedEntries(scope, from, this.opts.refreshEntries);
    if (read.expired) {
      // Past what the feed keeps: forget it; readers go to the store.
      this.forget(st);
      return;
    }
    st.entries.merge(from, read);
    st.entries.trim(this.opts.maxEntries);
    if (!read.more) st.complete = Math.max(st.complete, epoch);
  }

  private state(scope: string): ScopeState {
    let st = this.scopes.get(scope);
    if (!st) {
      st = { entries: new ScopeEntries(FEED_SHARDS), complete: -1, lastStart: -Infinity, used: 0, born: this.opts.now() };
      this.scopes.set(scope, st);
      if (this.scopes.size > this.opts.maxScopes) this.evict();
    } else if (!st.refresh && this.opts.now() - st.born > this.opts.maxAgeMs) {
      this.forget(st);
    }
    st.used = ++this.tick;
    return st;
  }

  private forget(st: ScopeState): void {
    st.entries = new ScopeEntries(FEED_SHARDS);
    st.complete = -1;
    st.born = this.opts.now();
  }

  private evict(): void {
    let oldest: [string, ScopeState] | undefined;
    for (const entry of this.scopes) if (!entry[1].refresh && (!oldest || entry[1].used < oldest[1].used)) oldest = entry;
    if (oldest) this.scopes.delete(oldest[0]);
  }
}
