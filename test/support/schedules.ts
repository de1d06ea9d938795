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
 *   without the changes still in flight;
 * - at the end: the read model equals the fresh load of the fold of one
 *   order of all changes, and nothing is owed (no `pending`, no tally note).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { Change } from '../../lambdas/core/changes.js';
import type { Clock } from '../../lambdas/core/clock.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { fold } from '../../lambdas/core/fold.js';
import { ChangeApplier, FanOutIncomplete } from '../../lambdas/store/applier.js';
import { createWriteClient } from '../../lambdas/store/client.js';
import { INDEXES } from '../../lambdas/store/table.js';
import { catalogueChanges, guestChanges } from '../../lambdas/core/feeds.js';
import { DynamoRepository } from '../../lambdas/store/repository.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import type { InProcessStore } from './in-process-dynalite.js';
import { readModel, scanAll } from './read-model.js';

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
  timeLimit?: boolean;
}

/** What one delivery did, for enumerating the next schedules. */
export interface Calls {
  calls: number;
  /** Writes that landed. */
  writes: number;
  /** The writes (by number) that were conditional: a lost response makes their retry fail its condition. */
  conditional: number[];
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

class Crash extends Error {}

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
  conditional: number[];
  takes: { call: number; write: number }[];
  paused?: () => void;
  gate?: Promise<void>;
  resetLost?: () => void;
}

export class Explorer {
  /** Schedules run so far. */
  runs = 0;
  private readonly started = Date.now();
  private tables = 0;
  private readonly expected = new Map<string, Promise<{ model: string; keys: Set<string> }>>();
  private readonly allowed = new Map<string, Set<string>>();
  private readonly roles: { client: DynamoDBDocumentClient; ctl: Controller }[] = [];

  /** `store`: an endpoint, or an in-process store (test/support/in-process-dynalite.ts) the appliers' clients call directly. */
  constructor(
    private readonly store: string | Pick<InProcessStore, 'endpoint' | 'requestHandler'>,
    private readonly client: DynamoDBDocumentClient,
    private readonly clock: Clock,
    /** Also read the changes feeds at every observation point (checkFeeds); the long pair files leave it off for CI's time. */
    private readonly feeds = true,
  ) {}

  close(): void {
    for (const r of this.roles) r.client.destroy();
  }

  /** Runs the schedule; answers how many calls each delivery made (for enumerating the next schedules). */
  async run(s: Scenario, schedule: Schedule): Promise<Map<Step, Calls>> {
    this.runs++;
    // SCHEDULES_PROGRESS: a line every 500 schedules, with the heap after a collection when --expose-gc is on (flat or not).
    if (process.env.SCHEDULES_PROGRESS && this.runs % 500 === 0) {
      (globalThis as { gc?: () => void }).gc?.();
      process.stderr.write(`${this.runs} schedules, ${Math.round((Date.now() - this.started) / 1000)} s, heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB\n`);
    }
    const table = `sched-${this.tables++}`;
    await ensureTable(this.client, table);
    await writeDataset(this.client, table, s.d0);
    const completed: number[] = [];
    const inFlight = new Set<number>();
    const calls = new Map<Step, Calls>();
    const observe = async (when: string) => this.checkPrivacy(s, table, completed, inFlight, `${when} of ${describeSchedule(s, schedule)}`);
    const deliver = async (step: Step, role: number, pauseAfter?: number): Promise<void> => {
      inFlight.add(step.change);
      const ctl = this.role(role).ctl;
      Object.assign(ctl, { calls: 0, writes: 0, conditional: [], takes: [], crashAfter: step.crashAfter, loseAfter: step.loseAfter, pauseAfter, afterWrite: undefined });
      ctl.resetLost?.();
      const applier = new ChangeApplier(this.role(role).client, table, {
        clock: this.clock,
        writeConcurrency: 1,
        fanOutConcurrency: 1,
        ...(step.timeLimit ? { remainingMs: () => 0, reserveMs: 1 } : {}),
      });
      try {
        await applier.apply(s.changes[step.change]!);
        completed.push(step.change);
        inFlight.delete(step.change);
        await observe(`after change ${step.change} completed`);
      } catch (error) {
        if (!(error instanceof Crash || error instanceof FanOutIncomplete)) throw new Error(`${(error as Error).message}\n  in ${describeSchedule(s, schedule)}`);
        await observe(`after change ${step.change} stopped`);
      } finally {
        calls.set(step, { calls: ctl.calls, writes: ctl.writes, conditional: ctl.conditional, takes: ctl.takes });
      }
    };
    try {
      if (schedule.paused) {
        const p = schedule.paused;
        const ctl = this.role(0).ctl;
        let release!: () => void;
        ctl.gate = new Promise<void>((r) => (release = r));
        const reached = new Promise<void>((r) => (ctl.paused = r));
        const running = deliver(p, 0, p.pauseAfter);
        await Promise.race([reached, running]);
        for (const step of schedule.during) await deliver(step, 1);
        // From here on changes have completed while this applier was paused: every write it makes is an observation point.
        // Only the item just put can have become reachable since the last look: checking its keys is the whole check.
        ctl.afterWrite = (item) => this.checkPrivacy(s, table, completed, inFlight, `after write ${ctl.writes} of the resumed change ${p.change} of ${describeSchedule(s, schedule)}`, item);
        release();
        await running;
      } else {
        for (const step of schedule.during) await deliver(step, 1);
      }
      for (const step of schedule.after) await deliver(step, 1);
      await this.checkFinal(s, table, describeSchedule(s, schedule));
      return calls;
    } finally {
      await this.client.send(new DeleteTableCommand({ TableName: table }));
    }
  }

