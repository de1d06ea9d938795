/**
 * Runs one schedule of a few changes against a real table and checks it:
 * appliers that pause at a given call while others run, die right after a
 * given call (the call lands), or stop for the time limit, and redeliveries
 * after any of that. Every DynamoDB call of an applier goes through its own
 * client, whose middleware counts, pauses and crashes, so a schedule is
 * fixed by numbers, not by timing. A lost response is one more fault: the
 * k-th write lands, then the caller sees a socket timeout, and the client's
 * own retry strategy (the change path's, WRITE_PATH_RETRY) retries it.
 *
 * Checks, against fresh loads of fold(D0, order) for the orders a schedule
 * admits (cached per scenario):
 * - privacy at every observation point (after each change that completes,
 *   after each crash, at the end): every key any index reaches is reached
 *   in the fresh load of some order of the completed changes, with or
 *   without the changes still in flight; and every guest shard holding an
 *   item is marked in its event's guest shard record (shard-marks.ts: the
 *   walks query only the marked shards);
 * - at the end: the read model equals the fresh load of the fold of one
 *   order of all changes, and nothing is owed (no `pending`, no tally note).
 */
import { BatchWriteCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { Change } from '../../lambdas/core/changes.js';
import type { Clock } from '../../lambdas/core/clock.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { fold } from '../../lambdas/core/fold.js';
import { ChangeApplier, FanOutIncomplete } from '../../lambdas/store/changes/applier.js';
import { createWriteClient } from '../../lambdas/store/table/client.js';
import { directClient } from './direct-dynalite.js';
import { INDEXES, PK, SK, createTableInput, eventIndexEntryKind, keys } from '../../lambdas/store/table/table.js';
import { catalogueChanges, guestChanges, placeChanges, type FeedPage } from '../../lambdas/core/feeds.js';
import { placeMatches, placeOf, placeQueriesOf, type PlaceKey } from '../../lambdas/core/place.js';
import { parseCursor, type SealedCursor } from '../../lambdas/core/feed-cursor.js';
import { feedContext } from './feed-keys.js';
import { feedMemberOf, memberKey, scopesShowing } from '../../lambdas/store/feeds/feed.js';
import { sweepExpired } from './ttl.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import type { InProcessStore } from './in-process-dynalite.js';
import { readModel, scanAll } from './read-model.js';
import { CallQueue } from './call-queue.js';
import { loseResponse } from './lost-response.js';
import { partitionOf } from './throttle-window.js';
import { eventOfGuestShard, unmarkedShards } from './shard-marks.js';

export interface Scenario {
  name: string;
  d0: Dataset;
  /** In the order the source made them (versions per entity increase along it). */
  changes: Change[];
}

/**
 * One delivery of one change: it may die right after its k-th write, lose the
 * response of its k-th write (the write lands, the SDK retries it), or stop
 * for time after its first chunk.
 */
export interface Step {
  change: number;
  crashAfter?: number;
  loseAfter?: number;
  /** Its k-th write fails without landing (a throttle the SDK's retries did not outlast): the error goes up as the code lets it. */
  failAt?: number;
  timeLimit?: boolean;
  /**
   * A fault that lasts: every call of this delivery (reads too) to a partition whose key starts with this prefix
   * fails without landing, as a throttle the SDK's retries did not outlast (the partition throttled for the whole
   * delivery). The schedule's next delivery of the change is its redelivery, in the window still or after it.
   */
  throttled?: string;
  /** Its concurrent calls are released last sent first (call-queue.ts); the first sent first otherwise. */
  lifo?: boolean;
}

/** What one delivery did, for enumerating the next schedules. */
export interface Calls {
  calls: number;
  /** Writes that landed. */
  writes: number;
  /** The writes (by number) that were conditional: a lost response makes their retry fail its condition. */
  conditional: number[];
  /**
   * The writes (by number) whose retry after a lost response changes nothing: unconditional, no `ADD` or
   * arithmetic, answering nothing that the first landing changes. Losing such a response gives the very
   * schedule without the loss, so the exploration need not run it (see `repeatable`).
   */
  repeatable: number[];
  /** Writes landed before each call: `writesBefore[i]` before call i + 1 (a pause after i calls). */
  writesBefore: number[];
  /** The derivation numbers it took (counter `ADD`s), by the call and the write that took them. */
  takes: { call: number; write: number }[];
}

/**
 * `paused` (if any) starts first and waits before its call `pauseAfter + 1`;
 * then `during` run one after another; then `paused` goes on (and may die);
 * then `after`.
 */
export interface Schedule {
  paused?: Step & { pauseAfter: number };
  during: Step[];
  after: Step[];
}

/**
 * A schedule's DynamoDB calls in the order they were made, with the table after each write, so
 * that a schedule sharing its first calls can replay them (see `RunOptions.from`).
 */
export interface Recording {
  calls: RecordedCall[];
  /** The table's items after the write made by call number i (0-based), for every write. */
  tables: Map<number, Item[]>;
}
export interface RecordedCall {
  role: number;
  /** Which delivery of the schedule made it, by place: `p` (paused), `d0`, `d1`… (during), `a0`… (after). */
  slot: string;
  command: string;
  /** The input as sent, the table's name and random ids blanked (see `normalised`). */
  input: string;
  /** The random ids in the input, in order (a replay maps them to the ids the replaying applier drew). */
  ids: string[];
  /** The answer's `output` (what the appliers read), the table's name as in `input`. */
  output?: unknown;
  /** Or the error it was refused with (a condition that failed), thrown again on replay. */
  refused?: unknown;
  /** The delivery's write count once the call returned (so the write number, for a write that landed). */
  writes: number;
  write: boolean;
}

/**
 * `record`: keep this run's calls and the table after each write, for runs that share a prefix.
 * `from`: this schedule makes the same first `upTo` calls as the recorded one (it differs only after
 * them: a crash right after a write, a lost response of the next write). Those calls are replayed
 * from the recording, each checked to be the very call recorded (same applier, command and input),
 * without reaching the store; the table starts as the recording's table after call `upTo`, so the
 * first call that does reach the store sees exactly what it would have seen. The observation
 * points inside the prefix were checked by the recorded run and are not repeated.
 */
export interface RunOptions {
  record?: boolean;
  from?: { recording: Recording; upTo: number };
}

class Crash extends Error {}
/** What a write that fails without landing throws: DynamoDB's throttling error, after the SDK's retries. */
class FailedWrite extends Error {
  override readonly name = 'ThrottlingException';
}

/** No change of these scenarios needs nearly this many calls: more means an applier that does not terminate. */
const MAX_CALLS = 1_000;
const WRITES = /Put|Update|Delete|BatchWrite|TransactWrite/;
const INDEX_ATTRIBUTES = Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]);

