/**
 * The changes feeds' append protocol (lambdas/store/feeds/feed.ts), explored
 * exhaustively rather than sampled: appenders to one scope interleaved at
 * every call, a reader reading the scope's entries between every two calls
 * (its chunks at one point and the head at the next: a Query reads each item
 * when it reaches it, not the partition at one moment), and the environment
 * as an adversary: an appender dying after
 * any call, a write landing with its response lost (the SDK retries it), a
 * write failing without landing, DynamoDB's TTL deleting the chunks it may
 * (everything expired: time passes) at any point. The flush size is
 * lowered so that every append flushes, moving one entry at most (a tail
 * longer than that is flushed part by part): each append is three calls
 * (the append, the chunk, the trim), the most the protocol makes.
 *
 * Held at every point and at the end:
 * - positions are dense and never rewritten: what the head and the chunks
 *   hold at a position is one member, the same at every look, and every
 *   position up to the last is held somewhere unless TTL deleted its chunk;
 * - the reader never passes a position without reading it: each read after
 *   position c starts at c + 1 and is dense, or says the chunk after c has
 *   expired (a 410 for a consumer), which happens only once TTL deleted one;
 * - at the end every append that landed is read, in its order per appender.
 * Appends that do not fight: no write is ever refused by a condition but a
 * second trim of the same entries (two flushers of one tail).
 *
 * On one head shard's log (the writer and the reader of one shard): every
 * shard of a scope is such a log, with its own head and chunks and nothing
 * shared with the others but the partition, so what holds for one holds for
 * each; how a page takes the shards' entries together is
 * test/integration/changes-feed.property.test.ts's and the unit tests'.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DeleteCommand, GetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../../lambdas/core/clock.js';
import { FEED_CHUNK_PREFIX, FeedWriter, MAX_TAIL_ENTRIES, chunkRangeStart, entriesAfter, feedPartition, feedRun, headKey } from '../../lambdas/store/feeds/feed.js';
import { FeedReads } from '../../lambdas/store/feeds/feed-reads.js';
import { TableIO } from '../../lambdas/store/table/table-io.js';
import { TTL_ATTRIBUTE } from '../../lambdas/store/table/table.js';
import { ensureTable } from '../../local/dynalite.js';
import { directClient } from '../support/direct-dynalite.js';
import { startInProcessDynalite, type InProcessStore } from '../support/in-process-dynalite.js';

const WRITES = /Put|Update|Delete/;
const clock = fixedClock('2026-11-21T12:00:00.000Z');
/** Every append crosses a multiple of it: every append flushes. */
const FLUSH_BYTES = 1;
/** A flush moves one entry at most: a tail longer than that is flushed part by part, as MAX_CHUNK_ENTRIES does past 200. */
const CHUNK_ENTRIES = 1;

type Fault = { appender: number; call: number; kind: 'crash' | 'lose' | 'fail' } | { kind: 'ttl'; point: number };

interface RunResult {
  /** The order of appenders whose call went at each step: a run's identity, and the choices left to explore. */
  choices: number[];
  alternatives: number[][];
  refusedTrims: number;
  otherRefusals: number;
}

class Crash extends Error {}

let store: InProcessStore;
/** One table; each run appends to a scope of its own. */
const TABLE = 'appends';
let runs = 0;
beforeAll(async () => {
  store = await startInProcessDynalite();
  await ensureTable(directClient(store.call), TABLE);
});
afterAll(async () => store?.close());

/** The scope's items (head, chunks), consistent. */
async function scopeItems(client: DynamoDBDocumentClient, scope: string): Promise<Record<string, unknown>[]> {
  const out = await client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': feedPartition(scope) }, ConsistentRead: true }));
  return out.Items ?? [];
}