  private role(i: number): { client: DynamoDBDocumentClient; ctl: Controller } {
    while (this.roles.length <= i) {
      const ctl: Controller = { calls: 0, writes: 0, conditional: [], takes: [] };
      const client = createWriteClient(typeof this.store === 'string' ? { endpoint: this.store } : this.store);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (ctl.pauseAfter !== undefined && ctl.calls === ctl.pauseAfter && ctl.gate) {
            ctl.paused?.();
            await ctl.gate;
          }
          if (ctl.calls >= MAX_CALLS) throw new Error(`runaway applier: more than ${MAX_CALLS} calls (last: ${JSON.stringify(args.input).slice(0, 300)})`);
          const out = await next(args);
          ctl.calls++;
          if (!WRITES.test(String(context.commandName))) return out;
          ctl.writes++;
          const input = args.input as { ConditionExpression?: string; UpdateExpression?: string; Key?: Item };
          if (input.ConditionExpression) ctl.conditional.push(ctl.writes);
          if (/^ADD #n /.test(input.UpdateExpression ?? '') && String(input.Key?.sk).startsWith('SEQ')) ctl.takes.push({ call: ctl.calls, write: ctl.writes });
          if (ctl.crashAfter !== undefined && ctl.writes >= ctl.crashAfter) throw new Crash(`crash after write ${ctl.writes}`);
          // Only a write that puts index keys can make something reachable: the others need no look.
          const item = (args.input as { Item?: Item }).Item;
          if (item && INDEX_ATTRIBUTES.some((a) => item[a] !== undefined)) await ctl.afterWrite?.(item);
          return out;
        },
        { step: 'initialize', name: 'schedule' },
      );
      // Inside the retry middleware (which wraps this step), so the SDK retries the lost response as it would a real one.
      // The write in flight is number writes + 1: the middleware above counts it once the call, retries and all, returns.
      let lost = false;
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const out = await next(args);
          if (ctl.loseAfter !== undefined && !lost && WRITES.test(String(context.commandName)) && ctl.writes + 1 === ctl.loseAfter) {
            lost = true;
            throw Object.assign(new Error('socket timed out after the request was sent'), { name: 'TimeoutError' });
          }
          return out;
        },
        { step: 'deserialize', name: 'lose-response' },
      );
      ctl.resetLost = () => (lost = false);
      this.roles.push({ client, ctl });
    }
    return this.roles[i]!;
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
    const reached = only ? keysOf(only) : await reachableKeys(this.client, table);
    const leaked = reached.filter((k) => !allowed.has(k));
    if (leaked.length) throw new Error(`privacy: reachable with no admissible order (${where}):\n  ${leaked.join('\n  ')}`);
    if (!only && this.feeds) await this.checkFeeds(s, table, new Set(reached), where);
  }

  /**
   * The changes feeds at the same observation point (PRODUCT P16): read from
   * no cursor, every event or guest they show as upserted is one the event
   * index reaches now, so a feed never shows what the read routes would not.
   */
  private async checkFeeds(s: Scenario, table: string, reached: Set<string>, where: string): Promise<void> {
    const repo = new DynamoRepository(this.client, table);
    const shown = (pk: string, sk: string) => [...reached].some((k) => k.startsWith(`${INDEXES.event.name} `) && k.endsWith(`<- ${pk} ${sk}`));
    const now = this.clock();
    const events = await catalogueChanges(repo, { limit: 100 }, now, 'https://s.example');
    for (const c of events.changes) if (!shown(`EVENT#${c.id}`, 'EVENT')) throw new Error(`feed: catalogue shows ${c.id}, which no read route does (${where})`);
    const eventIds = new Set([...s.d0.events.map((e) => e.id), ...s.changes.flatMap((c) => ('event' in c ? [c.event.id] : 'event_id' in c ? [c.event_id] : []))]);
    for (const eventId of eventIds) {
      const guests = await guestChanges(repo, repo, { eventId, limit: 100 }, now).catch((error: { statusCode?: number }) => {
        if (error.statusCode === 404) return { changes: [] };
        throw error;
      });
      for (const c of guests.changes) if (!shown(`EVENT#${eventId}`, `RSVP#${c.id}`)) throw new Error(`feed: guests of ${eventId} show ${c.id}, whom the guest list does not (${where})`);
    }
  }

  private async checkFinal(s: Scenario, table: string, where: string): Promise<void> {
    const items = await scanAll(this.client, table);
    const owed = items.filter((i) => i.pending || i.tally_pending || i.feed_pending).map((i) => `${String(i.pk)} ${String(i.sk)}`);
    if (owed.length) throw new Error(`work still owed at the end of ${where}: ${owed.join(', ')}`);
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
  const step = (x: Step) => `${x.change}${x.crashAfter !== undefined ? `†${x.crashAfter}` : ''}${x.loseAfter !== undefined ? `~${x.loseAfter}` : ''}${x.timeLimit ? '⏱' : ''}`;
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