type Item = Record<string, unknown>;

interface Controller {
  /** Calls made, and writes among them: a crash point is after a write (a crash after a read leaves the state of the write before it). */
  calls: number;
  writes: number;
  /** Runs after each write that lands and puts index keys (an observation point), with the item put. */
  afterWrite?: (item: Item) => Promise<void>;
  pauseAfter?: number;
  crashAfter?: number;
  loseAfter?: number;
  failAt?: number;
  throttled?: string;
  conditional: number[];
  repeatable: number[];
  writesBefore: number[];
  takes: { call: number; write: number }[];
  paused?: () => void;
  gate?: Promise<void>;
  resetLost?: () => void;
  /** The delivery this role is running, by place in the schedule (RecordedCall.slot). */
  slot: string;
  /** Its calls, one at a time in the delivery's release order. */
  queue: CallQueue;
}

export class Explorer {
  /** Schedules run so far. */
  runs = 0;
  private readonly started = Date.now();
  private tables = 0;
  private readonly expected = new Map<string, Promise<{ model: string; keys: Set<string> }>>();
  private readonly allowed = new Map<string, Set<string>>();
  private readonly roles: { client: DynamoDBDocumentClient; ctl: Controller }[] = [];
  /** The run in progress: its table, the calls still to replay, and what it records. */
  private current?: { table: string; from?: RunOptions['from']; cursor: number; recording?: Recording; ids: Map<string, string>; tables: boolean; pausing?: boolean };
  /** What the deliveries that ran while the paused one waited wrote, in the last run (see `Footprint`). */
  footprint?: Footprint;
  /** The last run's recording (when asked for with `record`). */
  recording?: Recording;
  /** When set, every run records and none replays, and each recording is handed here (schedules-transport.test.ts). */
  trace?: (schedule: string, recording: Recording) => void;
  /** The observation points already checked (`checkPrivacy`), this scenario's: a table and what was done and in flight. */
  private readonly observed = new Set<string>();
  private observedFor = '';
  observedAgain = 0;
  /** The points between deliveries already continued from (`run`'s `known`), this scenario's. */
  private readonly continued = new Set<string>();
  continuedAgain = 0;
  /** Calls replayed instead of sent, and calls sent by appliers (for the printed counts). */
  replayed = 0;
  sent = 0;

  /** `store`: an endpoint, or an in-process store (test/support/in-process-dynalite.ts) the appliers' clients call directly. */
  /**
   * The last full Scan of a run's table, while the store has written nothing since (InProcessStore.generation):
   * the checks between two deliveries (the TTL sweep, the look, the feeds, the continuation) read the table
   * several times over with nothing written in between, and get the very items a Scan would answer.
   */
  private snapshot?: { table: string; generation: number; items: Item[]; hash?: string };

  constructor(
    private readonly store: string | (Pick<InProcessStore, 'endpoint' | 'call'> & Partial<Pick<InProcessStore, 'requestHandler' | 'generation'>>),
    private readonly client: DynamoDBDocumentClient,
    private readonly clock: Clock,
    /** Also read the changes feeds at every observation point (checkFeeds); the long pair files leave it off for CI's time. */
    private readonly feeds = true,
    /** How the appliers reach an in-process store: straight to its handler (test/support/direct-dynalite.ts), or through the SDK. */
    private readonly transport: 'direct' | 'sdk' = 'direct',
    /** DynamoDB's TTL deletes every expired item at each observation point between deliveries (test/support/ttl.ts). */
    private readonly ttl = true,
  ) {}

  close(): void {
    for (const r of this.roles) r.client.destroy();
  }

  /** Every item of `table` now, as a full Scan answers it (kept while nothing is written: `snapshot`); callers only read them. */
  private async items(table: string): Promise<Item[]> {
    const generation = typeof this.store === 'string' ? undefined : this.store.generation?.();
    if (generation !== undefined && this.snapshot?.table === table && this.snapshot.generation === generation) return this.snapshot.items;
    const items = await scanAll(this.client, table);
    const after = typeof this.store === 'string' ? undefined : this.store.generation?.();
    this.snapshot = generation !== undefined && after === generation ? { table, generation, items } : undefined;
    return items;
  }

  /** A digest of the table's items, as `items` answers them. */
  private async digest(table: string): Promise<string> {
    const items = await this.items(table);
    const kept = this.snapshot?.items === items ? this.snapshot : undefined;
    if (kept?.hash) return kept.hash;
    const hash = createHash('sha1').update(JSON.stringify(items)).digest('base64');
    if (kept) kept.hash = hash;
    return hash;
  }

