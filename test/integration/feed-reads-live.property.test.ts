/**
 * A feed read never calls a live position expired (issue 57 item 2; PRODUCT
 * P16's retention): whatever the chunks' sizes, however a cursor's positions
 * split into ranges and wherever DynamoDB stops a Query, every cursor a
 * follower can hold is answered with its next entries, or, only when
 * retention really passed, 410.
 *
 * The production writer (FeedWriter, 8 head shards) writes one scope's
 * entries over weeks of an injected clock: appends of 1 to 100 members,
 * spread over every shard or all in one (so that shards drift apart and a
 * cursor's positions split into several ranges), flushed at any size from
 * every append to only when the tail is full, and flushes that fail at their
 * chunk (a throttle: the tail grows, the next flush moves up to 200) or at
 * their trim (a crash between: the same entries in a chunk and in the head).
 * So chunks hold 1 to 200 entries. DynamoDB's TTL deletes any expired items
 * it likes whenever time has passed. Every Query of a page's ranges stops
 * wherever the adversary says, at any item up to its Limit (what DynamoDB's
 * 1 MB page does), the reads that go on after it too; the ranges' gap is the
 * production one (64) or smaller, for more splits.
 *
 * Two observers:
 * - a follower through the route's own code (catalogueChanges), which goes
 *   on from any cursor it was ever given (a consumer restoring an older
 *   one): each page gives each shard's entries from the cursor's position
 *   on, with no position skipped, the member written there; a page that says
 *   `has_more: false` leaves it at every shard's last position; 410 only once
 *   the cursor's `asOf` is more than 30 days old;
 * - the read itself (FeedReads.feedEntries) at any positions at all (the
 *   follower's, and positions drawn anywhere up to each shard's last), also
 *   those of a cursor long expired: it answers the next entries, never past
 *   a position held nowhere, and `expired` only when some shard's next
 *   position really is held nowhere; a read that is not expired and says
 *   more moves on.
 *
 * Seeded, so that what the cases range over (asserted at the end) holds on
 * every run: FEED_READ_RUNS sets the number of cases (default 40; the second
 * store runs 15: test/support/dynamodb-local.env.ts), FEED_READ_SEED another
 * sequence (a failure prints the seed and path that replay it),
 * FEED_READ_STATS=1 prints what the cases met.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CURSOR_LIFETIME_SECONDS, parseCursor } from '../../lambdas/core/feed-cursor.js';
import { CursorExpiredError, catalogueChanges, type FeedContext } from '../../lambdas/core/feeds.js';
import type { FeedEntriesRead, FeedReader } from '../../lambdas/core/ports.js';
import { FeedWriter, FeedHeadFullError } from '../../lambdas/store/feeds/feed-append.js';
import { FEED_SHARDS, MAX_CHUNK_ENTRIES, MAX_TAIL_ENTRIES, feedRun, shardOf } from '../../lambdas/store/feeds/feed-layout.js';
import { RANGE_GAP } from '../../lambdas/store/feeds/feed-entries.js';
import { FeedReads } from '../../lambdas/store/feeds/feed-reads.js';
import { TTL_ATTRIBUTE } from '../../lambdas/store/table/table.js';
import { TableIO } from '../../lambdas/store/table/table-io.js';
import { ensureTable } from '../../local/dynalite.js';
import { testKeyring } from '../support/feed-keys.js';
import { scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';

const RUNS = Number(process.env.FEED_READ_RUNS ?? 40);
const SEED = Number(process.env.FEED_READ_SEED ?? 2);
const SCOPE = 'EVENTS';
const DAY = 86_400_000;
const store = useFileStore({ inProcess: true, direct: true });

type Send = (command: never) => Promise<unknown>;
type Command = { constructor: { name: string }; input: Record<string, unknown> };
/** The client with every command first shown to `before` (which may change its input or throw), and its answer to `after`. */
function around(client: DynamoDBDocumentClient, before: (c: Command) => void, after: (c: Command, out: Record<string, unknown>) => void = () => {}): DynamoDBDocumentClient {
  const send = client.send.bind(client) as unknown as Send;
  return {
    send: async (command: Command) => {
      before(command);
      const out = (await send(command as never)) as Record<string, unknown>;
      after(command, out);
      return out;
    },
  } as unknown as DynamoDBDocumentClient;
}