/** The chunks holding positions after `after` (the first half of a feed read). */
async function chunkItems(client: DynamoDBDocumentClient, scope: string, after: number): Promise<Record<string, unknown>[]> {
  const out = await client.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': feedPartition(scope), ':from': chunkRangeStart(after + 1), ':to': `${FEED_CHUNK_PREFIX}~` },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

/** The head (the second half of a feed read), as a list of at most one item. */
async function headItem(client: DynamoDBDocumentClient, scope: string): Promise<Record<string, unknown>[]> {
  const out = await client.send(new GetCommand({ TableName: TABLE, Key: headKey(scope, 0), ConsistentRead: true }));
  return out.Item ? [out.Item] : [];
}

/** What DynamoDB's TTL may do once time has passed: every item of the scope with an expiry is deleted. */
async function sweep(client: DynamoDBDocumentClient, scope: string): Promise<number> {
  const expired = (await scopeItems(client, scope)).filter((i) => typeof i[TTL_ATTRIBUTE] === 'number');
  for (const i of expired) await client.send(new DeleteCommand({ TableName: TABLE, Key: { pk: i.pk, sk: i.sk } }));
  return expired.length;
}

/**
 * One schedule: `plan[i]` the appends of appender i (each a batch of members). At each step the appender
 * `prefix[step]` names makes its next call (else the lowest waiting); the reader reads at every point.
 */
async function run(plan: string[][][], prefix: readonly number[], fault?: Fault, opts: { readers?: number } = {}): Promise<RunResult> {
  const scope = `RUN#${runs++}`;
  const admin = directClient(store.call);
  const waiting = new Map<number, () => void>();
  // The appenders, and the reader when the schedule has one (the last participant).
  const participants = plan.length + (opts.readers ? 1 : 0);
  const running = new Set(Array.from({ length: participants }, (_, i) => i));
  const calls = Array.from({ length: participants }, () => 0);
  const result: RunResult = { choices: [], alternatives: [], refusedTrims: 0, otherRefusals: 0 };
  let inFlight = false;
  let points = 0;
  let swept = false;
  let resolveIdle!: () => void;
  let idle = new Promise<void>((r) => (resolveIdle = r));

  // What each position held at every look, and the reader.
  const seenAt = new Map<number, string>();
  const reads = new FeedReads(admin, TABLE, { shards: 1 });
  let cursor = 0;
  const readLog: { position: number; member: string }[] = [];
  let expired = false;
  const look = async (where: string) => {
    points++;
    if (fault?.kind === 'ttl' && fault.point === points && (await sweep(admin, scope))) swept = true;
    const items = await scopeItems(admin, scope);
    const held = new Map<number, string>();
    let last = 0;
    for (const item of items) {
      const { head, lo, members } = feedRun(item, 1)!;
      members.forEach((m, i) => {
        const prior = held.get(lo + i) ?? seenAt.get(lo + i);
        if (prior !== undefined && prior !== m) throw new Error(`position ${lo + i} holds ${m}, and held ${prior} (${where})`);
        held.set(lo + i, m);
        seenAt.set(lo + i, m);
      });
      if (head) last = lo + members.length - 1;
    }
    if (!swept) for (let p = 1; p <= last; p++) if (!held.has(p)) throw new Error(`position ${p} of ${last} is held nowhere (${where})`);
    // Without a reader of its own in the schedule, the route's own read (feedEntries) reads on at every point.
    if (!opts.readers) await readOn(where);
  };
  /** Reads on from the reader's position to the end for now with the route's own read, checking what it is given. */
  const readOn = async (where: string) => {
    for (let more = !expired; more; ) {
      const page = await reads.feedEntries(scope, [cursor], 2);
      if (page.expired) {
        if (!swept) throw new Error(`the reader at ${cursor} was told its chunk expired, and nothing expired (${where})`);
        expired = true;
        break;
      }
      take(page.entries, where);
      more = page.more;
    }
  };
  const take = (entries: { position: number; member: string }[], where: string) => {
    entries.forEach((e, i) => {
      if (e.position !== cursor + 1 + i) throw new Error(`the reader at ${cursor} was given position ${e.position} as its ${i + 1}th (${where})`);
      if (seenAt.has(e.position) && seenAt.get(e.position) !== e.member) throw new Error(`position ${e.position} read as ${e.member}, held ${seenAt.get(e.position)} (${where})`);
    });
    readLog.push(...entries);
    if (entries.length) cursor = entries[entries.length - 1]!.position;
  };

  const pump = () => {
    if (inFlight) return;
    for (const i of running) if (!waiting.has(i)) return;
    if (waiting.size === 0) return resolveIdle();
    const candidates = [...waiting.keys()].sort((a, b) => a - b);
    const step = result.choices.length;
    const wanted = prefix[step];
    const chosen = wanted !== undefined && candidates.includes(wanted) ? wanted : candidates[0]!;
    result.alternatives.push(candidates.filter((c) => c !== chosen));
    result.choices.push(chosen);
    const go = waiting.get(chosen)!;
    waiting.delete(chosen);
    inFlight = true;
    go();
  };

  const clientOf = (i: number) =>
    directClient(store.call, async (command, input, send) => {
      await new Promise<void>((resolve) => {
        waiting.set(i, resolve);
        pump();
      });
      const n = ++calls[i]!;
      try {
        const mine = fault && fault.kind !== 'ttl' && fault.appender === i && fault.call === n;
        if (mine && fault.kind === 'fail' && WRITES.test(command)) throw Object.assign(new Error('write failed without landing'), { name: 'ThrottlingException' });
        let out: { output: unknown };
        try {
          out = await send();
          // The response is lost: the retry strategy sends the very request again, and its answer is the call's.
          if (mine && fault.kind === 'lose' && WRITES.test(command)) out = await send();
        } catch (error) {
          if ((error as { name?: string }).name === 'ConditionalCheckFailedException') {
            if (String((input as { UpdateExpression?: string }).UpdateExpression ?? '').startsWith('REMOVE')) result.refusedTrims++;
            else result.otherRefusals++;
          }
          throw error;
        }
        if (mine && fault.kind === 'crash') throw new Crash();
        return out;
      } finally {
        await look(`after call ${n} of appender ${i}`);
        inFlight = false;
        pump();
      }
    });

  const landed: string[][] = plan.map(() => []);
  const appenders = plan.map(async (appends, i) => {
    const writer = new FeedWriter(new TableIO(clientOf(i), TABLE), clock, FLUSH_BYTES, CHUNK_ENTRIES, MAX_TAIL_ENTRIES, 1);
    try {
      for (const members of appends) {
        await writer.append(scope, members);
        landed[i]!.push(...members);
      }
    } catch (error) {
      if (!(error instanceof Crash) && (error as { name?: string }).name !== 'ThrottlingException') throw error;
    } finally {
      running.delete(i);
      pump();
    }
  });
  // The reader as a participant: a Query reads each item when it reaches it, not the partition at one moment, so its
  // chunks and its head are two calls the schedule places apart (any appenders' calls between them). It takes what
  // feedEntries takes (entriesAfter): the entries up to the first position held nowhere; a missing first one is read
  // again, and missing again is an expired chunk (a consumer's 410).
  const reader = async () => {
    const client = clientOf(plan.length);
    try {
      for (let r = 0; r < (opts.readers ?? 0) && !expired; r++) {
        for (let attempt = 1; ; attempt++) {
          const [chunks, head] = [await chunkItems(client, scope, cursor), await headItem(client, scope)];
          const read = entriesAfter([...chunks, ...head], [cursor], 10, false);
          if (!read.frontHole) {
            take(read.entries, `the reader's read ${r + 1}`);
            break;
          }
          if (attempt === 2) {
            if (!swept) throw new Error(`the reader at ${cursor} found its next chunk gone twice, and nothing expired`);
            expired = true;
            break;
          }
        }
      }
    } finally {
      running.delete(plan.length);
      pump();
    }
  };
  // Every participant runs to its end (one that fails hands its turns on), then the first failure is the run's.
  const failed = (await Promise.allSettled([...appenders, ...(opts.readers ? [reader()] : [])])).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  await idle;
  idle = Promise.resolve();
  await look('at the end');
  // Quiet: the reader reads to the end with the route's own read (a Query the flushes no longer race).
  await readOn('at the end');
  if (!expired) {
    // Every append whose call returned was read, each appender's in its order (a lost response may add a second copy).
    const read = readLog.map((e) => e.member);
    for (const members of landed) {
      let from = 0;
      for (const m of members) {
        const at = read.indexOf(m, from);
        if (at < 0) throw new Error(`${m} landed and was never read: read ${read.join(' ')}`);
        from = at + 1;
      }
    }
  }
  return result;
}

/** Every interleaving of the plan (depth-first over the choices each run leaves), with `fault`; answers how many runs. */
async function everyInterleaving(plan: string[][][], fault?: Fault, opts: { readers?: number } = {}): Promise<{ runs: number; refusedTrims: number; otherRefusals: number }> {
  const todo: number[][] = [[]];
  let runs = 0;
  let refusedTrims = 0;
  let otherRefusals = 0;
  while (todo.length) {
    const prefix = todo.pop()!;
    const r = await run(plan, prefix, fault, opts);
    runs++;
    refusedTrims += r.refusedTrims;
    otherRefusals += r.otherRefusals;
    for (let step = r.alternatives.length - 1; step >= prefix.length; step--) for (const alt of r.alternatives[step]!) todo.push([...r.choices.slice(0, step), alt]);
  }
  return { runs, refusedTrims, otherRefusals };
}

const counts: string[] = [];
afterAll(() => {
  process.stdout.write(`feed appends: schedules explored\n  ${counts.join('\n  ')}\n`);
});

describe('concurrent appends to one scope, every interleaving (feed.ts)', () => {
  it('three appenders: positions dense, never rewritten, never passed unread; no append refused', async () => {
    const plan = [[['a1']], [['b1']], [['c1']]];
    const { runs, refusedTrims, otherRefusals } = await everyInterleaving(plan);
    counts.push(`three appenders, every interleaving: ${runs}`);
    expect(runs).toBe(1680);
    expect(otherRefusals).toBe(0);
    expect(refusedTrims).toBeGreaterThan(0);
  }, 600_000);

  it("an appender of three and a reader whose Query reads the chunks and the head at two moments, reading twice, every interleaving: the reader stops at a position a flush moved between them, never passes it", async () => {
    const plan = [[['a1'], ['a2'], ['a3']]];
    const { runs } = await everyInterleaving(plan, undefined, { readers: 2 });
    counts.push(`an appender and a reader reading twice: ${runs}`);
    expect(runs).toBeGreaterThan(700);
  }, 600_000);

  it('two appenders, every single fault at every call (a crash after it, its response lost, the write failing), every interleaving', async () => {
    const plan = [[['a1'], ['a2']], [['b1']]];
    let runs = 0;
    for (const appender of [0, 1]) {
      for (let call = 1; call <= plan[appender]!.length * 3; call++) {
        for (const kind of ['crash', 'lose', 'fail'] as const) runs += (await everyInterleaving(plan, { appender, call, kind })).runs;
      }
    }
    counts.push(`two appenders with one fault each: ${runs}`);
    expect(runs).toBeGreaterThan(1000);
  }, 600_000);

  it("TTL deletes every expired chunk at any point: the reader reads on, or is told it is behind (a consumer's 410), never skips", async () => {
    const plan = [[['a1'], ['a2']], [['b1']]];
    let runs = 0;
    for (let point = 1; point <= 10; point++) runs += (await everyInterleaving(plan, { kind: 'ttl', point })).runs;
    counts.push(`two appenders, TTL at every point: ${runs}`);
    expect(runs).toBeGreaterThan(500);
  }, 600_000);
});