  /** Runs the schedule; answers how many calls each delivery made (for enumerating the next schedules). */
  async run(s: Scenario, schedule: Schedule, opts: RunOptions = {}): Promise<Map<Step, Calls>> {
    this.runs++;
    // Kept per scenario, so memory stays flat over a long exploration.
    if (this.observedFor !== s.name) {
      this.observed.clear();
      this.continued.clear();
      this.observedFor = s.name;
    }
    // SCHEDULES_PROGRESS: a line every 500 schedules, with the heap after a collection when --expose-gc is on (flat or not).
    if (process.env.SCHEDULES_PROGRESS && this.runs % 500 === 0) {
      (globalThis as { gc?: () => void }).gc?.();
      process.stderr.write(`${this.runs} schedules, ${Math.round((Date.now() - this.started) / 1000)} s, heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB, calls sent ${this.sent}, replayed ${this.replayed}, observations seen before ${this.observedAgain}, continuations seen before ${this.continuedAgain}\n`);
    }
    const table = `sched-${this.tables++}`;
    await this.createTable(table);
    const from = opts.from && opts.from.upTo > 0 && !this.trace ? opts.from : undefined;
    const record = opts.record || this.trace !== undefined;
    if (from && record) throw new Error('a run either replays or records');
    // A replay's table is put once its last replayed call is made (in the middleware), with the random ids the
    // replaying appliers drew in place of the recorded ones: they hold theirs in memory.
    if (!from || !tableAfter(from.recording, from.upTo)) await writeDataset(this.client, table, s.d0);
    // A trace keeps the calls only (the answers show what the writes did); a recording for replays also keeps the tables.
    this.footprint = { keys: new Set(), partitions: new Set(), any: false };
    this.current = { table, from, cursor: 0, recording: record ? { calls: [], tables: new Map() } : undefined, ids: new Map(), tables: opts.record === true };
    const replaying = () => this.current?.from !== undefined && this.current.cursor < this.current.from.upTo;
    const completed: number[] = [];
    const inFlight = new Set<number>();
    const calls = new Map<Step, Calls>();
    // TTL may delete what has expired at any point where time may have passed: between deliveries, while no applier is
    // in the middle of a change (a paused one is a delivery that goes on within its invocation). It runs before the
    // look, so the look sees what a reader would after it.
    let sweepable = !schedule.paused;
    // Inside a replayed prefix the recorded run made these observations (and sweeps), on the same table.
    const observe = async (when: string) => {
      if (replaying()) return;
      if (sweepable && this.ttl && (await sweepExpired(this.client, table, undefined, await this.items(table))).length && this.current?.recording && this.current.tables && this.current.cursor > 0) {
        this.current.recording.tables.set(this.current.cursor - 1, await this.items(table));
      }
      await this.checkPrivacy(s, table, completed, inFlight, `${when} of ${describeSchedule(s, schedule)}`);
    };
    /**
     * Between two deliveries, with no applier still running: if this scenario was already here (the same table, the
     * same changes done and in flight) with the same deliveries to come, what follows is that run's, call for call,
     * and was checked then. A run that records or replays goes on (its calls and its end are used).
     */
    const known = async (rest: Step[]): Promise<boolean> => {
      if (record || replaying()) return false;
      const key = `${[...completed].sort().join()}|${[...inFlight].sort().join()}|${JSON.stringify(rest)}|${await this.digest(table)}`;
      if (this.continued.has(key)) {
        this.continuedAgain++;
        return true;
      }
      this.continued.add(key);
      return false;
    };
    const deliver = async (step: Step, role: number, slot: string, pauseAfter?: number): Promise<void> => {
      inFlight.add(step.change);
      const ctl = this.role(role).ctl;
      Object.assign(ctl, { slot, calls: 0, writes: 0, conditional: [], repeatable: [], writesBefore: [0], takes: [], crashAfter: step.crashAfter, loseAfter: step.loseAfter, failAt: step.failAt, throttled: step.throttled, pauseAfter, afterWrite: undefined });
      ctl.resetLost?.();
      ctl.queue.reset(step.lifo ? 'lifo' : 'fifo');
      let marks = 0;
      const applier = new ChangeApplier(this.role(role).client, table, {
        clock: this.clock,
        // Mark tokens named by the delivery's place, so that a schedule's calls (and tables) are the same every run.
        token: () => `${slot}.${++marks}`,
        // A time limit stops a fan-out between chunks: the catalog's fan-outs have two units, one a chunk for that shape.
        ...(step.timeLimit ? { fanOutConcurrency: 1, remainingMs: () => 0, reserveMs: 1 } : {}),
      });
      try {
        await settled(applier.apply(s.changes[step.change]!), ctl.queue);
        completed.push(step.change);
        inFlight.delete(step.change);
        await observe(`after change ${step.change} completed`);
      } catch (error) {
        if (!(error instanceof Crash || error instanceof FailedWrite || error instanceof FanOutIncomplete)) throw new Error(`${(error as Error).message}\n  in ${describeSchedule(s, schedule)}`);
        await observe(`after change ${step.change} stopped`);
      } finally {
        calls.set(step, { calls: ctl.calls, writes: ctl.writes, conditional: ctl.conditional, repeatable: ctl.repeatable, writesBefore: ctl.writesBefore, takes: ctl.takes });
      }
    };
    try {
      if (schedule.paused) {
        const p = schedule.paused;
        const ctl = this.role(0).ctl;
        let release!: () => void;
        let abandon!: (error: Error) => void;
        ctl.gate = new Promise<void>((r, reject) => ((release = r), (abandon = reject)));
        const reached = new Promise<void>((r) => (ctl.paused = () => ((this.current!.pausing = true), r())));
        const running = deliver(p, 0, 'p', p.pauseAfter);
        await Promise.race([reached, running]);
        try {
          for (const [j, step] of schedule.during.entries()) await deliver(step, 1, `d${j}`);
        } catch (error) {
          // The schedule failed while this applier waited: it must not go on into the next schedule's table.
          const over = new Crash('the schedule failed during the pause');
          ctl.queue.die(over);
          abandon(over);
          await running.catch(() => undefined);
          throw error;
        }
        // From here on changes have completed while this applier was paused: every write it makes is an observation point.
        // Only the item just put can have become reachable since the last look: checking its keys is the whole check.
        ctl.afterWrite = async (item) => (replaying() ? undefined : this.checkPrivacy(s, table, completed, inFlight, `after write ${ctl.writes} of the resumed change ${p.change} of ${describeSchedule(s, schedule)}`, item));
        this.current.pausing = false;
        release();
        await running;
        sweepable = true;
      } else {
        for (const [j, step] of schedule.during.entries()) {
          if (j > 0 && (await known([...schedule.during.slice(j), ...schedule.after]))) return calls;
          await deliver(step, 1, `d${j}`);
        }
      }
      for (const [j, step] of schedule.after.entries()) {
        if (await known(schedule.after.slice(j))) return calls;
        await deliver(step, 1, `a${j}`);
      }
      if (replaying()) throw new Error(`the schedule ended after ${this.current.cursor} of the ${from!.upTo} calls it was to replay: ${describeSchedule(s, schedule)}`);
      // Kept before the final check, so that a failing schedule's calls can be read (a reproduction's first question).
      this.recording = this.current.recording;
      await this.checkFinal(s, table, describeSchedule(s, schedule));
      if (this.trace && this.recording) this.trace(describeSchedule(s, schedule), this.recording);
      return calls;
    } finally {
      this.current = undefined;
      await this.client.send(new DeleteTableCommand({ TableName: table }));
    }
  }

