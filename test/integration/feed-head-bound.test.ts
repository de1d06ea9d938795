/**
 * The feed head under a fault that lasts (lambdas/store/feeds/feed.ts, FeedWriter.append).
 *
 * A review found a head that grew while its flushes failed (the FEED#
 * partition throttled during a burst, the SDK's retries used up call after
 * call): every append still landed, each billed by the head's size, until at
 * DynamoDB's 400 KB no append landed and so no flush ran: the scope was
 * wedged for good, after the throttling too, and a follower kept a member
 * hidden after that. The rule held here, against a throttle window (every
 * call of a kind, or every call to the partition, failing as DynamoDB fails
 * a throttled call, for a stretch of calls while appends go on; then the
 * window ends):
 * - the head never holds more than MAX_TAIL_ENTRIES entries, so never more
 *   than HEAD_MAX_BYTES, whatever fails and for however long;
 * - the first append after the window lands (a full tail is flushed first),
 *   and a reader reads every member whose append returned, in its order in
 *   its head shard, at dense positions of that shard;
 * - a reader never meets a position held nowhere.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { fixedClock } from '../../lambdas/core/clock.js';
import { BULK_APPEND, FEED_HEAD_PREFIX, FEED_SHARDS, FeedWriter, HEAD_MAX_BYTES, MAX_MEMBER_ID_LENGTH, MAX_TAIL_ENTRIES, everyShardAt, feedPartition, headBytes, headKey, shardOf } from '../../lambdas/store/feeds/feed.js';
import { FeedReads } from '../../lambdas/store/feeds/feed-reads.js';
import { TableIO } from '../../lambdas/store/table/table-io.js';
import { ensureTable } from '../../local/dynalite.js';
import { itemSize } from '../../scripts/write-billing.js';
import { directClient } from '../support/direct-dynalite.js';
import { startInProcessDynalite, type InProcessStore } from '../support/in-process-dynalite.js';
import { ThrottleWindow, toPartition } from '../support/throttle-window.js';

const TABLE = 'head-bound';
const clock = fixedClock('2026-11-21T12:00:00.000Z');
let store: InProcessStore;
beforeAll(async () => {
  store = await startInProcessDynalite();
  await ensureTable(directClient(store.call), TABLE);
});
afterAll(async () => store?.close());

/** An id of the contract's longest length (68 characters). */
const longId = (n: number) => `usr_${String(n).padStart(MAX_MEMBER_ID_LENGTH - 4, '0')}`;
let scopes = 0;

/** The size of the scope's largest head shard (0 when it has none yet). */
async function largestHead(scope: string): Promise<number> {
  const out = await directClient(store.call).send(
    new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :h)', ExpressionAttributeValues: { ':pk': feedPartition(scope), ':h': FEED_HEAD_PREFIX }, ConsistentRead: true }),
  );
  return Math.max(0, ...(out.Items ?? []).map((head) => itemSize(head)));
}

/** Every entry of the scope by shard, read from position 0 with the route's own read; fails on a position held nowhere. */
async function readAll(scope: string): Promise<string[][]> {
  const reads = new FeedReads(directClient(store.call), TABLE);
  const out: string[][] = everyShardAt(0).map(() => []);
  for (let more = true; more; ) {
    const after = out.map((log) => log.length);
    const page = await reads.feedEntries(scope, after, 100);
    if (page.expired) throw new Error(`a position after ${after.join(', ')} is held nowhere`);
    for (const e of page.entries) {
      expect(e.position).toBe(out[e.shard]!.length + 1);
      out[e.shard]!.push(e.member);
    }
    more = page.more;
  }
  return out;
}

/** Members whose append returned appear in their shard's log in their order (a failed append's retry may add copies). */
function expectReadInOrder(read: readonly string[][], landed: readonly string[]): void {
  const from = read.map(() => 0);
  for (const m of landed) {
    const shard = shardOf(m);
    const at = read[shard]!.indexOf(m, from[shard]);
    if (at < 0) throw new Error(`${m} landed and was never read`);
    from[shard] = at + 1;
  }
}