/** A flush's write refused as a throttle would refuse it (the SDK's retries used up). */
class Throttled extends Error {
  override name = 'ProvisionedThroughputExceededException';
}

/** A small seeded generator: the adversary's choices inside one case (fast-check draws the seed). */
function random(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

type Step =
  | { kind: 'append'; shard: number | 'every'; count: number; times: number; idLength: number; fault: 'none' | 'chunk' | 'trim' }
  | { kind: 'wait'; ms: number }
  | { kind: 'ttl' }
  | { kind: 'read'; pages: number; limit: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('append' as const), shard: fc.oneof(fc.constant('every' as const), fc.integer({ min: 0, max: FEED_SHARDS - 1 })), count: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 100 }), fc.constant(100)), times: fc.integer({ min: 1, max: 3 }), idLength: fc.constantFrom(7, 12, 68), fault: fc.constantFrom('none' as const, 'none' as const, 'chunk' as const, 'trim' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.constantFrom(60_000, 3_600_000, DAY, 5 * DAY, 12 * DAY, 29 * DAY, 32 * DAY) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('ttl' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('read' as const), pages: fc.integer({ min: 1, max: 12 }), limit: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 100 })) }) },
);

/** Chunk sizes written over all cases, to show the property ranged over them. */
const chunkSizes = new Set<number>();
/** Pages read over several ranges, reads that went on after a Query stopped early, reads truly expired, followers past retention. */
const seen = { splitReads: 0, readsOn: 0, expiredProbes: 0, agedOut: 0 };