  /**
   * A fresh table: CreateTable, then DescribeTable until it and its indexes are ACTIVE, a timer turn between
   * looks. Both stores answer ACTIVE at the first look (DynamoDB Local, and the in-process dynalite:
   * in-process-dynalite.ts, activeOnCreate), so no schedule waits for a timer.
   */
  private async createTable(table: string): Promise<void> {
    await this.client.send(new CreateTableCommand(createTableInput(table)));
    for (let attempt = 0; attempt < 100; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 0));
      const { Table } = await this.client.send(new DescribeTableCommand({ TableName: table }));
      if (Table?.TableStatus === 'ACTIVE' && (Table.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE')) return;
    }
    throw new Error(`table ${table} did not become ACTIVE`);
  }

  private role(i: number): { client: DynamoDBDocumentClient; ctl: Controller } {
    while (this.roles.length <= i) {
      const i = this.roles.length;
      const ctl: Controller = { slot: '', calls: 0, writes: 0, conditional: [], repeatable: [], writesBefore: [0], takes: [], queue: new CallQueue() };
      // The write in flight is number writes + 1: intercept counts it once the call, retries and all, returns.
      let lost = false;
      ctl.resetLost = () => (lost = false);
      const losing = (command: string) => ctl.loseAfter !== undefined && !lost && WRITES.test(command) && ctl.writes + 1 === ctl.loseAfter;
      let client: DynamoDBDocumentClient;
      if (typeof this.store !== 'string' && this.transport === 'direct') {
        client = directClient(this.store.call, (command, input, send) =>
          this.intercept(i, ctl, command, input, async () => {
            const out = await send();
            if (!losing(command)) return out;
            // The response is lost: the caller sees a timeout and, as the change path's standard retry strategy does
            // on a timeout, sends the same request again; its answer is the call's.
            lost = true;
            return send();
          }),
        );
      } else {
        client = createWriteClient(typeof this.store === 'string' ? { endpoint: this.store } : this.store);
        client.middlewareStack.add((next, context) => async (args) => (await this.intercept(i, ctl, String(context.commandName), args.input as Record<string, unknown>, () => next(args) as Promise<{ output: unknown }>)) as Awaited<ReturnType<typeof next>>, {
          step: 'initialize',
          name: 'schedule',
        });
        // Inside the retry middleware (which wraps this step), so the SDK retries the lost response as it would a real one.
        client.middlewareStack.add(
          (next, context) => async (args) => {
            const out = await next(args);
            if (losing(String(context.commandName))) {
              lost = true;
              loseResponse(out);
            }
            return out;
          },
          { step: 'deserialize', name: 'lose-response' },
        );
      }
      this.roles.push({ client, ctl });
    }
    return this.roles[i]!;
  }

  /**
   * Every call of applier i, whichever the transport: waits at the pause point, replays a recorded
   * prefix or sends, counts calls and writes, records, dies at the crash point, and looks at what a
   * write of a resumed applier made reachable.
   */
  private async intercept(i: number, ctl: Controller, command: string, input: Record<string, unknown>, send: () => Promise<{ output: unknown }>): Promise<{ output: unknown }> {
    await ctl.queue.turn();
    try {
      return await this.release(i, ctl, command, input, send);
    } finally {
      ctl.queue.done();
    }
  }

