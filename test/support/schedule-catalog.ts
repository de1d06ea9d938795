/**
 * The catalog of the exhaustive schedule exploration (schedules-*.exhaustive.test.ts)
 * and the shapes of schedule it enumerates; test/support/schedules.ts runs
 * and checks each one.
 *
 * Shapes, for every order of a scenario's changes:
 * - the order as is;
 * - crash points: each delivery dies right after each of its writes (a crash
 *   after a read leaves the state of the write before it), then is redelivered
 *   at once, or after the deliveries that follow it (a newer or an older
 *   change, as the versions make it);
 * - failed writes: each write of a delivery fails without landing (a throttle
 *   the SDK's retries did not outlast), the error going up as the code lets
 *   it, then the redelivery (at once; deep: also after the others);
 * - time limits: a user's fan-out stops between chunks, then is redelivered
 *   (as the ingest's continuation is) at once or after the others;
 * - interleaving points: the first delivery pauses before each of its calls
 *   while the others run whole, then goes on;
 * - lost responses: a delivery's write lands, its response is lost, and the
 *   client's retry strategy (the change path's) retries it;
 * - duplicates at once: a change delivered twice at the same time (an SQS
 *   duplicate, an old record replayed), one copy paused while the other
 *   runs whole or dies, then that copy's redelivery, then the others.
 *
 * Depth (SCHEDULES_DEPTH):
 * - `default` (npm test): for the named pairs, every order, the first delivery of each
 *   order crashing after each of its writes (so each change crashes, before
 *   and after the other) with both redeliveries, time limits likewise, and
 *   every interleaving point; for triples, the quick shapes below and every
 *   interleaving point of every order (the two others in that order). New
 *   shapes on a bounded but exhaustive subset: the first delivery of each
 *   order loses the response of each of its conditional writes (a lost
 *   unconditional write is retried and lands again: the same table); each
 *   change delivered twice at once, the first copy paused right after each
 *   derivation number it takes (the hand-off point: the read that follows
 *   decides whether a newer number is trusted), the other copy running whole
 *   or dying right after each number it takes, then redelivered;
 * - `deep` (about 24 minutes on 2 cores; docs/tests.md): also the
 *   catalog's further pairs, and every single fault at every point in every
 *   order, triples included: every delivery crashing after each of its
 *   writes (both redeliveries), every failed write, every time limit, a lost response at every
 *   write of every delivery, every interleaving point with the others in
 *   every order; duplicates paused before every call, the other copy dying
 *   after each number it takes (after every write, also with the others
 *   running during the pause, where the paused copy waits at a hand-off
 *   point); and for pairs, the new fault combined with the interleavings: a
 *   lost response at every write of the paused delivery after it resumes and
 *   of the one that runs during the pause;
 * - `exhaustive` (hours): also the other two-fault products: a crash after
 *   every interleaving point (of the paused delivery after it resumes, of
 *   the ones during the pause), the triples' products, and every duplicate
 *   pause point with the other copy dying after every write.
 *   At `deep` and `exhaustive` not every schedule runs: one that is, call for
 *   call, one that runs is counted as equivalent (a lost response of a write
 *   that lands twice as once; a crash before the pause point; a pause point
 *   whose calls up to the next one commute with what the others wrote during
 *   the pause: `PausePoints`), and a crash or lost-response schedule replays
 *   the calls it shares with the run it varies (schedules.ts,
 *   `RunOptions.from`);
 * - `quick` (the second store's share): every order; crash points of the
 *   source order with the redelivery at once; interleaving points of pairs.
 */
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { Explorer, beforeWrite, commute, permutations, throughWrite, type Calls, type Footprint, type RecordedCall, type Scenario, type Step } from './schedules.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { startInProcessDynalite } from './in-process-dynalite.js';
import { directClient } from './direct-dynalite.js';
import { STORE, TRANSPORT, directOverHttp, startLoopbackStore } from './store.js';