async function runCase(steps: Step[], flushBytes: number, rangeGap: number, seed: number, table: string): Promise<void> {
  const rng = random(seed);
  let now = Date.parse('2026-11-01T00:00:00.000Z');
  const clock = () => new Date(now);
  // What every shard's log holds, position by position, as the appends that landed answered (1-based: log[s][p - 1]).
  const log: string[][] = Array.from({ length: FEED_SHARDS }, () => []);
  let fault: 'none' | 'chunk' | 'trim' = 'none';
  const writes = around(
    store.client,
    (c) => {
      const input = c.input as { Item?: { sk?: string }; UpdateExpression?: string };
      if (fault === 'chunk' && c.constructor.name === 'PutCommand' && String(input.Item?.sk).startsWith('C#')) throw new Throttled();
      if (fault === 'trim' && c.constructor.name === 'UpdateCommand' && input.UpdateExpression?.startsWith('REMOVE')) throw new Throttled();
    },
    (c, out) => {
      const input = c.input as { Key?: { sk?: string }; UpdateExpression?: string; ExpressionAttributeValues?: { ':members'?: string[] } };
      const attributes = out.Attributes as { base?: number; tail?: string[] } | undefined;
      if (c.constructor.name !== 'UpdateCommand' || !input.UpdateExpression?.includes('list_append') || !attributes?.tail) return;
      const shard = Number(String(input.Key?.sk).slice(2));
      const added = input.ExpressionAttributeValues?.[':members']?.length ?? 0;
      const first = attributes.base! + attributes.tail.length - added;
      expect({ shard, first }).toEqual({ shard, first: log[shard]!.length + 1 });
      log[shard]!.push(...attributes.tail.slice(-added));
    },
  );
  const writer = new FeedWriter(new TableIO(writes, table), clock, flushBytes, MAX_CHUNK_ENTRIES, MAX_TAIL_ENTRIES);

  // Every Query of a page's chunk ranges stops where the adversary says: at any item up to its Limit, or (a read going on) at any.
  let queries = 0;
  const cutting = around(store.client, (c) => {
    const input = c.input as { KeyConditionExpression?: string; Limit?: number; ExclusiveStartKey?: unknown };
    if (c.constructor.name !== 'QueryCommand' || !input.KeyConditionExpression?.includes('BETWEEN') || !String((input as { ExpressionAttributeValues?: Record<string, string> }).ExpressionAttributeValues?.[':from']).startsWith('C#')) return;
    queries++;
    if (input.ExclusiveStartKey !== undefined) seen.readsOn++;
    const most = input.Limit ?? 40;
    if (rng(3) > 0) input.Limit = 1 + rng(most);
  });
  const reads = new FeedReads(cutting, table, { rangeGap });
  const answered: FeedEntriesRead[] = [];
  const spy: FeedReader = {
    feedEntries: async (scope, after, count) => {
      const read = await reads.feedEntries(scope, after, count);
      answered.push(read);
      return read;
    },
    feedHead: (scope) => reads.feedHead(scope),
    feedMembers: (scope, after, count) => reads.feedMembers(scope, after, count),
    feedStates: (scope, members) => reads.feedStates(scope, members),
    userIdByName: (name) => reads.userIdByName(name),
  };

  let nextId = 0;
  const idFor = (shard: number | 'every', length: number): string => {
    for (;;) {
      const id = `evt_${(nextId++).toString(36).padStart(length - 4, '0')}`;
      if (shard === 'every' || shardOf(id) === shard) return id;
    }
  };

  /** Which positions of each shard some item holds now: a chunk or a head. */
  const held = async (): Promise<Set<number>[]> => {
    const out = Array.from({ length: FEED_SHARDS }, () => new Set<number>());
    for (const item of await scanAll(store.client, table)) {
      const run = feedRun(item);
      if (run) run.members.forEach((_, i) => out[run.shard]!.add(run.lo + i));
    }
    return out;
  };

  /** The read at `after`, judged against what the table holds. */
  const probe = async (after: readonly number[], count: number, holding: Set<number>[]) => {
    const read = await reads.feedEntries(SCOPE, after, count);
    const gone = after.some((p, s) => p < log[s]!.length && !holding[s]!.has(p + 1));
    if (read.expired) {
      seen.expiredProbes++;
      expect({ after, expiredWhileEveryNextPositionIsHeld: !gone }).toEqual({ after, expiredWhileEveryNextPositionIsHeld: false });
      return;
    }
    expect(read.entries.length).toBeLessThanOrEqual(count);
    const at = [...after];
    for (const e of read.entries) {
      expect({ shard: e.shard, position: e.position, member: e.member }).toEqual({ shard: e.shard, position: at[e.shard]! + 1, member: log[e.shard]![at[e.shard]!] });
      at[e.shard] = e.position;
    }
    if (read.more) expect({ after, movesOn: read.entries.length > 0 }).toEqual({ after, movesOn: true });
    else expect({ after, count, to: at }).toEqual({ after, count, to: log.map((l) => l.length) });
  };

  const cursors: string[] = [];
  for (const step of steps) {
    if (step.kind === 'append') {
      fault = step.fault;
      for (let i = 0; i < step.times; i++) {
        const members = Array.from({ length: step.count }, () => idFor(step.shard, step.idLength));
        try {
          await writer.append(SCOPE, members);
        } catch (error) {
          if (!(error instanceof Throttled || error instanceof FeedHeadFullError)) throw error;
        }
      }
      fault = 'none';
    } else if (step.kind === 'wait') {
      now += step.ms;
    } else if (step.kind === 'ttl') {
      // TTL deletes what it likes of what has expired: each expired item with even odds.
      for (const item of await scanAll(store.client, table)) {
        const expires = item[TTL_ATTRIBUTE];
        if (typeof expires === 'number' && expires < now / 1000 && rng(2) === 0) await store.client.send(new DeleteCommand({ TableName: table, Key: { pk: item.pk, sk: item.sk } }));
      }
    } else {
      // The follower goes on from any cursor it was given (the newest most often), or starts again.
      const pick = cursors.length === 0 || rng(8) === 0 ? undefined : rng(2) === 0 ? cursors.at(-1)! : cursors[rng(cursors.length)]!;
      let cursor = pick === undefined ? undefined : parseCursor(pick)!;
      for (let page = 0; page < step.pages; page++) {
        const ctx: FeedContext = { feeds: spy, keyring: testKeyring, now: clock() };
        answered.length = 0;
        queries = 0;
        let answer;
        try {
          answer = await catalogueChanges(ctx, { cursor, limit: step.limit }, 'https://site.example');
        } catch (error) {
          if (!(error instanceof CursorExpiredError)) throw error;
          // 410 only for a cursor whose consumer may have been behind for longer than the retention.
          const age = Math.floor(now / 1000) - cursor!.cursor.asOf;
          expect({ status: 410, age, pastRetention: age > CURSOR_LIFETIME_SECONDS }).toEqual({ status: 410, age, pastRetention: true });
          seen.agedOut++;
          break;
        }
        cursors.push(answer.next_cursor);
        const next = parseCursor(answer.next_cursor)!.cursor;
        if (cursor?.cursor.mode === 'entries') {
          const from = cursor.cursor.position;
          expect(answered).toHaveLength(1);
          if (queries > 1) seen.splitReads++;
          // Each shard moved over entries given, each at the next position, the member written there.
          const at = [...from];
          for (const e of answered[0]!.entries.slice(0, step.limit)) {
            if (e.position > next.position[e.shard]!) continue;
            expect({ shard: e.shard, position: e.position, member: e.member }).toEqual({ shard: e.shard, position: at[e.shard]! + 1, member: log[e.shard]![at[e.shard]!] });
            at[e.shard] = e.position;
          }
          expect(next.position).toEqual(at);
        }
        if (!answer.has_more) {
          expect(next.position).toEqual(log.map((l) => l.length));
          break;
        }
        cursor = parseCursor(answer.next_cursor)!;
      }
      // The read itself at the follower's positions, and at positions anywhere: the next entries, or truly expired.
      const holding = await held();
      const last = cursors.length ? parseCursor(cursors.at(-1)!)!.cursor.position : undefined;
      const anywhere = () => log.map((l) => rng(l.length + 1));
      for (const after of [...(last ? [last] : []), anywhere(), anywhere(), anywhere()]) await probe(after, 1 + rng(101), holding);
    }
  }
  for (const item of await scanAll(store.client, table)) {
    const run = feedRun(item);
    if (run && !run.head) chunkSizes.add(run.members.length);
  }
}