  /** One call of applier i, its turn come (call-queue.ts). */
  private async release(i: number, ctl: Controller, command: string, input: Record<string, unknown>, send: () => Promise<{ output: unknown }>): Promise<{ output: unknown }> {
    if (ctl.pauseAfter !== undefined && ctl.calls === ctl.pauseAfter && ctl.gate) {
      ctl.paused?.();
      await ctl.gate;
    }
    if (ctl.calls >= MAX_CALLS) throw new Error(`runaway applier: more than ${MAX_CALLS} calls (last: ${JSON.stringify(input).slice(0, 300)})`);
    const run = this.current;
    const write = WRITES.test(command);
    if (write && ctl.failAt !== undefined && ctl.writes + 1 === ctl.failAt && (!run?.from || run.cursor >= run.from.upTo)) throw new FailedWrite(`write ${ctl.failAt} failed without landing`);
    if (ctl.throttled !== undefined && partitionOf(input)?.startsWith(ctl.throttled)) throw new FailedWrite(`${ctl.throttled} throttled`);
    if (run?.pausing && i !== 0 && write) addWrites(this.footprint!, input);
    let out: { output: unknown };
    const index = run?.cursor ?? 0;
    if (run?.from && run.cursor < run.from.upTo) {
      const recorded = run.from.recording.calls[run.cursor++]!;
      const normal = normalised(input, run.table);
      if (recorded.role !== i || recorded.command !== command || recorded.input !== normal) {
        throw new Error(`replay: call ${index + 1} is not the recorded one (the appliers are not deterministic?):\n  recorded: applier ${recorded.role} ${recorded.command} ${recorded.input.slice(0, 400)}\n  made:     applier ${i} ${command} ${normal.slice(0, 400)}`);
      }
      randomIds(JSON.stringify(input)).forEach((id, n) => run.ids.set(recorded.ids[n]!, id));
      this.replayed++;
      const start = run.cursor === run.from.upTo ? tableAfter(run.from.recording, run.cursor) : undefined;
      if (start) await putItems(this.client, run.table, translated(start, run.table, run.ids) as Item[]);
      if (recorded.refused) throw recorded.refused;
      out = { output: translated(recorded.output, run.table, run.ids) };
    } else {
      if (run) run.cursor++;
      this.sent++;
      try {
        out = await send();
      } catch (error) {
        // Refused (a condition that failed): not counted as a call, as ever; a replay must refuse it as well.
        run?.recording?.calls.push({ role: i, slot: ctl.slot, command, input: normalised(input, run.table), ids: randomIds(JSON.stringify(input)), refused: error, writes: ctl.writes, write: false });
        throw error;
      }
    }
    ctl.calls++;
    ctl.writesBefore.push(ctl.writes + (write ? 1 : 0));
    if (run?.recording) {
      run.recording.calls.push({ role: i, slot: ctl.slot, command, input: normalised(input, run.table), ids: randomIds(JSON.stringify(input)), output: renamed(withoutMetadata(out.output), run.table, 'TABLE'), writes: ctl.writes + (write ? 1 : 0), write });
      if (write && run.tables) run.recording.tables.set(index, await this.items(run.table));
    }
    if (!write) return out;
    ctl.writes++;
    const written = input as { ConditionExpression?: string; UpdateExpression?: string; ReturnValues?: string; Key?: Item };
    if (written.ConditionExpression) ctl.conditional.push(ctl.writes);
    if (repeatable(command, written)) ctl.repeatable.push(ctl.writes);
    if (/^ADD #n /.test(written.UpdateExpression ?? '') && String(written.Key?.sk).startsWith('SEQ')) ctl.takes.push({ call: ctl.calls, write: ctl.writes });
    if (ctl.crashAfter !== undefined && ctl.writes >= ctl.crashAfter) {
      const crash = new Crash(`crash after write ${ctl.writes}`);
      ctl.queue.die(crash);
      throw crash;
    }
    // Only a write that puts index keys can make something reachable: the others need no look.
    const item = (input as { Item?: Item }).Item;
    if (item && INDEX_ATTRIBUTES.some((a) => item[a] !== undefined)) await ctl.afterWrite?.(item);
    return out;
  }

  private async checkPrivacy(s: Scenario, table: string, completed: number[], inFlight: Set<number>, where: string, only?: Item): Promise<void> {
    const done = [...new Set(completed)].sort();
    const optional = [...inFlight].filter((c) => !done.includes(c)).sort();
    const id = `${s.name}|${done.join(',')}|${optional.join(',')}`;
    let allowed = this.allowed.get(id);
    if (!allowed) {
      allowed = new Set<string>();
      for (const extra of subsets(optional)) {
        for (const order of permutations([...done, ...extra])) for (const k of (await this.expectation(s, order)).keys) allowed.add(k);
      }
      this.allowed.set(id, allowed);
    }
    if (!only) {
      // A table this scenario already showed in full, with the same changes done and in flight, was checked then:
      // the indexes follow from the table's items, so the same items reach the same keys.
      const seen = `${id}|${await this.digest(table)}`;
      if (this.observed.has(seen)) {
        this.observedAgain++;
        return;
      }
      this.observed.add(seen);
    }
    await this.checkShardMarks(table, where, only);
    const reached = only ? keysOf(only) : await reachableKeys(this.client, table);
    const leaked = reached.filter((k) => !allowed.has(k));
    if (leaked.length) throw new Error(`privacy: reachable with no admissible order (${where}):\n  ${leaked.join('\n  ')}`);
    if (!only && this.feeds) await this.checkFeeds(s, table, new Set(reached), where);
  }

  /**
   * The guest shard records at the same observation point (test/support/shard-marks.ts): every guest shard holding
   * an item is marked in its event's record, or a walk would miss it. `only`: the item a resumed applier just put.
   */
  private async checkShardMarks(table: string, where: string, only?: Item): Promise<void> {
    const eventId = only ? eventOfGuestShard(String(only.pk)) : undefined;
    if (only && eventId === undefined) return;
    const record = async () => (await this.client.send(new GetCommand({ TableName: table, Key: keys.guestShards(eventId!), ConsistentRead: true }))).Item;
    const items = only ? [only, ...[await record()].filter((i): i is Item => i !== undefined)] : await this.items(table);
    const unmarked = unmarkedShards(items);
    if (unmarked.length) throw new Error(`shard record: ${unmarked.join('; ')} (${where})`);
  }

  /**
   * The changes feeds at the same observation point (PRODUCT P16): read from
   * no cursor, every event or guest they show as upserted is one the event
   * index reaches now, so a feed never shows what the read routes would not.
   */
  private async checkFeeds(s: Scenario, table: string, reached: Set<string>, where: string): Promise<void> {
    const repo = new DynamoRepository(this.client, table);
    const shown = (pk: string, sk: string) => [...reached].some((k) => k.startsWith(`${INDEXES.event.name} `) && k.endsWith(`<- ${pk} ${sk}`));
    const ctx = feedContext(repo, this.clock());
    for (const c of await fromNoCursor((cursor) => catalogueChanges(ctx, { cursor, limit: 100 }, 'https://s.example'))) {
      if (c.change === 'upserted' && !shown(`EVENT#${c.id}`, 'EVENT')) throw new Error(`feed: catalogue shows ${c.id}, which no read route does (${where})`);
    }
    const eventIds = new Set([...s.d0.events.map((e) => e.id), ...s.changes.flatMap((c) => ('event' in c ? [c.event.id] : 'event_id' in c ? [c.event_id] : []))]);
    for (const eventId of eventIds) {
      const guests = await fromNoCursor((cursor) => guestChanges(ctx, repo, { eventId, cursor, limit: 100 })).catch((error: { statusCode?: number }) => {
        if (error.statusCode === 404) return [];
        throw error;
      });
      for (const c of guests) if (c.change === 'upserted' && !shown(keys.rsvp(eventId, c.id)[PK]!, keys.rsvp(eventId, c.id)[SK]!)) throw new Error(`feed: guests of ${eventId} show ${c.id}, whom the guest list does not (${where})`);
    }
    // A place's feed shows an event only while the event index reaches it and it is located there.
    const items = new Map((await this.items(table)).filter((i) => i.type === 'EVENT').map((i) => [String(i.event_id), i]));
    for (const place of placesOf(s)) {
      for (const c of await fromNoCursor((cursor) => placeChanges(ctx, { cursor, limit: 100, place }, 'https://s.example'))) {
        const there = placeMatches(placeOf(items.get(c.id)?.location as Parameters<typeof placeOf>[0]), place);
        if (c.change === 'upserted' && !(shown(`EVENT#${c.id}`, 'EVENT') && there)) throw new Error(`feed: the place ${JSON.stringify(place)} shows ${c.id}, which no read route shows there (${where})`);
      }
    }
  }

  private async checkFinal(s: Scenario, table: string, where: string): Promise<void> {
    const items = await this.items(table);
    // Unfinished feed work shows as its source item's `pending` (a derived item's feed note stays, owed only while that lasts).
    const owed = items.filter((i) => i.pending || i.tally_pending).map((i) => `${String(i.pk)} ${String(i.sk)}`);
    if (owed.length) throw new Error(`work still owed at the end of ${where}: ${owed.join(', ')}`);
    // A start from no cursor lists every member a feed shows (it reads the member lists, not the entries).
    const listed = new Set(items.filter((i) => i.type === 'FEED_MEMBER').map((i) => `${String(i.pk)} ${String(i.sk)}`));
    for (const item of items) {
      for (const scope of scopesShowing(item)) {
        const member = memberKey(scope, feedMemberOf(item));
        if (!listed.has(`${member.pk} ${member.sk}`)) throw new Error(`feed: ${feedMemberOf(item)} is shown in ${scope} but not among its members at the end of ${where}`);
      }
    }
    // A follower of each place from no cursor holds exactly the place's public events (the event index, located there).
    const repo = new DynamoRepository(this.client, table);
    const ctx = feedContext(repo, this.clock());
    const shownEvents = (await scanAll(this.client, table, INDEXES.event.name)).filter((i) => eventIndexEntryKind(i) === 'EVENT');
    for (const place of placesOf(s)) {
      const replica = new Set<string>();
      for (const c of await fromNoCursor((cursor) => placeChanges(ctx, { cursor, limit: 100, place }, 'https://s.example'))) {
        if (c.change === 'upserted') replica.add(c.id);
        else replica.delete(c.id);
      }
      const expected = shownEvents.filter((i) => placeMatches(placeOf(i.location as Parameters<typeof placeOf>[0]), place)).map((i) => String(i.event_id));
      if (JSON.stringify([...replica].sort()) !== JSON.stringify(expected.sort())) throw new Error(`feed: the place ${JSON.stringify(place)} lists ${[...replica].join(', ')}, not ${expected.join(', ')}, at the end of ${where}`);
    }
    const model = JSON.stringify(readModel(items));
    const all = [...new Set(s.changes.map((_, i) => i))];
    for (const order of permutations(all)) if ((await this.expectation(s, order)).model === model) return;
    throw new Error(`final table is no fresh load of any order of the changes: ${where}\n${model}`);
  }

  private expectation(s: Scenario, order: number[]): Promise<{ model: string; keys: Set<string> }> {
    const id = `${s.name}|${order.join(',')}`;
    let found = this.expected.get(id);
    if (!found) {
      found = (async () => {
        const table = `expect-${this.tables++}`;
        await ensureTable(this.client, table);
        await writeDataset(this.client, table, fold(s.d0, order.map((i) => s.changes[i]!)).dataset);
        const result = { model: JSON.stringify(readModel(await scanAll(this.client, table))), keys: new Set(await reachableKeys(this.client, table)) };
        await this.client.send(new DeleteTableCommand({ TableName: table }));
        return result;
      })();
      this.expected.set(id, found);
    }
    return found;
  }
}

/** Every place query the scenario's events answer at some point: the place feeds a follower of its places reads. */
function placesOf(s: Scenario): PlaceKey[] {
  const events = [...s.d0.events, ...s.changes.flatMap((c) => ('event' in c ? [c.event] : []))];
  const byName = new Map(events.flatMap((e) => placeQueriesOf(placeOf(e.location))).map((q) => [JSON.stringify(q), q]));
  return [...byName.values()];
}

/** Every change of a feed read from no cursor until it is up to date. */
async function fromNoCursor<C>(page: (cursor: SealedCursor | undefined) => Promise<FeedPage<C>>): Promise<C[]> {
  const changes: C[] = [];
  let cursor: SealedCursor | undefined;
  for (let pages = 0, more = true; more; pages++) {
    if (pages > 100) throw new Error('feed: no end after 100 pages');
    const answer = await page(cursor);
    changes.push(...answer.changes);
    cursor = parseCursor(answer.next_cursor)!;
    more = answer.has_more;
  }
  return changes;
}

/**
 * What the deliveries that run during a pause write (every write they attempt, landed or not): item keys,
 * their partitions, and whether there was any write at all (an index's contents may follow any write).
 */
export interface Footprint {
  keys: Set<string>;
  partitions: Set<string>;
  any: boolean;
}

function addWrites(f: Footprint, input: Record<string, unknown>): void {
  f.any = true;
  const add = (key: Record<string, unknown> | undefined) => {
    if (!key) return;
    f.keys.add(`${String(key.pk)}|${String(key.sk)}`);
    f.partitions.add(String(key.pk));
  };
  add((input.Item ?? input.Key) as Record<string, unknown> | undefined);
  for (const requests of Object.values((input.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Record<string, unknown> }; DeleteRequest?: { Key: Record<string, unknown> } }[]>)) {
    for (const r of requests) add(r.PutRequest?.Item ?? r.DeleteRequest?.Key);
  }
}