/** The depth the environment asks for (see the comment above); `default` when unset or unknown. */
/** The kinds of partition a throttle window covers, one at a time: an event's (its guest shards too), a user's, a feed's, a tally's. */
const THROTTLED_KINDS = ['EVENT#', 'USER#', 'FEED#', 'TALLY#'] as const;
export const DEPTH = (['quick', 'default', 'deep', 'exhaustive'] as const).find((d) => d === process.env.SCHEDULES_DEPTH) ?? 'default';
/** `deep` and `exhaustive` (which adds the two-fault products to deep). */
const deepish = (depth: string) => depth === 'deep' || depth === 'exhaustive';

const user = (id: string, username: string) => ({ id, username, name: `Name of ${username}`, email: `${username}@example.com` });
const alice = user('usr_a', 'alice');
const bob = user('usr_b', 'bob');
const carol = user('usr_c', 'carol');
const event = (id: string, creator: string, start: string): SourceEvent => ({
  id,
  creator_id: creator,
  title: `Event ${id}`,
  start_date: start,
  timezone: 'UTC',
  status: 'published',
  visibility: 'public',
  created_at: '2026-11-01T00:00:00.000Z',
});
/**
 * Starts half an hour before a new year, so a small move crosses a day, a
 * month and a year. In a city (a country alone would do as well: one place
 * feed, PRODUCT P17), so that every race of its changes covers the feed of
 * its place; its moves and re-creation go to another city or another
 * spelling of this one.
 */
const gig: SourceEvent = { ...event('evt_g', 'usr_a', '2026-12-31T23:30:00.000Z'), location: { name: 'Club', city: 'Lisbon', country: null } };
/** Elsewhere: Porto, spelled as a data source might. */
const inPorto = { location: { name: 'Casa', city: ' PORTO ', country: null } };
const talk = event('evt_t', 'usr_a', '2027-02-01T18:00:00.000Z');
const fest = event('evt_f', 'usr_b', '2027-03-01T18:00:00.000Z');
const rsvp = (eventId: string, userId: string, status: 'yes' | 'maybe' | 'no') => ({ event_id: eventId, user_id: userId, status, rsvp_date: '2026-11-02T00:00:00.000Z' });

/** The smallest world most races need: Alice hosts the gig, Carol goes. Each extra list member costs every schedule a tally move. */
const d0: Dataset = { users: [alice, bob, carol], events: [gig], rsvps: [rsvp('evt_g', 'usr_c', 'yes')] };
/** Alice also hosts the talk: her fan-out has two chunks, so a time limit can stop it between them. */
const aliceHostsTwo: Dataset = { ...d0, events: [gig, talk] };
/** Bob hosts the fest and may go to the talk: his own fan-out has two chunks. */
const bobHasTwo: Dataset = { users: [alice, bob, carol], events: [gig, talk, fest], rsvps: [rsvp('evt_g', 'usr_c', 'yes'), rsvp('evt_t', 'usr_b', 'maybe')] };

