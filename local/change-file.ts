/**
 * Applies a JSON Lines file of change records (PRODUCT P14) as if in file
 * order: blank lines are ignored, a line that is not a valid record is
 * reported with its line number and field path and skipped, every other line
 * goes through an applier. Used by `npm run data:apply` and its tests.
 *
 * Up to `concurrency` lines are applied at once (default 1: one after
 * another). A line starts only once every earlier line it depends on has
 * finished (lineKeys): the same entity (else the later version could land
 * first and the earlier line read as stale), an entity it refers to (else it
 * could wait for an event an earlier line creates), and a user's deletion
 * with everything around it (it cascades to the user's events, which lines
 * naming only the event cannot see). So every line meets the table as the
 * file's order leaves it for that line: the same results, counts and end
 * state at any concurrency; only the writes may differ, by the conditional
 * writes concurrent appliers refuse each other.
 */
import { changeSubject, parseChangeLine, type Change } from '../lambdas/core/changes.js';
import type { ApplyResult, ChangeApplier } from '../lambdas/store/changes/applier.js';
import { WAITING_RECEIVES, throttleVisibility } from '../lambdas/core/retry-backoff.js';
import { isThrottle } from '../lambdas/store/table/throttling.js';

export interface ChangeFileReport {
  applied: number;
  stale: number;
  waiting: number;
  invalid: number;
  /** One line per problem: `line 7: event.start_date: invalid date-time`, `line 9: waiting for user usr_x`. */
  problems: string[];
  /** One line per stale change (not an error, but named so a reader can find it): `line 6: stale, event evt_x already at version 4`. */
  staleLines: string[];
  writes: number;
  /** Deliveries of a line again after it failed on a throttle (a partition past its limit after the SDK's retries). */
  throttledRetries: number;
}

/** How a line that failed on a throttle waits before it is applied again: the ingest's backoff, a sleep injectable for tests. */
export interface ThrottleRetry {
  sleep: (ms: number) => Promise<void>;
  random?: () => number;
  /** Deliveries of one line at most (the ingest queue's maxReceiveCount); past them its error is the file's. */
  attempts?: number;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * What a line writes (its entity) and reads (the entities it refers to),
 * and whether it is a barrier: every earlier line finishes before it, every
 * later one starts after it.
 */
export function lineKeys(change: Change): { writes: string[]; reads: string[]; barrier: boolean } {
  switch (change.type) {
    case 'user.upserted':
      return { writes: [`user ${change.user.id}`], reads: [], barrier: false };
    case 'user.deleted':
      return { writes: [`user ${change.user_id}`], reads: [], barrier: true };
    case 'event.upserted':
      return { writes: [`event ${change.event.id}`], reads: [`user ${change.event.creator_id}`], barrier: false };
    case 'event.deleted':
      return { writes: [`event ${change.event_id}`], reads: [], barrier: false };
    case 'rsvp.upserted': {
      const { event_id: eventId, user_id: userId } = change.rsvp;
      // An anonymous guest's RSVP stores nothing and reads nothing.
      if (userId == null) return { writes: [], reads: [], barrier: false };
      return { writes: [`rsvp ${eventId}/${userId}`], reads: [`event ${eventId}`, `user ${userId}`], barrier: false };
    }
    case 'rsvp.deleted':
      return { writes: [`rsvp ${change.event_id}/${change.user_id}`], reads: [`event ${change.event_id}`, `user ${change.user_id}`], barrier: false };
  }
}

/** A limit on how many of the tasks run at once. */
function slots(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let free = n;
  const queue: (() => void)[] = [];
  return async (task) => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => queue.push(resolve));
    try {
      return await task();
    } finally {
      const next = queue.shift();
      if (next) next();
      else free++;
    }
  };
}

/**
 * `applier`: a fresh applier for each line (an applier counts one change's
 * writes at a time). `concurrency`: lines applied at once (file comment).
 */