/**
 * Whether a delivery's calls (recorded) commute with writes of this footprint: each changes nothing (a read, or a
 * write its condition refused) and reads nothing the footprint may have changed (a key it wrote, a partition it
 * wrote in, an index at all if it wrote anything). Then pausing before these calls or after them is the same
 * schedule: the others run from the same table and the calls get the same answers either way.
 */
export function commute(calls: readonly RecordedCall[], f: Footprint): boolean {
  return calls.every((c) => {
    if (c.write) return false;
    const input = JSON.parse(c.input) as Record<string, unknown> & { Key?: Record<string, unknown>; IndexName?: string; KeyConditionExpression?: string; ExpressionAttributeValues?: Record<string, unknown>; ExpressionAttributeNames?: Record<string, string> };
    const hit = (key: Record<string, unknown> | undefined) => key !== undefined && f.keys.has(`${String(key.pk)}|${String(key.sk)}`);
    if (/^(Get|Update|Delete)/.test(c.command)) return !hit(input.Key);
    if (c.command === 'PutItemCommand') return !hit(input.Item as Record<string, unknown>);
    if (c.command === 'BatchGetItemCommand') return Object.values(input.RequestItems as Record<string, { Keys: Record<string, unknown>[] }>).every((t) => t.Keys.every((k) => !hit(k)));
    if (c.command === 'QueryCommand' && !input.IndexName) {
      // The partition the query reads: the value bound to `pk` in its key condition.
      const name = Object.entries(input.ExpressionAttributeNames ?? {}).find(([, v]) => v === 'pk')?.[0] ?? 'pk';
      const bound = new RegExp(`^${name} = (:[A-Za-z0-9_]+)`).exec(input.KeyConditionExpression ?? '')?.[1];
      return bound !== undefined && !f.partitions.has(String(input.ExpressionAttributeValues?.[bound]));
    }
    return !f.any;
  });
}

