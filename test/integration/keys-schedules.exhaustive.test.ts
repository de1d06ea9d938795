/**
 * Key operations against each other, explored exhaustively
 * (test/support/key-schedules.ts): create, revoke and a user's deletion, in
 * pairs and triples, on the local store (no plan keys) and with API
 * Gateway's plan keys (AWS), and two creates whose clocks straddle 00:00 UTC
 * (each actor reads its own clock), and creates and revokes with two renames
 * around them in every order (a name moving from one user to another
 * mid-operation: keys belong to user ids), a user's deletion whose close goes a key at a
 * call (its steps between calls: the holders again, its saved position), and the close of
 * a deletion retried late around the user's re-creation and a create for the re-created
 * user (it closes only what the deletion owned), each call of each operation crashing, failing
 * without landing, or landing and losing its answer, the operation retried
 * until it gets a definitive answer. The rules are checked after every write
 * and at the end (the file comment there).
 *
 * Depth (SCHEDULES_DEPTH, as for the write side's explorations):
 * - `default` (npm test) and `quick`: every pair, the local triple and the
 *   renames (fault-free: a rename writes no key item), every
 *   interleaving without a fault (every order of conflicting calls); and
 *   every single fault (a crash after each write, a lost answer of each
 *   write, a failure of each call) of each operation, with the others run
 *   whole before it or after it;
 * - `deep`: also each single fault with each other operation run whole
 *   between any two calls of another (one preemption), and the AWS triple's
 *   every interleaving without a fault;
 * - `exhaustive`: each single fault with every interleaving.
 * Each scenario prints its number of schedules.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { hashApiKey, keyIdFromHash } from '../../lambdas/core/api-key.js';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { keys } from '../../lambdas/store/table/table.js';
import { startInProcessDynalite, type InProcessStore } from '../support/in-process-dynalite.js';
import {
  KeyExplorer,
  T0,
  createActor,
  createByNameActor,
  deleteActor,
  exploreAll,
  firstKeyIdOf,
  lateCloseActor,
  renameActor,
  revokeActor,
  type Exploration,
  type Fault,
  type FaultKind,
  type Scenario,
} from '../support/key-schedules.js';

const DEPTH = (['quick', 'default', 'deep', 'exhaustive'] as const).find((d) => d === process.env.SCHEDULES_DEPTH) ?? 'default';
const deepish = DEPTH === 'deep' || DEPTH === 'exhaustive';
/** Per scenario: an exploration is long by design (the deep one, hours for all). */
const TIMEOUT = 4 * 60 * 60 * 1000;

let store: InProcessStore;
let explorer: KeyExplorer;
beforeAll(async () => {
  store = await startInProcessDynalite();
  explorer = new KeyExplorer(store);
});
afterAll(async () => store?.close());

const SEEDED = 'pk_seeded_frank_0123456789abcdefghijklmn';
const seededId = keyIdFromHash(hashApiKey(SEEDED));
const users = [
  { id: 'usr_frank', username: 'frank' },
  { id: 'usr_gus', username: 'gus' },
];
const empty: Dataset = { users, events: [], rsvps: [] };
const withKey: Dataset = { users, events: [], rsvps: [], api_keys: [{ key: SEEDED, user_id: 'usr_frank', name: 'seeded' }] };

const create = (name: string, opts: Parameters<typeof createActor>[2] = {}) => createActor(name, 'usr_frank', opts);
/** A create whose function read its clock just before 00:00 UTC, and one that read it just after (one create a day, so a reset shows). */
const beforeMidnight = (name: string) => create(name, { clockAt: '2026-11-21T23:59:59.900Z', maxCreatesPerDay: 1 });
const afterMidnight = (name: string) => create(name, { clockAt: '2026-11-22T00:00:00.100Z', maxCreatesPerDay: 1 });
const revokeOf = (name: string, keyId: () => string) => revokeActor(name, 'usr_frank', keyId);
const deletion = deleteActor('d', 'usr_frank', 1000);

/** Frank deleted (version 1000) and re-created (1001) before the run: what a late close of the deletion meets. */
const recreated: Dataset = { users, events: [], rsvps: [] };
const recreate: Scenario['prepare'] = async (client, tableName) => {
  const applier = new ChangeApplier(client, tableName, { clock: () => new Date(T0) });
  await applier.apply({ type: 'user.deleted', version: 1000, user_id: 'usr_frank' });
  await applier.apply({ type: 'user.upserted', version: 1001, user: { id: 'usr_frank', username: 'frank' } });
};
const closingKeyAtATime = deleteActor('d', 'usr_frank', 1000, { keyAtATime: true });