describe('the feed head while a throttle window lasts', () => {
  it('a full head as DynamoDB stores it (the longest scope, the longest ids, flushes never landing) is within the bound', async () => {
    const scope = `GUESTS#${'e'.repeat(MAX_MEMBER_ID_LENGTH)}`;
    // One shard, no flush: every append stays in the head until the tail is full.
    const writer = new FeedWriter(new TableIO(directClient(store.call), TABLE), clock, Number.POSITIVE_INFINITY, MAX_TAIL_ENTRIES, MAX_TAIL_ENTRIES, 1);
    for (let i = 0; i < MAX_TAIL_ENTRIES; i += BULK_APPEND) await writer.append(scope, Array.from({ length: BULK_APPEND }, (_, j) => longId(i + j)));
    const full = (await directClient(store.call).send(new GetCommand({ TableName: TABLE, Key: headKey(scope, 0), ConsistentRead: true }))).Item!;
    expect((full.tail as string[]).length).toBe(MAX_TAIL_ENTRIES);
    expect(itemSize(full)).toBeLessThanOrEqual(HEAD_MAX_BYTES);
  });

  it('states its bound: a full tail of the longest ids in the longest scope', () => {
    expect(HEAD_MAX_BYTES).toBe(headBytes(`GUESTS#${'e'.repeat(MAX_MEMBER_ID_LENGTH)}`, MAX_TAIL_ENTRIES, MAX_MEMBER_ID_LENGTH, FEED_SHARDS - 1));
    // 14 KB: far from DynamoDB's 400 KB item limit; what an append bills while a window lasts.
    expect(HEAD_MAX_BYTES).toBeLessThan(15 * 1024);
  });

  it("the review's case: chunk Puts throttled for 200 bulk appends and 2,000 single ones; the head stays within its bound and the first appends after the window land", async () => {
    const window = new ThrottleWindow((command, input) => /^Put/.test(command) && (input.Item as { type?: string } | undefined)?.type === 'FEED_CHUNK');
    const client = directClient(store.call, window.intercept);
    const writer = new FeedWriter(new TableIO(client, TABLE), clock);
    const scope = `GUESTS#evt_wedge${scopes++}`;
    const landed: string[] = [];
    let n = 0;
    let largest = 0;
    const attempt = async (members: string[]) => {
      try {
        await writer.append(scope, members);
        landed.push(...members);
      } catch (error) {
        if (!ThrottleWindow.isThrottle(error)) throw error;
      }
      largest = Math.max(largest, await largestHead(scope));
    };
    window.open();
    for (let call = 0; call < 200; call++) await attempt(Array.from({ length: BULK_APPEND }, () => longId(n++)));
    for (let call = 0; call < 2_000; call++) await attempt([longId(n++)]);
    expect(largest).toBeLessThanOrEqual(HEAD_MAX_BYTES);
    expect(window.failed).toBeGreaterThan(0);
    window.close();
    // The next change's entry (an RSVP hidden, say: its follower must see it removed), then a resync's bulk append.
    const hidden = longId(n++);
    await expect(writer.append(scope, [hidden])).resolves.toBeGreaterThanOrEqual(0);
    landed.push(hidden);
    const bulk = Array.from({ length: BULK_APPEND }, () => longId(n++));
    await expect(writer.append(scope, bulk)).resolves.toBeGreaterThanOrEqual(0);
    landed.push(...bulk);
    expectReadInOrder(await readAll(scope), landed);
    expect(await largestHead(scope)).toBeLessThanOrEqual(HEAD_MAX_BYTES);
  }, 120_000);

  it('any window (the chunk Puts, the trims, the head appends, or the whole partition) over any appends: bounded during, recovered at the first append after, nothing lost', async () => {
    type Target = 'chunks' | 'trims' | 'appends' | 'partition';
    const matches: Record<Target, (command: string, input: Record<string, unknown>) => boolean> = {
      chunks: (c, i) => /^Put/.test(c) && (i.Item as { type?: string } | undefined)?.type === 'FEED_CHUNK',
      trims: (c, i) => /^Update/.test(c) && String(i.UpdateExpression).startsWith('REMOVE'),
      appends: (c, i) => /^Update/.test(c) && String(i.UpdateExpression).includes('list_append'),
      partition: toPartition('FEED#'),
    };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Target>('chunks', 'trims', 'appends', 'partition'),
        fc.array(fc.integer({ min: 1, max: BULK_APPEND }), { minLength: 1, maxLength: 40 }),
        fc.nat({ max: 40 }),
        fc.integer({ min: 1, max: 400 }),
        async (target, sizes, opensAt, lasts) => {
          const window = new ThrottleWindow(matches[target]);
          const writer = new FeedWriter(new TableIO(directClient(store.call, window.intercept), TABLE), clock);
          const scope = `GUESTS#evt_window${scopes++}`;
          const landed: string[] = [];
          let n = 0;
          for (const [i, size] of sizes.entries()) {
            if (i === opensAt) window.open(lasts);
            const members = Array.from({ length: size }, () => longId(n++));
            try {
              await writer.append(scope, members);
              landed.push(...members);
            } catch (error) {
              if (!ThrottleWindow.isThrottle(error)) throw error;
            }
            expect(await largestHead(scope)).toBeLessThanOrEqual(HEAD_MAX_BYTES);
          }
          window.close();
          // Recovery: the first append after the window lands.
          const after = [longId(n++)];
          await writer.append(scope, after);
          landed.push(...after);
          expectReadInOrder(await readAll(scope), landed);
        },
      ),
      { numRuns: 40, seed: 44 },
    );
  }, 300_000);
});