describe('a feed read never calls a live position expired (fast-check)', () => {
  it('every cursor a follower can hold: its next entries, or 410 only past retention; any positions: the next entries, or expired only where a position is held nowhere', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 4, maxLength: 50 }),
        // Flush at every append (a chunk each), at the production size and larger, or only when the tail is full (chunks of 200).
        fc.constantFrom(8, 120, 560, 2_000, 1_000_000),
        fc.constantFrom(1, 4, 16, RANGE_GAP),
        fc.integer(),
        async (steps, flushBytes, rangeGap, seed) => {
          const table = store.nextTable('feed-live');
          await ensureTable(store.client, table);
          await runCase([...steps, { kind: 'read', pages: 200, limit: 100 }], flushBytes, rangeGap, seed, table);
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
    if (process.env.FEED_READ_STATS) console.log({ ...seen, chunkSizes: [...chunkSizes].sort((a, b) => a - b).join(' ') });
    // The cases ranged over what they claim: chunks from 1 entry to 200, reads split over several ranges and reading on.
    expect({ smallest: Math.min(...chunkSizes), largest: Math.max(...chunkSizes) }).toEqual({ smallest: 1, largest: MAX_CHUNK_ENTRIES });
    expect(seen.splitReads).toBeGreaterThan(0);
    expect(seen.readsOn).toBeGreaterThan(0);
    // And both ends of retention: reads that truly met a deleted entry, and followers whose cursor outlived it.
    expect(seen.expiredProbes).toBeGreaterThan(0);
    expect(seen.agedOut).toBeGreaterThan(0);
  }, 60_000 + RUNS * 8_000);
});