const pairs: Scenario[] = [
  { name: 'create ‖ revoke of the key it makes (local)', aws: false, dataset: empty, actors: [create('c'), revokeOf('r', () => firstKeyIdOf('c'))] },
  { name: 'create ‖ revoke of the key it makes (AWS)', aws: true, dataset: empty, actors: [create('c'), revokeOf('r', () => firstKeyIdOf('c'))] },
  { name: "create ‖ its user's deletion (local)", aws: false, dataset: empty, actors: [create('c'), deletion] },
  { name: "create ‖ its user's deletion (AWS)", aws: true, dataset: empty, actors: [create('c'), deletion] },
  { name: "revoke ‖ the user's deletion (local)", aws: false, dataset: withKey, actors: [revokeOf('r', () => seededId), deletion] },
  { name: 'revoke ‖ revoke of one key (local)', aws: false, dataset: withKey, actors: [revokeOf('r1', () => seededId), revokeOf('r2', () => seededId)] },
  { name: 'create ‖ create for the last slot (local)', aws: false, dataset: empty, maxActive: 1, actors: [create('c1', { maxActive: 1 }), create('c2', { maxActive: 1 })] },
  { name: 'create that read its clock before 00:00 UTC ‖ create that read it after (local)', aws: false, dataset: empty, actors: [beforeMidnight('c1'), afterMidnight('c2')] },
  { name: 'create ‖ its retry, one idempotency key (AWS)', aws: true, dataset: empty, actors: [create('c1', { idempotencyKey: 'idem-shared-0001' }), create('c2', { idempotencyKey: 'idem-shared-0001' })] },
  // Issue 57: a deletion's close bounded per call (its steps between calls: the holders again, its saved position), and
  // a close that runs late, after its user was re-created, acting only on the keys of the user it deleted.
  { name: "create ‖ its user's deletion, closing a key a call, a seeded key to close too (local)", aws: false, dataset: withKey, actors: [create('c'), closingKeyAtATime] },
  { name: "revoke ‖ the user's deletion, closing a key a call (local)", aws: false, dataset: withKey, actors: [revokeOf('r', () => seededId), closingKeyAtATime] },
  { name: 'a late close of a deletion ‖ a create for the user re-created since (local)', aws: false, dataset: recreated, prepare: recreate, actors: [lateCloseActor('l', 'usr_frank', 1000), create('c')] },
  { name: 'a late close of a deletion ‖ a create for the user re-created since (AWS)', aws: true, dataset: { ...recreated }, prepare: recreate, actors: [lateCloseActor('l', 'usr_frank', 1000), create('c')] },
];

/**
 * Frank deleted before the run (his tombstone settled, nothing of his left to close): the deletion's close retried
 * late, his re-creation, and a create for him once he is back, in every order. The close may pass its check of the
 * user before the re-creation lands and meet the new key's slot or record after it: only the keys made for the user
 * it deleted are its to close.
 */
const deleted: Dataset = { users, events: [], rsvps: [] };
const tombstoneWritten: Scenario['prepare'] = async (client, tableName) =>
  void (await client.send(new PutCommand({ TableName: tableName, Item: { ...keys.user('usr_frank'), type: 'USER', user_id: 'usr_frank', version: 1000, deleted: true } })));

const triples: Scenario[] = [
  { name: "create ‖ revoke of its key ‖ its user's deletion (AWS)", aws: true, dataset: empty, actors: [create('c'), revokeOf('r', () => firstKeyIdOf('c')), deletion] },
  { name: 'create ‖ create for the last slot ‖ revoke of the first (local)', aws: false, dataset: empty, maxActive: 1, actors: [create('c1', { maxActive: 1 }), create('c2', { maxActive: 1 }), revokeOf('r', () => firstKeyIdOf('c1'))] },
  {
    name: "a deletion's close retried late ‖ the user's re-creation ‖ a create for the re-created user (local)",
    aws: false,
    dataset: deleted,
    prepare: tombstoneWritten,
    actors: [lateCloseActor('l', 'usr_frank', 1000), renameActor('u', 'usr_frank', 'frank', 1001), create('c')],
  },
];

/**
 * Two renames in the source's order dave -> dave2, then frank -> dave, arriving in any order (frank's first: two live
 * users are "dave" for a while): issue 45's k3. Around a create and a revoke by user id, and a create by username.
 */
const renaming: Dataset = { users: [...users.slice(0, 1), { id: 'usr_dave', username: 'dave' }], events: [], rsvps: [] };
const renamingWithKey: Dataset = { ...renaming, api_keys: [{ key: SEEDED, user_id: 'usr_frank', name: 'seeded' }] };
const renames = () => [renameActor('n1', 'usr_dave', 'dave2', 2), renameActor('n2', 'usr_frank', 'dave', 2)];
const renamed: Scenario[] = [
  { name: "create for frank's id ‖ dave -> dave2 ‖ frank -> dave (local)", aws: false, dataset: renaming, actors: [create('c'), ...renames()] },
  { name: "revoke of frank's key by his id ‖ dave -> dave2 ‖ frank -> dave (local)", aws: false, dataset: renamingWithKey, actors: [revokeOf('r', () => seededId), ...renames()] },
];
const byName: Scenario = { name: 'create by the username "dave" (the CLI) ‖ dave -> dave2 ‖ frank -> dave (local)', aws: false, dataset: renaming, actors: [createByNameActor('c', 'dave', 'usr_dave'), ...renames()] };
renamed.push(byName);