export async function applyChangeFile(applier: () => Pick<ChangeApplier, 'apply'>, text: string, concurrency = 1, throttle: ThrottleRetry = { sleep: realSleep }): Promise<ChangeFileReport> {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a whole number of at least 1, not ${concurrency}`);
  const report: ChangeFileReport = { applied: 0, stale: 0, waiting: 0, invalid: 0, problems: [], staleLines: [], writes: 0, throttledRetries: 0 };
  // A line refused on a throttle is applied again after the ingest's backoff, as SQS would deliver it again; the lines
  // that depend on it wait for it (below), so file order holds. Its slot is given back while it waits.
  const attempts = throttle.attempts ?? WAITING_RECEIVES;
  const applyWithBackoff = async (change: Change): Promise<ApplyResult> => {
    for (let n = 1; ; n++) {
      try {
        const outcome = await run(() => applier().apply(change));
        // Its own refused attempt may have landed its source before the throttle: "stale at its own version" is this
        // line applied, finished by this attempt (lines touching the same entity never run at once).
        if (n > 1 && outcome.result === 'stale' && outcome.storedVersion === change.version) return { result: 'applied', writes: outcome.writes, derivations: outcome.derivations };
        return outcome;
      } catch (error) {
        if (!isThrottle(error) || n >= attempts) throw error;
        report.throttledRetries++;
        await throttle.sleep(throttleVisibility(n, throttle.random) * 1000);
      }
    }
  };
  const lines = text.split(/\r?\n/);
  const problems: [number, string][] = [];
  const staleLines: [number, string][] = [];
  const run = slots(concurrency);
  // Per key, as a read-write lock in file order: a line that reads it waits for its last writer, one that writes it for
  // that writer and every reader since.
  const writer = new Map<string, Promise<unknown>>();
  const readers = new Map<string, Promise<unknown>[]>();
  let barrier: Promise<unknown> = Promise.resolve();
  let since: Promise<unknown>[] = [];
  const work: Promise<unknown>[] = [];
  for (const [index, line] of lines.entries()) {
    const parsed = parseChangeLine(line);
    if (parsed === null) continue;
    const n = index + 1;
    if (!parsed.ok) {
      report.invalid++;
      problems.push(...parsed.problems.map((p): [number, string] => [n, `line ${n}: ${p}`]));
      continue;
    }
    const { change } = parsed;
    const { writes, reads, barrier: isBarrier } = lineKeys(change);
    const after = isBarrier ? [barrier, ...since] : [barrier, ...reads.map((k) => writer.get(k)), ...writes.flatMap((k) => [writer.get(k), ...(readers.get(k) ?? [])])];
    const done: Promise<ApplyResult> = Promise.all(after).then(() => applyWithBackoff(change));
    // Its failure is the file's (thrown below); the lines that wait for it only need it finished.
    const finished = done.then(
      () => undefined,
      () => undefined,
    );
    if (isBarrier) {
      barrier = finished;
      since = [];
      writer.clear();
      readers.clear();
    } else {
      since.push(finished);
      for (const k of writes) {
        writer.set(k, finished);
        readers.set(k, []);
      }
      for (const k of reads) {
        const list = readers.get(k) ?? [];
        list.push(finished);
        readers.set(k, list);
      }
    }
    work.push(
      done.then((outcome) => {
        report.writes += outcome.writes;
        report[outcome.result]++;
        if (outcome.result === 'waiting') problems.push([n, `line ${n}: not applied, waiting for ${outcome.missing} (unknown or deleted)`]);
        if (outcome.result === 'stale') {
          const entity = `${change.type.split('.')[0]} ${changeSubject(change)}`;
          staleLines.push([n, `line ${n}: stale, version ${change.version} is not newer than ${outcome.storedVersion} (${entity}); nothing changed`]);
        }
      }),
    );
  }
  const settled = await Promise.allSettled(work);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  const byLine = (a: [number, string], b: [number, string]) => a[0] - b[0];
  report.problems = problems.sort(byLine).map(([, p]) => p);
  report.staleLines = staleLines.sort(byLine).map(([, p]) => p);
  return report;
}

/** Exit status of data:apply: 0 when every line was applied or stale (PRODUCT P14). */
export const exitStatus = (r: ChangeFileReport): 0 | 1 => (r.waiting === 0 && r.invalid === 0 ? 0 : 1);

export function formatReport(r: ChangeFileReport): string {
  const lines = [`applied: ${r.applied}`, `stale: ${r.stale}`, `waiting: ${r.waiting}`, `invalid: ${r.invalid}`];
  // Said only when it happened: a throttle outlasted the SDK's retries and lines were applied again after a backoff.
  if (r.throttledRetries) lines.push(`throttled, applied again after a backoff: ${r.throttledRetries}`);
  return lines.join('\n');
}

/** The summary's first line: what was applied, said as it is (nothing, when nothing was). */
export function headline(r: ChangeFileReport, file: string, table: string): string {
  const total = r.applied + r.stale + r.waiting + r.invalid;
  if (total === 0) return `No change records in ${file}: nothing to apply to ${table}`;
  const changes = total === 1 ? 'change record' : 'change records';
  if (r.applied === 0) return `Applied none of the ${total} ${changes} in ${file} to ${table}`;
  return `Applied ${r.applied} of the ${total} ${changes} in ${file} to ${table}`;
}