const c = {
  moveGigToBob: { type: 'event.upserted', version: 1, event: { ...gig, creator_id: 'usr_b' } },
  deleteAlice: { type: 'user.deleted', version: 1, user_id: 'usr_a' },
  deleteGig: { type: 'event.deleted', version: 1, event_id: 'evt_g' },
  recreateGig: { type: 'event.upserted', version: 2, event: { ...gig, title: 'Gig again', location: { name: 'Club', city: 'lisbon ', country: null } } },
  hideGig: { type: 'event.upserted', version: 1, event: { ...gig, visibility: 'private' } },
  unhideGig: { type: 'event.upserted', version: 2, event: gig },
  bobGoesToGig: { type: 'rsvp.upserted', version: 1, rsvp: rsvp('evt_g', 'usr_b', 'yes') },
  carolLeavesGig: { type: 'rsvp.deleted', version: 1, event_id: 'evt_g', user_id: 'usr_c' },
  renameBob: { type: 'user.upserted', version: 1, user: { ...bob, username: 'bobby' } },
  deleteBob: { type: 'user.deleted', version: 1, user_id: 'usr_b' },
  editAlice: { type: 'user.upserted', version: 1, user: { ...alice, name: 'Alice A.' } },
  deleteAliceLater: { type: 'user.deleted', version: 2, user_id: 'usr_a' },
  gigIntoNextYear: { type: 'event.upserted', version: 1, event: { ...gig, ...inPorto, start_date: '2027-01-01T00:30:00.000Z' } },
  hideGigAfterMove: { type: 'event.upserted', version: 2, event: { ...gig, ...inPorto, start_date: '2027-01-01T00:30:00.000Z', visibility: 'private' } },
  carolRenamedToAlice: { type: 'user.upserted', version: 1, user: { ...carol, username: 'alice' } },
} satisfies Record<string, Change>;

/**
 * The races the issue names, every depth runs them; split in two files by the
 * kind of change that races (a user's, an event's) so the two run on both of
 * CI's cores.
 */
const namedUserPairs: Scenario[] = [
  { name: 'creator deletion vs event move', d0, changes: [c.moveGigToBob, c.deleteAlice] },
  { name: 'rename vs RSVP', d0, changes: [c.renameBob, c.bobGoesToGig] },
  { name: 'deletion vs late older upsert', d0: aliceHostsTwo, changes: [c.editAlice, c.deleteAliceLater] },
];
const namedEventPairs: Scenario[] = [
  { name: 'delete vs newer re-create', d0, changes: [c.deleteGig, c.recreateGig] },
  { name: 'hide vs RSVP', d0, changes: [c.hideGig, c.bobGoesToGig] },
  // The move also changes the gig's city (Lisbon to Porto): it leaves one place feed and enters another.
  { name: 'move across a year boundary vs hide', d0, changes: [c.gigIntoNextYear, c.hideGigAfterMove] },
];
/** More races of the catalog, run at depth deep (they passed at default depth when added). */
const moreUserPairs: Scenario[] = [{ name: 'guest deletion vs RSVP', d0: bobHasTwo, changes: [c.deleteBob, c.bobGoesToGig] }];
const moreEventPairs: Scenario[] = [
  { name: 'event deletion vs RSVP', d0, changes: [c.deleteGig, c.bobGoesToGig] },
  { name: 'RSVP removal vs hide', d0, changes: [c.carolLeavesGig, c.hideGig] },
];
/** Every scenario of the catalog, whatever the depth. */
export const allScenarios = (): Scenario[] => [...namedUserPairs, ...moreUserPairs, ...namedEventPairs, ...moreEventPairs, ...triples];
/** A scenario of the catalog by name, whatever the depth (the fixed schedules of test/integration/deep-found.test.ts). */
export function catalogScenario(name: string): Scenario {
  const found = allScenarios().find((s) => s.name === name);
  if (!found) throw new Error(`no scenario ${name} in the catalog`);
  return found;
}
/** Pairs where a user's change races. */
export const userPairs: Scenario[] = deepish(DEPTH) ? [...namedUserPairs, ...moreUserPairs] : namedUserPairs;
/** Pairs of an event's changes, or an event's and an RSVP's. */
export const eventPairs: Scenario[] = deepish(DEPTH) ? [...namedEventPairs, ...moreEventPairs] : namedEventPairs;
export const triples: Scenario[] = [
  { name: 'hide, RSVP, unhide', d0, changes: [c.hideGig, c.bobGoesToGig, c.unhideGig] },
  { name: 'move, creator deletion, RSVP of the new host', d0, changes: [c.moveGigToBob, c.deleteAlice, c.bobGoesToGig] },
  { name: 'delete, RSVP, re-create', d0, changes: [c.deleteGig, c.bobGoesToGig, c.recreateGig] },
  { name: 'creator deletion, name reuse, RSVP', d0, changes: [c.deleteAlice, c.carolRenamedToAlice, c.bobGoesToGig] },
];

