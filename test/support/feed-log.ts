/**
 * A scope's feed as a plain log per shard, behind the FeedReader port, for
 * the tests of what reads through it (lambdas/delivery/feed-cache.ts): each
 * shard's members by position, answered as the store answers
 * (feed-entries.ts: each shard's entries after its position with none
 * missing, all shards' in order of position then shard, cut at `count`,
 * `more` when any is left), every call counted and its hook run first, so a
 * test can append between a read's start and its answer.
 */
import type { FeedEntriesRead, FeedEntry, FeedMemberState, FeedMembersRead, FeedReader } from '../../lambdas/core/ports.js';
import { FEED_SHARDS } from '../../lambdas/core/feed-cursor.js';

export class FeedLog implements FeedReader {
  readonly logs = new Map<string, string[][]>();
  /** What each member shows now (feedStates), by member id. */
  readonly shown = new Map<string, Record<string, unknown>>();
  readonly calls = { entries: [] as { scope: string; after: number[]; count: number }[], states: [] as string[][] };
  /** Run before each call is answered (the test's appends, at the moment the store would read). */
  beforeRead: () => Promise<void> | void = () => {};
  /** Positions below these are gone (their chunks expired): a read after them answers expired. */
  expiredBelow = new Map<string, number[]>();

  log(scope: string): string[][] {
    let log = this.logs.get(scope);
    if (!log) this.logs.set(scope, (log = Array.from({ length: FEED_SHARDS }, () => [])));
    return log;
  }

  append(scope: string, shard: number, ...members: string[]): void {
    this.log(scope)[shard]!.push(...members);
  }

  heads(scope: string): number[] {
    return this.log(scope).map((l) => l.length);
  }

  async feedEntries(scope: string, after: readonly number[], count: number): Promise<FeedEntriesRead> {
    this.calls.entries.push({ scope, after: [...after], count });
    await this.beforeRead();
    const gone = this.expiredBelow.get(scope);
    if (gone && after.some((p, s) => p + 1 < gone[s]! && this.log(scope)[s]!.length > p)) return { entries: [], more: true, expired: true };
    const merged: FeedEntry[] = [];
    this.log(scope).forEach((members, shard) => members.forEach((member, i) => i + 1 > after[shard]! && merged.push({ shard, position: i + 1, member })));
    merged.sort((a, b) => a.position - b.position || a.shard - b.shard);
    return { entries: merged.slice(0, count), more: merged.length > count, expired: false };
  }

  async feedHead(scope: string): Promise<number[]> {
    return this.heads(scope);
  }

  async feedMembers(): Promise<FeedMembersRead> {
    return { members: [], last: '', more: false };
  }

  async feedStates(_scope: string, members: readonly string[]): Promise<Map<string, FeedMemberState>> {
    this.calls.states.push([...members]);
    await this.beforeRead();
    return new Map(members.map((m) => [m, { item: this.shown.get(m), shown: this.shown.has(m) }]));
  }

  async userIdByName(): Promise<string | null> {
    return null;
  }
}