const KINDS: FaultKind[] = ['crash', 'lost', 'fail'];

/** Every single fault: each kind at each call of each actor (calls counted in the fault-free runs). */
function singleFaults(maxCalls: number[]): Fault[] {
  return maxCalls.flatMap((calls, actor) => Array.from({ length: calls }, (_, k) => KINDS.map((kind) => ({ actor, call: k + 1, kind }))).flat());
}

/** With one fault: the actors one after the other in each order, and (unless only those) each run whole between any two calls of another. */
async function withOnePreemption(s: Scenario, faults: Fault[], serialOnly: boolean): Promise<{ schedules: number; violations: Exploration['violations'] }> {
  let schedules = 0;
  const violations: Exploration['violations'] = [];
  const n = s.actors.length;
  const runOne = async (prefix: number[]) => {
    schedules++;
    const r = await explorer.run(s, prefix, faults);
    if (r.violations.length) violations.push({ schedule: r.steps.map((st) => st.actor).join(''), faults, violations: r.violations });
    return r;
  };
  for (let a = 0; a < n; a++) {
    // `a` first, then the others in turn (the explorer goes on with the actor that ran last, then the lowest).
    const serial = await runOne([a]);
    if (serialOnly) continue;
    const callsOfA = serial.steps.filter((st) => st.actor === a).length;
    for (let b = 0; b < n; b++) {
      if (b === a) continue;
      for (let j = 1; j < callsOfA; j++) await runOne([...Array(j).fill(a), b]);
    }
  }
  return { schedules, violations };
}

const started = Date.now();
function report(name: string, counts: Record<string, number>): void {
  process.stdout.write(`${name}: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')} (${Math.round((Date.now() - started) / 1000)} s into the file)\n`);
}

/** Each single fault in its own schedules (every interleaving when exhaustive, one preemption otherwise): how many, and what broke. */
async function withEachFault(s: Parameters<typeof exploreAll>[1], faults: readonly Parameters<typeof exploreAll>[2][number][]): Promise<{ faulted: number; violations: Exploration['violations'] }> {
  let faulted = 0;
  const violations: Exploration['violations'] = [];
  for (const fault of faults) {
    const r = DEPTH === 'exhaustive' ? await exploreAll(explorer, s, [fault]) : await withOnePreemption(s, [fault], !deepish);
    faulted += r.schedules;
    violations.push(...r.violations);
  }
  return { faulted, violations };
}

describe.each(pairs.map((s) => [s.name, s] as const))('%s', (_, s) => {
  it('keeps every rule in every schedule: every interleaving, every single fault', async () => {
    const clean = await exploreAll(explorer, s, []);
    expect(clean.violations.slice(0, 3)).toEqual([]);
    const counts: Record<string, number> = { 'interleavings without a fault': clean.schedules };
    const faults = singleFaults(clean.maxCalls);
    const { faulted, violations } = await withEachFault(s, faults);
    counts[`schedules with one of ${faults.length} faults`] = faulted;
    report(s.name, counts);
    expect(violations.slice(0, 3)).toEqual([]);
  }, TIMEOUT);
});

// The AWS triple is a deep one only (its interleavings are too many for every run of the suite).
describe.each(triples.filter((s) => deepish || !s.aws).map((s) => [s.name, s] as const))('%s', (_, s) => {
  it('keeps every rule in every interleaving', async () => {
    const clean = await exploreAll(explorer, s, [], 200_000);
    report(s.name, { 'interleavings without a fault': clean.schedules });
    expect(clean.violations.slice(0, 3)).toEqual([]);
  }, TIMEOUT);
});

// A rename writes no key item, so its own faults are the change path's (its explorations); here, every order of it
// around a key operation, and each single fault of the key operation with the renames run whole before or after it.
describe.each(renamed.map((s) => [s.name, s] as const))('%s', (_, s) => {
  it("keeps every rule in every interleaving, and with each fault of the key operation: the key is the id's it was made for", async () => {
    const clean = await exploreAll(explorer, s, []);
    expect(clean.violations.slice(0, 3)).toEqual([]);
    // The CLI's create has no idempotency key (an operator reruns it): no faults for it.
    const faults = s === byName ? [] : singleFaults(clean.maxCalls).filter((f) => f.actor === 0);
    const { faulted, violations } = await withEachFault(s, faults);
    report(s.name, { 'interleavings without a fault': clean.schedules, [`schedules with one of ${faults.length} faults`]: faulted, 'different answers': clean.answers.size });
    expect(violations.slice(0, 3)).toEqual([]);
    // The create by username meets the name held by two live users in some order, and refuses it there.
    if (s === byName) expect([...clean.answers].filter((a) => a.startsWith('AMBIGUOUS_USER'))).not.toEqual([]);
  }, TIMEOUT);
});