/**
 * The files that explore the catalog, by the scenarios each takes: shares of
 * about equal time at depth deep, so that jest's two workers end together
 * (docs/tests.md: per file, 9 to 12 minutes for the pairs, 3 to 4½ for the
 * triples, on this 2-core machine at 8c85b28), and at the default depth, where the
 * pairs' shares are a minute or so each. A scenario named in no file, or in
 * two, fails every file at import: none may be left out.
 */
const FILES = {
  'pairs (users)': { scenarios: userPairs, names: ['creator deletion vs event move', 'rename vs RSVP', 'guest deletion vs RSVP'] },
  'pairs (late upsert)': { scenarios: userPairs, names: ['deletion vs late older upsert'] },
  'pairs (events)': { scenarios: eventPairs, names: ['delete vs newer re-create', 'hide vs RSVP', 'event deletion vs RSVP', 'RSVP removal vs hide'] },
  'pairs (move)': { scenarios: eventPairs, names: ['move across a year boundary vs hide'] },
  'triples (moves)': { scenarios: triples, names: ['hide, RSVP, unhide', 'move, creator deletion, RSVP of the new host'] },
  'triples (deletions)': { scenarios: triples, names: ['delete, RSVP, re-create', 'creator deletion, name reuse, RSVP'] },
} as const;
export type CatalogFile = keyof typeof FILES;
{
  const taken = Object.values(FILES).flatMap((f) => f.names as readonly string[]);
  const all = [...namedUserPairs, ...moreUserPairs, ...namedEventPairs, ...moreEventPairs, ...triples].map((s) => s.name);
  const wrong = [...all.filter((n) => taken.filter((t) => t === n).length !== 1), ...taken.filter((t) => !all.includes(t))];
  if (wrong.length) throw new Error(`schedule-catalog: each scenario must be in exactly one file; not so for ${wrong.join(', ')}`);
}
/** The scenarios of one file, at this depth. */
export function scenariosOf(file: CatalogFile): Scenario[] {
  const names: readonly string[] = FILES[file].names;
  return FILES[file].scenarios.filter((s) => names.includes(s.name));
}

/** Deliveries that work in chunks (a user's events; an event's RSVPs and guests when it is deleted, hidden or moved): the ones a time limit can stop. */
const fansOut = (s: Scenario, i: number) => s.changes[i]!.type.startsWith('user.') || s.changes[i]!.type.startsWith('event.');

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
const writesOf = (run: Map<Step, { writes: number }>, step: Step) => run.get(step)?.writes ?? 0;

/**
 * Every write whose lost response can change the schedule: a write that lands twice as it lands once
 * (Calls.repeatable) gives the schedule without the loss, which runs anyway.
 */
const losable = (shape: string, calls: Calls | undefined) => {
  if (!calls) return [];
  const same = new Set(calls.repeatable);
  equivalent(shape, same.size);
  return range(1, calls.writes + 1).filter((k) => !same.has(k));
};

/** Schedules run per shape, over one file's scenarios (printed with its count). */
export const shapeCounts = new Map<string, number>();
/** Schedules of a shape not run because each is, call for call, one that runs (printed beside the counts). */
export const equivalentCounts = new Map<string, number>();
const equivalent = (shape: string, n: number) => void equivalentCounts.set(shape, (equivalentCounts.get(shape) ?? 0) + n);
const counted = async <T>(explorer: Explorer, shape: string, work: () => Promise<T>): Promise<T> => {
  const before = explorer.runs;
  try {
    return await work();
  } finally {
    shapeCounts.set(shape, (shapeCounts.get(shape) ?? 0) + explorer.runs - before);
  }
};