/** The table after the first `calls` calls of a recording (reads change nothing: the last write's table); undefined before any write. */
function tableAfter(recording: Recording, calls: number): Item[] | undefined {
  for (let i = calls - 1; i >= 0; i--) {
    const table = recording.tables.get(i);
    if (table) return table;
  }
  return undefined;
}

/** The first `upTo` for replaying `recording` up to and including write `k` of the delivery in `slot` (a crash right after it). */
export function throughWrite(recording: Recording, slot: string, k: number): number {
  const i = recording.calls.findIndex((c) => c.slot === slot && c.write && c.writes === k);
  if (i < 0) throw new Error(`the recording has no write ${k} of ${slot}`);
  return i + 1;
}

/** The `upTo` for replaying `recording` up to, not including, write `k` of the delivery in `slot` (its response then lost). */
export function beforeWrite(recording: Recording, slot: string, k: number): number {
  return throughWrite(recording, slot, k) - 1;
}

/** A call's input as recorded: JSON, with the table's name and the random ids a write may carry (a feed entry's writer) blanked. */
function normalised(input: unknown, table: string): string {
  return JSON.stringify(input, (_key, value: unknown) => (value instanceof Set ? { set: [...(value as Set<unknown>)] } : value)).replace(UUID, 'UUID')
    .replaceAll(JSON.stringify(table), '"TABLE"');
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const randomIds = (json: string) => json.match(UUID) ?? [];

/** A recorded answer or table as the replaying run must see it: its table's name, and the random ids its appliers drew. */
function translated(value: unknown, table: string, ids: Map<string, string>): unknown {
  const swapped = renamed(value, 'TABLE', table);
  return ids.size ? deepStrings(swapped, (x) => x.replace(UUID, (id) => ids.get(id) ?? id)) : swapped;
}

function deepStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => deepStrings(v, f));
  if (value instanceof Set) return new Set([...value].map((v) => deepStrings(v, f)));
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deepStrings(v, f)]));
}

/** An answer without its `$metadata` (request id, attempts: the transport's, not the store's; the change path reads none of it). */
function withoutMetadata(output: unknown): unknown {
  if (output === null || typeof output !== 'object') return output;
  const { $metadata: _metadata, ...rest } = output as Record<string, unknown>;
  return rest;
}

/** A deep copy of an answer with the table's name (a key of `Responses`, `UnprocessedKeys`…, or a value) replaced. */
function renamed(value: unknown, from: string, to: string): unknown {
  if (value === from) return to;
  if (Array.isArray(value)) return value.map((v) => renamed(v, from, to));
  if (value instanceof Set) return new Set([...value].map((v) => renamed(v, from, to)));
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k === from ? to : k, renamed(v, from, to)]));
}

/** Puts items as they are (a recorded table), 25 to a call. */
async function putItems(client: DynamoDBDocumentClient, table: string, items: Item[]): Promise<void> {
  for (let i = 0; i < items.length; i += 25) {
    let requests: Record<string, { PutRequest: { Item: Item } }[]> | undefined = { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) };
    while (requests && Object.keys(requests).length) {
      const out = await client.send(new BatchWriteCommand({ RequestItems: requests }));
      requests = out.UnprocessedItems as typeof requests;
    }
  }
}

/**
 * Whether landing this write twice leaves the table and the answer as landing it once: a put or a delete
 * with no condition, an update with no condition that only SETs or REMOVEs values given (no `ADD`, no
 * arithmetic, no list_append) and answers nothing or the new values. The SDK retries a lost response with
 * the same input, so losing such a write's response changes nothing. A `TransactWriteItems` is never
 * counted as one (the change path does not use it).
 */
export function repeatable(command: string, input: { ConditionExpression?: string; UpdateExpression?: string; ReturnValues?: string }): boolean {
  if (input.ConditionExpression) return false;
  if (!['NONE', 'ALL_NEW', 'UPDATED_NEW', undefined].includes(input.ReturnValues)) return false;
  if (/^(Put|Delete|BatchWrite)/.test(command)) return true;
  return /^Update/.test(command) && !/\bADD\b|\bDELETE\b|[+-]|list_append/i.test(input.UpdateExpression ?? '');
}

/**
 * A delivery's outcome once none of its calls is waiting or in flight any more: the write side waits for every call of
 * a wave before it goes on or gives up, so a delivery that ended with calls still running left work behind it (a
 * Lambda frozen with promises pending, thawed at the next invocation): that is refused here.
 */
async function settled<T>(work: Promise<T>, queue: CallQueue): Promise<T> {
  try {
    return await work;
  } finally {
    const served = queue.served;
    const running = queue.pending;
    await queue.idle();
    if ((running || queue.served !== served) && process.env.SCHEDULES_ALLOW_DANGLING !== '1') {
      throw new Error('a delivery ended with DynamoDB calls still waiting or in flight: the write side must wait for every call it sent');
    }
  }
}

/** Where each index reaches: index, index keys, base keys. */
async function reachableKeys(client: DynamoDBDocumentClient, table: string): Promise<string[]> {
  const out: string[] = [];
  for (const index of Object.values(INDEXES)) {
    for (const i of await scanAll(client, table, index.name)) out.push(indexKey(index, i));
  }
  return out;
}

/** Where one item is reached: the same strings, for the indexes it has keys in. */
function keysOf(item: Item): string[] {
  return Object.values(INDEXES).filter((index) => item[index.partitionKey] !== undefined && item[index.sortKey] !== undefined).map((index) => indexKey(index, item));
}

const indexKey = (index: { name: string; partitionKey: string; sortKey: string }, i: Item) =>
  `${index.name} ${String(i[index.partitionKey])} ${String(i[index.sortKey])} <- ${String(i.pk)} ${String(i.sk)}`;

export function describeSchedule(s: Scenario, schedule: Schedule): string {
  const step = (x: Step) => `${x.change}${x.lifo ? '↺' : ''}${x.crashAfter !== undefined ? `†${x.crashAfter}` : ''}${x.loseAfter !== undefined ? `~${x.loseAfter}` : ''}${x.failAt !== undefined ? `✗${x.failAt}` : ''}${x.throttled !== undefined ? `⛔${x.throttled}` : ''}${x.timeLimit ? '⏱' : ''}`;
  const p = schedule.paused;
  return `${s.name}: ${p ? `${step(p)} paused after ${p.pauseAfter} [${schedule.during.map(step).join(' ')}] resumed` : schedule.during.map(step).join(' ')}${schedule.after.length ? ` then ${schedule.after.map(step).join(' ')}` : ''}`;
}

export function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

function subsets<T>(xs: readonly T[]): T[][] {
  return xs.reduce<T[][]>((acc, x) => [...acc, ...acc.map((s) => [...s, x])], [[]]);
}