/**
 * The same change delivered twice at once, while the others wait: copy one
 * pauses before call p, copy two runs whole (the probe) or dies right after
 * its write k and is redelivered, copy one goes on, then the others run.
 * Default: p right after each number copy one takes, k right after each
 * number copy two takes; deep: every p, and every k where p is such a
 * hand-off point (with the others also during the pause), k right after
 * each number elsewhere; exhaustive: every p and every k.
 */
async function duplicates(explorer: Explorer, s: Scenario, depth: string, first: number, others: number[], alone: Calls, groups: RecordedCall[][]): Promise<void> {
  const takes = alone.takes.map((t) => t.call);
  const pauses = deepish(depth) ? range(1, alone.calls).reverse() : takes;
  const later = others.map((change) => ({ change }));
  const equivalentPauses = new PausePoints(explorer, 'duplicates at once');
  for (const pauseAfter of pauses) {
    const paused = { change: first, pauseAfter };
    const copy = { change: first };
    const probe = await explorer.run(s, { paused, during: [copy], after: later }, { record: true });
    const recording = explorer.recording!;
    // Deep: the dying copy dies after every write when the paused one waits at a hand-off point, after each number it
    // takes elsewhere; exhaustive: after every write at every pause point.
    const everyWrite = depth === 'exhaustive' || (depth === 'deep' && takes.includes(pauseAfter));
    const dying = everyWrite ? range(1, writesOf(probe, copy)) : (probe.get(copy)?.takes ?? []).map((t) => t.write);
    const at = equivalentPauses.at(deepish(depth) ? groups[pauseAfter] : undefined);
    for (const k of dying) {
      const from = { recording, upTo: throughWrite(recording, 'd0', k) };
      await at(`dies ${k}`, s, { paused, during: [{ change: first, crashAfter: k }], after: [{ change: first }, ...later] }, { from });
      if (everyWrite && deepish(depth) && later.length) await at(`dies ${k}, others during`, s, { paused, during: [{ change: first, crashAfter: k }, ...later], after: [{ change: first }] }, { from });
    }
  }
}

/**
 * The calls a delivery makes between pause points i and i + 1 (`groups[i]`), from its recorded run alone: a pause
 * point is before the first call made once i calls have been answered (a refused call is not counted).
 */
function callGroups(calls: readonly RecordedCall[]): RecordedCall[][] {
  const groups: RecordedCall[][] = [[]];
  for (const c of calls) {
    groups[groups.length - 1]!.push(c);
    if (!c.refused) groups.push([]);
  }
  return groups;
}

/**
 * Partial-order reduction over pause points, walked from the last to the first: a schedule that pauses a delivery
 * before call i + 1 is the one pausing it after that call when the calls in between commute with what the others
 * wrote during the pause (schedules.ts, `commute`): both read the same table before and after the others run, so
 * every call gets the same answer, every observation sees the same table and the end is the same. The variant of a
 * schedule (a crash or a lost response at a given write) keeps what its others wrote in its last run.
 */
class PausePoints {
  private readonly footprints = new Map<string, Footprint>();
  constructor(
    private readonly explorer: Explorer,
    private readonly shape: string,
  ) {}

  /** Runs variants at one pause point; `between`: the calls from it to the next one (undefined: no reduction). */
  at(between: readonly RecordedCall[] | undefined) {
    return async (variant: string | undefined, s: Scenario, schedule: Parameters<Explorer['run']>[1], opts: Parameters<Explorer['run']>[2]) => {
      const known = variant === undefined ? undefined : this.footprints.get(variant);
      if (between && known && commute(between, known)) return void equivalent(this.shape, 1);
      await this.explorer.run(s, schedule, opts);
      if (variant !== undefined) this.footprints.set(variant, this.explorer.footprint!);
    };
  }
}

/** Runs every schedule of the shapes the depth asks for; answers how many. */
export async function explore(explorer: Explorer, s: Scenario): Promise<number> {
  const before = explorer.runs;
  const pair = s.changes.length === 2;
  // Triples run the quick shapes (and every interleaving point) by default: the pairs hold every shape, and the triples' full set is deep's.
  const depth = !pair && DEPTH === 'default' ? 'quick' : DEPTH;
  for (const order of permutations(s.changes.map((_, i) => i))) {
    const steps = order.map((change) => ({ change }));
    const all = s.changes.map((_, i) => i);
    const whole = await counted(explorer, 'orders', () => explorer.run(s, { during: steps, after: [] }, { record: true }));
    const wholeRecording = explorer.recording!;
    const groups = callGroups(wholeRecording.calls.filter((c) => c.slot === 'd0'));
    const [first, ...others] = order as [number, ...number[]];
    const sourceOrderOfOthers = others.join() === [...others].sort().join();
    // New shapes (lost responses, duplicates at once): pairs from depth default, triples at deep.
    if (pair ? depth !== 'quick' : deepish(depth)) {
      const firstCalls = whole.get(steps[0]!)!;
      await counted(explorer, 'lost responses', async () => {
        for (const [j, step] of steps.entries()) {
          if (j > 0 && !deepish(depth)) break;
          const lose = deepish(depth) ? losable('lost responses', whole.get(step)) : firstCalls.conditional;
          for (const k of lose) {
            await explorer.run(s, { during: [...steps.slice(0, j), { change: step.change, loseAfter: k }, ...steps.slice(j + 1)], after: [] }, { from: { recording: wholeRecording, upTo: beforeWrite(wholeRecording, `d${j}`, k) } });
          }
        }
      });
      // Once per change: the others after it in source order.
      if (sourceOrderOfOthers) await counted(explorer, 'duplicates at once', () => duplicates(explorer, s, depth, first, others, firstCalls, groups));
    }
    // Each delivery dies right after each of its writes; redelivered at once, or after the deliveries that follow it.
    // Pairs crash the first delivery of each order (so each change, in both orders); deep crashes every delivery; triples only deep.
    if (deepish(depth) || (pair && depth === 'default') || (depth === 'quick' && order.join() === all.join())) {
      await counted(explorer, 'crashes and time limits', async () => {
        for (const [j, step] of steps.entries()) {
          if (j > 0 && !deepish(depth)) break;
          const rest = steps.slice(j + 1);
          for (const k of range(1, writesOf(whole, step))) {
            const crashed = { change: step.change, crashAfter: k };
            const from = { recording: wholeRecording, upTo: throughWrite(wholeRecording, `d${j}`, k) };
            await explorer.run(s, { during: [...steps.slice(0, j), crashed], after: [{ change: step.change }, ...rest] }, { from });
            if (rest.length && depth !== 'quick') await explorer.run(s, { during: [...steps.slice(0, j), crashed], after: [...rest, { change: step.change }] }, { from });
          }
          // The same deaths with each wave's calls landing last sent first (call-queue.ts): a crash then leaves a
          // suffix of a wave landed, not a prefix, so nothing may rely on a call of its own wave having landed
          // before it. Redelivered at once (deep: also after the others). No recorded prefix: the order differs.
          if (depth !== 'quick') {
            for (const k of range(1, writesOf(whole, step))) {
              const crashed = { change: step.change, crashAfter: k, lifo: true };
              await explorer.run(s, { during: [...steps.slice(0, j), crashed], after: [{ change: step.change }, ...rest] });
              if (rest.length && deepish(depth)) await explorer.run(s, { during: [...steps.slice(0, j), crashed], after: [...rest, { change: step.change }] });
            }
          }
          if (fansOut(s, step.change) && depth !== 'quick') {
            const stopped = { change: step.change, timeLimit: true };
            await explorer.run(s, { during: [...steps.slice(0, j), stopped], after: [{ change: step.change }, ...rest] });
            if (rest.length) await explorer.run(s, { during: [...steps.slice(0, j), stopped], after: [...rest, { change: step.change }] });
          }
        }
      });
      // The same points, the write failing instead of landing (a crash leaves the state of the write before it;
      // a failure also runs what the code does with the error), then the redelivery.
      await counted(explorer, 'failed writes', async () => {
        for (const [j, step] of steps.entries()) {
          if (j > 0 && !deepish(depth)) break;
          const rest = steps.slice(j + 1);
          for (const k of range(1, writesOf(whole, step) + 1)) {
            const failed = { change: step.change, failAt: k };
            const from = { recording: wholeRecording, upTo: beforeWrite(wholeRecording, `d${j}`, k) };
            await explorer.run(s, { during: [...steps.slice(0, j), failed], after: [{ change: step.change }, ...rest] }, { from });
            if (rest.length && deepish(depth)) await explorer.run(s, { during: [...steps.slice(0, j), failed], after: [...rest, { change: step.change }] }, { from });
          }
        }
      });
    }
    // A fault that lasts: the order's first delivery meets each kind of partition throttled (every call to it failing)
    // and is delivered again while the window lasts, while the others run; then the window ends and it is delivered
    // once more. One order at the default depth (the throttled kinds decide the schedule, not the order), every order deep.
    if (deepish(depth) || (depth === 'default' && order.join() === all.join())) {
      await counted(explorer, 'throttle windows', async () => {
        for (const kind of THROTTLED_KINDS) {
          const throttled = { change: first, throttled: kind };
          await explorer.run(s, { during: [throttled, ...others.map((change) => ({ change })), throttled], after: [{ change: first }] });
        }
      });
    }
    // The first of the order pauses before each of its calls while the others run whole, then goes on: every
    // write it makes after that is an observation point; deep: it may also die after any of them (then redelivered),
    // and the others may die during the pause (then redelivered).
    // Triples at the default depth: every order's first delivery pauses before each of its calls while the two
    // others run in that order (a deep exploration found the first schedule that broke this way: the others out of
    // source order); the second store's quick share runs none.
    if (!pair && DEPTH === 'quick') continue;
    const interleaved = new PausePoints(explorer, 'interleavings with crashes or lost responses');
    for (const i of range(1, whole.get(steps[0]!)?.calls ?? 0).reverse()) {
      const paused = { change: first, pauseAfter: i };
      const during = others.map((change) => ({ change }));
      // Deep: a lost response after every interleaving point, of pairs (the new fault with the existing shape);
      // exhaustive: crashes too, and of triples.
      const products = depth === 'exhaustive' || (depth === 'deep' && pair);
      const run = await counted(explorer, 'interleavings', () => explorer.run(s, { paused, during, after: [] }, { record: products }));
      if (!products) continue;
      const recording = explorer.recording!;
      const through = (slot: string, k: number) => ({ from: { recording, upTo: throughWrite(recording, slot, k) } });
      const before = (slot: string, k: number) => ({ from: { recording, upTo: beforeWrite(recording, slot, k) } });
      const at = interleaved.at(groups[i]);
      await counted(explorer, 'interleavings with crashes or lost responses', async () => {
        // A crash at or before the last write before the pause point kills the delivery before it pauses: that is
        // the crash shape's schedule (crash, the others, the redelivery), run once above, not once per pause point.
        const beforePause = whole.get(steps[0]!)!.writesBefore[i]!;
        if (depth === 'exhaustive') equivalent('interleavings with crashes or lost responses', beforePause);
        for (const k of depth === 'exhaustive' ? range(beforePause + 1, writesOf(run, paused)) : []) {
          await at(`paused dies ${k}`, s, { paused: { ...paused, crashAfter: k }, during, after: [{ change: first }] }, through('p', k));
        }
        for (const [j, step] of during.entries()) {
          for (const k of depth === 'exhaustive' ? range(1, writesOf(run, step)) : []) {
            await at(`${j} dies ${k}`, s, { paused, during: [...during.slice(0, j), { change: step.change, crashAfter: k }, ...during.slice(j + 1)], after: [{ change: step.change }] }, through(`d${j}`, k));
          }
        }
        // A lost response of the paused delivery after it resumes, and of each delivery during the pause. (Lost
        // before the pause point, the paused delivery's own calls differ from its recorded ones: no reduction.)
        for (const k of losable('interleavings with crashes or lost responses', run.get(paused))) {
          await at(k > beforePause ? `paused loses ${k}` : undefined, s, { paused: { ...paused, loseAfter: k }, during, after: [] }, before('p', k));
        }
        for (const [j, step] of during.entries()) {
          for (const k of losable('interleavings with crashes or lost responses', run.get(step))) {
            await at(`${j} loses ${k}`, s, { paused, during: [...during.slice(0, j), { change: step.change, loseAfter: k }, ...during.slice(j + 1)], after: [] }, before(`d${j}`, k));
          }
        }
      });
    }
  }
  return explorer.runs - before;
}

/** The exploration of `scenarios` as a jest suite: one test per scenario, the count printed at the end. */
export function exploreSuite(title: string, label: CatalogFile, opts: { feeds?: boolean } = {}): void {
  const scenarios = scenariosOf(label);
  let explorer: Explorer;
  let store: { client: DynamoDBDocumentClient; close(): Promise<void> };
  const counts: string[] = [];
  beforeAll(async () => {
    const clock = fixedClock('2026-11-21T12:00:00.000Z');
    if (STORE === 'dynalite') {
      // dynalite called in-process: the same store code without the loopback round trips (a third less CPU a schedule).
      const inProcess = await startInProcessDynalite();
      const client = TRANSPORT === 'direct' ? directClient(inProcess.call) : createDocumentClient(inProcess);
      store = { client, close: async () => (client.destroy(), inProcess.close()) };
      explorer = new Explorer(inProcess, client, clock, opts.feeds ?? true, TRANSPORT);
    } else if (TRANSPORT === 'direct') {
      // DynamoDB Local over HTTP, the SDK's steps left out as on dynalite (test/support/http-store-call.ts).
      const loopback = await startLoopbackStore();
      const direct = directOverHttp(loopback.endpoint);
      const client = direct.newClient();
      store = { client, close: async () => (direct.close(), loopback.close()) };
      explorer = new Explorer({ endpoint: loopback.endpoint, call: direct.call }, client, clock, opts.feeds ?? true, TRANSPORT);
    } else {
      const loopback = await startLoopbackStore();
      store = loopback;
      explorer = new Explorer(loopback.endpoint, loopback.client, clock, opts.feeds ?? true);
    }
  });
  afterAll(async () => {
    const total = counts.reduce((n, line) => n + Number(line.split(': ')[1]), 0);
    const shapes = [...shapeCounts].map(([shape, n]) => `${shape} ${n}${equivalentCounts.get(shape) ? ` (+${equivalentCounts.get(shape)} equivalent, not run)` : ''}`).join(', ');
    process.stdout.write(`${label}: schedules explored (${DEPTH}${label.startsWith('triples') && DEPTH === 'default' ? ', the quick shapes and every interleaving point' : ''}): ${total}\n  ${counts.join('\n  ')}\n  by shape: ${shapes}\n`);
    explorer?.close();
    await store?.close();
  });
  describe(title, () => {
    for (const s of scenarios) {
      it(s.name, async () => {
        const started = Date.now();
        const n = await explore(explorer, s);
        counts.push(`${s.name}: ${n}`);
        if (process.env.SCHEDULES_PROGRESS) process.stderr.write(`${s.name}: ${n} schedules in ${Date.now() - started} ms\n`);
        expect(n).toBeGreaterThan(0);
      }, DEPTH === 'exhaustive' ? 6 * 3_600_000 : DEPTH === 'deep' ? 3_600_000 : 600_000);
    }
  });
}
