/**
 * Every interleaving of a few key operations (create, revoke, a user's
 * deletion), with crashes, failed calls and lost responses, against the real
 * key manager, the real applier and a real table (in-process dynalite, each
 * call straight to its handler: test/support/direct-dynalite.ts), and API
 * Gateway's plan keys modelled by the rehearsal's in-memory key store
 * (local/rehearsal/api-keys.ts) behind the real ApiGatewayPlanKeys.
 *
 * Keys belong to user ids (PRODUCT P3): creates and revokes name their user
 * by id, and a rename (a `user.upserted` with another username, through the
 * real applier) may run around them in any order, a name moving from one
 * user to another mid-operation; a create by username (the operator CLI's)
 * resolves the name among the live users first.
 *
 * Each operation is an actor whose every call (DynamoDB or API Gateway)
 * waits for a turn; only one call is in flight at a time, and the explorer
 * decides whose call goes next. It explores every order of the calls that
 * matters, by dynamic partial-order reduction (Flanagan and Godefroid,
 * POPL 2005): two calls commute unless they touch the same item (or the same
 * partition a Query reads, or the same API Gateway key) and one of them
 * writes, so of the orders that differ only in commuting calls one is run.
 * Every schedule is re-run from scratch on a fresh table (stateless search).
 *
 * Faults, placed on the n-th call of an actor (over all its attempts):
 * - `crash`: the call lands, then the actor's attempt dies (a Lambda cut off,
 *   a process killed); its later calls never reach anything;
 * - `lost`: the call lands and its answer is lost; the SDK sends it again
 *   and that second answer is what the caller sees;
 * - `fail`: the call does not land and the caller gets an error (a throttle
 *   past the SDK's retries).
 * An actor whose attempt crashed or answered a failure tries again, as the
 * web product (or SQS) would, until it gets a definitive answer; one told
 * IN_PROGRESS waits until the others are done and a minute has passed.
 *
 * Each actor reads its own clock (`clockAt`: where it starts; all of them
 * move on together when time passes), as concurrent functions do: a create
 * whose clock reads 23:59:59.9 can take its slot after a create whose clock
 * reads 00:00:00.1 has taken its own.
 *
 * The rules (issue 37), checked after every write that lands (on a view of
 * the table kept by re-reading the items each write names, checked against
 * a Scan at the end) and at the end:
 * a key whose revoke (or user's deletion) answered never authenticates
 * again; no more than the limit of a user's keys authenticate, each holding
 * a slot; every key that authenticates has its plan key in the plan (AWS);
 * a user's counted day never moves back and its count never goes down within
 * the day (a deletion keeps it too: issue 45); at the end the slots are
 * exactly the usable keys, the plan keys in the
 * plan are exactly theirs, every key a create answered with still works
 * unless revoked, and belongs to the user id the create answered for (its
 * authorizer item and its record are that user's, whatever was renamed
 * meanwhile), and no create request is left pending.
 */
import { CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteApiKeyCommand, GetApiKeysCommand } from '@aws-sdk/client-api-gateway';
import { GetCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { authorize } from '../../lambdas/core/authorize.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { NotAuthenticatedError } from '../../lambdas/core/errors.js';
import { STALE_CREATE_MS } from '../../lambdas/core/key-rules.js';
import { hashApiKey } from '../../lambdas/core/api-key.js';
import { KeyManagementError, KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { ApiGatewayPlanKeys } from '../../lambdas/key-admin/usage-plan.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { KeyStore } from '../../lambdas/store/keys/key-store.js';
import { sweepPlanKeys } from '../../lambdas/store/keys/plan-key-sweep.js';
import { closeUserKeys } from '../../lambdas/store/keys/user-keys.js';
import type { ApiKeyItem, KeyCounterItem, KeyRecordItem, KeyRequestItem } from '../../lambdas/store/table/items.js';
import { batchWriteAll } from '../../lambdas/store/table/batch-write.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { ApiKeyStore } from '../../local/rehearsal/api-keys.js';
import { directClient } from './direct-dynalite.js';
import type { InProcessStore } from './in-process-dynalite.js';
import { seededRandom } from './keys.js';

export const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const PLAN_ID = 'plan-under-test';
const MAX_ATTEMPTS = 8;

export type FaultKind = 'crash' | 'lost' | 'fail';
/** A fault on the `call`-th call (1-based, over all attempts) of actor `actor`. */
export interface Fault {
  actor: number;
  call: number;
  kind: FaultKind;
}

/** What an actor's attempt answered: definitive (the caller stops) or not (it tries again). */
export interface Answer {
  definitive: boolean;
  /** `revoked`, `already`, `created`, `replayed`, `applied`, or a refusal code. */
  outcome: string;
  keyId?: string;
  key?: string;
  /** The user a create answered for (a create by username: the one it resolved). */
  userId?: string;
}

export interface AttemptContext {
  client: DynamoDBDocumentClient;
  /** The real API Gateway port over the modelled API Gateway (AWS scenarios), else undefined. */
  planKeys?: ApiGatewayPlanKeys;
  clock: () => Date;
  random: (length: number) => string;
  tableName: string;
}

export interface ActorSpec {
  name: string;
  /** The user whose keys it touches (for the rules); `deletes`: its definitive answer closes them all. */
  userId: string;
  deletes?: boolean;
  /** Where this actor's clock starts (ISO; default T0): its own reading of the time, moving on with everyone's. */
  clockAt?: string;
  /** The key a revoke is about: its definitive `revoked`/`already` answer means it must never authenticate again. */
  revokes?: () => string;
  attempt(ctx: AttemptContext): Promise<Answer>;
}

export interface Scenario {
  name: string;
  /** With API Gateway plan keys (AWS), or without (the local server). */
  aws: boolean;
  dataset: Dataset;
  actors: ActorSpec[];
  /** Per-user key limit of the key managers (small, so a scenario reaches it in few calls). */
  maxActive?: number;
  /**
   * Changes applied once to the dataset's table, before the seed every run
   * starts from is taken (a user deleted and re-created, say): a scenario
   * with one has a dataset object of its own.
   */
  prepare?: (client: DynamoDBDocumentClient, tableName: string) => Promise<void>;
}

// ---- the actors --------------------------------------------------------------------------------------------------

const managerOf = (ctx: AttemptContext, s: { maxActive?: number; maxCreatesPerDay?: number }) =>
  new KeyManager(ctx.client, ctx.tableName, {
    clock: ctx.clock,
    random: ctx.random,
    ...(ctx.planKeys ? { planKeys: ctx.planKeys } : {}),
    ...(s.maxActive ? { maxActive: s.maxActive } : {}),
    ...(s.maxCreatesPerDay ? { maxCreatesPerDay: s.maxCreatesPerDay } : {}),
  });

const RETRYABLE = new Set(['IN_PROGRESS', 'BUSY']);

async function answerOf(work: () => Promise<Answer>): Promise<Answer> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof KeyManagementError) return { definitive: !RETRYABLE.has(error.code), outcome: error.code, ...(error.keyId ? { keyId: error.keyId } : {}) };
    return { definitive: false, outcome: `error: ${(error as Error).name}` };
  }
}

/** A create with an idempotency key (its own, or `idempotencyKey`: two actors with one are a request and its retry racing). */
export function createActor(name: string, userId: string, opts: { maxActive?: number; maxCreatesPerDay?: number; idempotencyKey?: string; clockAt?: string } = {}): ActorSpec {
  return {
    name,
    userId,
    ...(opts.clockAt ? { clockAt: opts.clockAt } : {}),
    attempt: (ctx) =>
      answerOf(async () => {
        const r = await managerOf(ctx, opts).createOnce({ idempotencyKey: opts.idempotencyKey ?? `idem-${name}-0001`, userId, name: opts.idempotencyKey ? 'same request' : `key of ${name}` });
        return r.created ? { definitive: true, outcome: 'created', keyId: r.info.keyId, key: r.key, userId: r.userId } : { definitive: true, outcome: 'replayed', keyId: r.info.keyId, userId: r.userId };
      }),
  };
}

/**
 * A create by username, as the operator CLI makes it: the name resolved to
 * the one live user holding it (or refused: ambiguous, unknown), then a
 * create for that id (no idempotency key: an operator reruns the command,
 * so it is explored without faults). `userId`: the user the rules watch (the name's holder
 * at the start); the key's owner is the id the create answered for.
 */
export function createByNameActor(name: string, username: string, userId: string): ActorSpec {
  return {
    name,
    userId,
    attempt: (ctx) =>
      answerOf(async () => {
        const manager = managerOf(ctx, {});
        const owner = await manager.resolveUsername(username);
        const r = await manager.create({ userId: owner, name: `key of ${name}` });
        return { definitive: true, outcome: 'created', keyId: r.info.keyId, key: r.key, userId: owner };
      }),
  };
}

/** A rename: the source's `user.upserted` of the user with another username, through the real applier. */
export function renameActor(name: string, userId: string, username: string, version: number): ActorSpec {
  return {
    name,
    userId,
    attempt: (ctx) =>
      answerOf(async () => {
        const applier = new ChangeApplier(ctx.client, ctx.tableName, { clock: ctx.clock, fanOutConcurrency: 1 });
        const r = await applier.apply({ type: 'user.upserted', version, user: { id: userId, username } });
        return { definitive: true, outcome: r.result };
      }),
  };
}

export function revokeActor(name: string, userId: string, keyId: () => string): ActorSpec {
  return {
    name,
    userId,
    revokes: keyId,
    attempt: (ctx) =>
      answerOf(async () => {
        const info = await managerOf(ctx, {}).revoke(userId, keyId());
        return { definitive: true, outcome: 'revoked', keyId: info.keyId };
      }).then((a) => (a.outcome === 'ALREADY_REVOKED' ? { ...a, outcome: 'already' } : a)),
  };
}

/**
 * A user's deletion through the real applier. `keyAtATime`: its close is
 * called for one key at a time (the bound a user with thousands of keys
 * meets: user-keys.ts), so that the close's own steps between calls (the
 * holders again, its saved position) meet the others' calls.
 */
export function deleteActor(name: string, userId: string, version: number, opts: { keyAtATime?: boolean } = {}): ActorSpec {
  return {
    name,
    userId,
    deletes: true,
    attempt: (ctx) =>
      answerOf(async () => {
        const store = new KeyStore(ctx.client, ctx.tableName, { clock: ctx.clock, ...(ctx.planKeys ? { planKeys: ctx.planKeys } : {}) });
        const oneKey = opts.keyAtATime ? { closeUserKeys: async (u: string, v: number) => (await closeUserKeys(store, u, v, { maxCalls: 1 })).done } : {};
        const applier = new ChangeApplier(ctx.client, ctx.tableName, { clock: ctx.clock, fanOutConcurrency: 1, ...(ctx.planKeys ? { planKeys: ctx.planKeys } : {}), ...oneKey });
        const r = await applier.apply({ type: 'user.deleted', version, user_id: userId });
        return { definitive: true, outcome: r.result };
      }),
  };
}

/**
 * The close of a deletion at `version` running late (the ingest's invoke of
 * it retried after a throttle, while the user was re-created meanwhile), a
 * key at a time until done. Not a deletion's answer: the keys it must leave
 * alone are the rules' (every key a create answered with still works).
 */
export function lateCloseActor(name: string, userId: string, version: number): ActorSpec {
  return {
    name,
    userId,
    attempt: (ctx) =>
      answerOf(async () => {
        const store = new KeyStore(ctx.client, ctx.tableName, { clock: ctx.clock, ...(ctx.planKeys ? { planKeys: ctx.planKeys } : {}) });
        for (let calls = 0; !(await closeUserKeys(store, userId, version, { maxCalls: 1 })).done; calls++) if (calls > 20) throw new Error('the close made no progress');
        return { definitive: true, outcome: 'closed' };
      }),
  };
}

/** The key id a create actor's first attempt chooses (its seeded characters, at the start time): what a revoke of it names. */
export function firstKeyIdOf(actorName: string): string {
  return `key_${timeDigits(new Date(T0))}${seededRandom(`actor:${actorName}`)(12)}`;
}
function timeDigits(at: Date): string {
  const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let n = at.getTime();
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = BASE62[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

// ---- footprints --------------------------------------------------------------------------------------------------

/** What a call touches: resources it reads and writes ("item pk|sk", "part pk" for a Query's partition, "gsi" for an index Query, "apigw id"). */
export interface Footprint {
  reads: string[];
  writes: string[];
  /** What a write changes for readers of something wider (a Query of its partition, an index): conflicts with those reads only. */
  touches?: string[];
}

const KEY_PARTITIONS = /^(USERKEYS|APIKEY|KEYREQ|KEYID)#/;

function footprintOf(command: string, input: Record<string, unknown>): Footprint {
  const itemKey = (k: unknown) => {
    const key = k as { pk?: string; sk?: string };
    return `item ${key.pk}|${key.sk}`;
  };
  const written = (keys: { pk?: string; sk?: string }[]): Footprint => ({
    reads: [],
    writes: keys.map(itemKey),
    // What a Query of the partition reads; and a write outside the key partitions may change what an index holds (a user's tombstone leaves the username index).
    touches: keys.flatMap((key) => [`part ${key.pk}`, ...(KEY_PARTITIONS.test(String(key.pk)) ? [] : ['gsi'])]),
  });
  switch (command) {
    case 'GetItemCommand':
      return { reads: [itemKey(input.Key)], writes: [] };
    case 'PutItemCommand':
      return written([input.Item as { pk?: string; sk?: string }]);
    case 'UpdateItemCommand':
    case 'DeleteItemCommand':
      return written([input.Key as { pk?: string; sk?: string }]);
    case 'QueryCommand':
      if (input.IndexName) return { reads: ['gsi'], writes: [] };
      return { reads: [`part ${String((input.ExpressionAttributeValues as Record<string, unknown>)[':pk'])}`], writes: [] };
    case 'BatchGetItemCommand': {
      const request = Object.values(input.RequestItems as Record<string, { Keys: unknown[] }>)[0]!;
      return { reads: request.Keys.map(itemKey), writes: [] };
    }
    case 'BatchWriteItemCommand': {
      const request = Object.values(input.RequestItems as Record<string, { PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }[]>)[0]!;
      return written(request.map((r) => (r.PutRequest?.Item ?? r.DeleteRequest?.Key) as { pk?: string; sk?: string }));
    }
    case 'CreateApiKeyCommand':
      return { reads: [], writes: [`apigw value ${String(input.value)}`] };
    case 'CreateUsagePlanKeyCommand':
      return { reads: [], writes: [`apigw ${String(input.keyId)}`] };
    case 'DeleteApiKeyCommand':
      return { reads: [], writes: [`apigw ${String(input.apiKey)}`] };
    default:
      // Anything else touches everything (never expected here): safe, just slower.
      return { reads: [], writes: ['*'] };
  }
}

export function dependent(a: Footprint, b: Footprint): boolean {
  if (a.writes.includes('*') || b.writes.includes('*')) return true;
  const conflicts = (x: Footprint, y: Footprint) => x.writes.some((w) => y.writes.includes(w) || y.reads.includes(w)) || (x.touches ?? []).some((t) => y.reads.includes(t));
  return conflicts(a, b) || conflicts(b, a);
}

// ---- one run -----------------------------------------------------------------------------------------------------

class Crash extends Error {
  constructor() {
    super('crashed');
    this.name = 'Crash';
  }
}

export interface RunResult {
  /** The final table and plan keys, without what differs between runs for no reason (random revoke ids, API Gateway's key ids). */
  final: string;
  steps: Step[];
  answers: Answer[][];
  /** Calls each actor made (for placing faults). */
  calls: number[];
  violations: string[];
}

interface ActorState {
  spec: ActorSpec;
  calls: number;
  /** Waiting at a call: its footprint and how to let it go. */
  waiting?: { footprint: Footprint; go: () => void };
  running: boolean;
  /** Told IN_PROGRESS: waits until the others are done and time has passed. */
  waitingForTime?: () => void;
  attemptDead: boolean;
  answers: Answer[];
  keys: string[];
  faultsHit: FaultKind[];
}

/** The rules' view of the table and of API Gateway at one moment. */
interface Snapshot {
  items: Map<string, Record<string, unknown>>;
  attached: Set<string>;
  apiKeys: { id: string; value: string }[];
}

export class KeyExplorer {
  runs = 0;
  /** One table per dataset, emptied and seeded again before each run (creating and deleting a table cost more than the run). */
  private readonly tables = new Map<Dataset, { name: string; seed: Record<string, unknown>[] }>();
  private readonly observer: DynamoDBDocumentClient;

  constructor(private readonly store: Pick<InProcessStore, 'call'>) {
    this.observer = directClient(store.call);
  }

  /** The dataset's table, holding exactly the dataset's items. */
  private async freshTable(dataset: Dataset, prepare?: Scenario['prepare']): Promise<string> {
    let table = this.tables.get(dataset);
    if (!table) {
      const name = `keys-${this.tables.size}`;
      await ensureTable(this.observer, name);
      await writeDataset(this.observer, name, dataset);
      await prepare?.(this.observer, name);
      table = { name, seed: await scanItems(this.observer, name) };
      this.tables.set(dataset, table);
      return name;
    }
    const now = await scanItems(this.observer, table.name);
    await batchWriteAll(this.observer, table.name, [], {}, now.map((i) => ({ pk: i.pk, sk: i.sk })));
    await batchWriteAll(this.observer, table.name, table.seed);
    return table.name;
  }

  /**
   * One schedule: `prefix` names the actor whose call goes at each decision
   * point; after it `choose` does (the search's), or else the actor that ran
   * last if it is waiting, else the lowest.
   */
  async run(s: Scenario, prefix: readonly number[], faults: readonly Fault[], choose?: Chooser): Promise<RunResult> {
    this.runs++;
    const tableName = await this.freshTable(s.dataset, s.prepare);
    const observer = this.observer;
    let now = T0;
    const apiKeys = new ApiKeyStore([PLAN_ID], () => new Date(now));
    /** Each actor's clock: its start, plus the time that passed for everyone. */
    const clockOf = (spec: ActorSpec) => {
      const start = spec.clockAt ? Date.parse(spec.clockAt) : T0;
      return () => new Date(start + (now - T0));
    };
    /** Each user's counter as last observed in this run (the day never moves back). */
    const counted = new Map<string, { day: string; created: number }>();
    const actors: ActorState[] = s.actors.map((spec) => ({ spec, calls: 0, running: true, attemptDead: false, answers: [], keys: [], faultsHit: [] }));
    const steps: Step[] = [];
    const violations: string[] = [];
    let inFlight = false;
    let lastActor = -1;
    let diverged = false;
    let settle!: () => void;
    const allDone = new Promise<void>((r) => (settle = r));
    const pending: Promise<void>[] = [];

    const pump = () => {
      if (inFlight) return;
      if (actors.some((a) => a.running && !a.waiting && !a.waitingForTime)) return; // someone still computing
      const enabled = actors.map((a, i) => [i, a] as const).filter(([, a]) => a.waiting);
      if (!enabled.length) {
        const sleepers = actors.filter((a) => a.waitingForTime);
        if (sleepers.length) {
          // Everyone else is done: time passes, and the waiting retries go on.
          now += STALE_CREATE_MS + 1_000;
          for (const a of sleepers) {
            const wake = a.waitingForTime!;
            a.waitingForTime = undefined;
            wake();
          }
          return;
        }
        if (actors.every((a) => !a.running)) settle();
        return;
      }
      const i = steps.length;
      const waiting = new Map(enabled.map(([idx, a]) => [idx, a.waiting!.footprint]));
      const fallback = () => (choose ? choose(i, waiting, lastActor) : (enabled.find(([idx]) => idx === lastActor) ?? enabled[0]!)[0]);
      // A prefix the search took from a run is always followed; a prefix written by hand (withOnePreemption's) may name
      // an actor that is not waiting there (done, or waiting for time): the run goes on as if the prefix ended.
      const named = i < prefix.length && waiting.has(prefix[i]!) ? prefix[i]! : undefined;
      if (i < prefix.length && named === undefined) diverged = true;
      const chosen = named ?? (diverged ? fallback() : i < prefix.length ? prefix[i]! : fallback());
      const entry = enabled.find(([idx]) => idx === chosen)!;
      steps.push({ actor: chosen, enabled: waiting });
      lastActor = chosen;
      const go = entry[1].waiting!.go;
      entry[1].waiting = undefined;
      inFlight = true;
      go();
    };

    /**
     * The table as the rules see it, kept by reading again (GetItem) the items
     * each landed write names, instead of a Scan after every write: only the
     * actors write, and only the items their calls name (footprintOf), so it
     * is what a Scan would show, at a fraction of the cost (issue 47). A
     * call whose footprint is unknown (`*`) is followed by a full Scan, and
     * the end compares the view with one.
     */
    const view = new Map<string, Record<string, unknown>>();
    const rescan = async () => {
      view.clear();
      for (const item of await scanItems(observer, tableName)) view.set(`${item.pk}|${item.sk}`, item);
    };
    await rescan();
    const refresh = async (footprint: Footprint): Promise<void> => {
      if (footprint.writes.includes('*')) return rescan();
      for (const w of footprint.writes) {
        if (!w.startsWith('item ')) continue;
        const [pk, sk] = w.slice('item '.length).split('|') as [string, string];
        const got = (await observer.send(new GetCommand({ TableName: tableName, Key: { pk, sk }, ConsistentRead: true }))).Item;
        if (got) view.set(`${pk}|${sk}`, got);
        else view.delete(`${pk}|${sk}`);
      }
    };
    const snapshot = (): Snapshot => ({ items: new Map(view), attached: new Set(apiKeys.planKeys), apiKeys: apiKeys.list().map((k) => ({ id: k.id, value: k.value })) });

    /** Runs one call of actor i through its turn and its fault. */
    const gated = async <T>(i: number, command: string, input: Record<string, unknown>, send: () => Promise<T>): Promise<T> => {
      const a = actors[i]!;
      if (a.attemptDead) throw new Crash();
      const footprint = footprintOf(command, input);
      await new Promise<void>((go) => {
        a.waiting = { footprint, go };
        pump();
      });
      a.calls++;
      const fault = faults.find((f) => f.actor === i && f.call === a.calls);
      const lands = footprint.writes.length > 0;
      try {
        if (fault?.kind === 'fail') {
          a.faultsHit.push('fail');
          throw Object.assign(new Error('Throughput exceeded'), { name: 'ProvisionedThroughputExceededException' });
        }
        let answer: T;
        if (fault?.kind === 'lost') {
          a.faultsHit.push('lost');
          // It lands; the answer is lost; the SDK sends the same request again, and the caller sees that answer.
          await send().catch(() => undefined);
          if (lands) {
            await refresh(footprint);
            await this.observe(s, actors, snapshot(), counted, violations, `after ${a.spec.name}'s call ${a.calls} (landed, answer lost)`);
          }
          answer = await send();
        } else {
          answer = await send();
        }
        if (lands) {
          await refresh(footprint);
          await this.observe(s, actors, snapshot(), counted, violations, `after ${a.spec.name}'s call ${a.calls} (${command})`);
        }
        if (fault?.kind === 'crash') {
          a.faultsHit.push('crash');
          a.attemptDead = true;
          throw new Crash();
        }
        return answer;
      } finally {
        inFlight = false;
        queueMicrotask(pump);
      }
    };

    for (const [i, a] of actors.entries()) {
      const client = directClient(this.store.call, (command, input, send) => gated(i, command, input, send));
      const apiGateway = {
        send: async (command: object) => {
          const input = (command as { input: Record<string, unknown> }).input;
          const name = command.constructor.name;
          return gated(i, name, input, async () => modelledApiGateway(apiKeys, command));
        },
      };
      const random = seededRandom(`actor:${a.spec.name}`);
      const recordingRandom = (length: number) => {
        const out = random(length);
        if (length === 40) a.keys.push(`pk_${out}`);
        return out;
      };
      const ctx: AttemptContext = {
        client,
        ...(s.aws ? { planKeys: new ApiGatewayPlanKeys(apiGateway, PLAN_ID) } : {}),
        clock: clockOf(a.spec),
        random: recordingRandom,
        tableName,
      };
      pending.push(
        (async () => {
          for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            a.attemptDead = false;
            const answer = await a.spec.attempt(ctx);
            if (a.attemptDead) {
              a.answers.push({ definitive: false, outcome: 'crashed' });
              continue;
            }
            a.answers.push(answer);
            if (answer.definitive) break;
            if (answer.outcome === 'IN_PROGRESS') {
              await new Promise<void>((wake) => {
                a.waitingForTime = wake;
                pump();
              });
            }
          }
          a.running = false;
          pump();
        })(),
      );
    }
    pump();
    await allDone;
    await Promise.all(pending);

    for (const a of actors) if (!a.answers.at(-1)?.definitive) violations.push(`${a.spec.name} got no definitive answer in ${MAX_ATTEMPTS} attempts: ${a.answers.map((x) => x.outcome).join(', ')}`);
    const viewed = snapshot();
    await rescan();
    const end = snapshot();
    if (!sameItems(viewed.items, end.items)) violations.push('at the end: the view kept write by write differs from a Scan of the table (a write outside its footprint)');
    await this.checkEnd(s, actors, end, violations);
    if (s.aws) await this.checkSweep(actors, end, tableName, apiKeys, () => new Date(now + STALE_CREATE_MS + 1_000), violations);
    const final = JSON.stringify({
      items: [...end.items.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).filter(([f]) => !['revoke_id', 'plan_key_id', 'rev'].includes(f)).sort())]),
      plan: end.apiKeys.map((k) => `${k.value}:${end.attached.has(k.value)}`).sort(),
    });
    return { final, steps, answers: actors.map((a) => a.answers), calls: actors.map((a) => a.calls), violations };
  }

  /** The rules that hold at every moment. */
  private async observe(s: Scenario, actors: ActorState[], snap: Snapshot, counted: Map<string, { day: string; created: number }>, violations: string[], when: string): Promise<void> {
    const users = new Set(s.actors.map((a) => a.userId));
    for (const a of actors) {
      const final = a.answers.at(-1);
      if (!final?.definitive) continue;
      if (a.spec.revokes && (final.outcome === 'revoked' || final.outcome === 'already')) {
        for (const key of this.keysWithId(actors, snap, a.spec.revokes())) if (await usable(snap, key)) violations.push(`${when}: ${a.spec.name} answered ${final.outcome}, yet its key authenticates`);
      }
      if (a.spec.deletes) {
        for (const key of this.allKeys(actors)) if (ownerOf(snap, key) === a.spec.userId && (await usable(snap, key))) violations.push(`${when}: ${a.spec.userId} was deleted, yet a key of theirs authenticates`);
      }
    }
    for (const userId of users) {
      const usableIds = await this.usableKeyIds(actors, snap, userId);
      const counter = snap.items.get(`USERKEYS#${userId}|COUNTER`) as KeyCounterItem | undefined;
      const holders = new Set(Object.keys(counter?.holders ?? {}));
      const limit = s.maxActive ?? 10;
      // The daily bound: the day counted only moves forward, and its count only up (a deletion keeps both).
      const seen = counted.get(userId);
      if (seen && (counter?.day === undefined || counter.day < seen.day)) violations.push(`${when}: ${userId}'s counted day moved back from ${seen.day} to ${counter?.day ?? 'none'}`);
      else if (seen && counter!.day === seen.day && (counter!.created ?? 0) < seen.created) violations.push(`${when}: ${userId}'s creates of ${seen.day} went down from ${seen.created} to ${counter!.created ?? 0}`);
      if (counter?.day !== undefined && (!seen || counter.day >= seen.day)) counted.set(userId, { day: counter.day, created: counter.created ?? 0 });
      if (usableIds.length > limit) violations.push(`${when}: ${usableIds.length} keys of ${userId} authenticate (limit ${limit})`);
      for (const id of usableIds) if (!holders.has(id)) violations.push(`${when}: key ${id} of ${userId} authenticates without holding a slot`);
      if (s.aws) {
        for (const id of usableIds) {
          const usage = this.usageOf(snap, id);
          if (!usage || !snap.attached.has(usage)) violations.push(`${when}: key ${id} authenticates without its plan key in the plan`);
        }
      }
    }
  }

  /** The rules that hold once every actor has its definitive answer. */
  private async checkEnd(s: Scenario, actors: ActorState[], snap: Snapshot, violations: string[]): Promise<void> {
    const keysNow = (userId: string) => [...snap.items.values()].filter((i) => i.type === 'KEY_RECORD' && String(i.pk) === `USERKEYS#${userId}`) as unknown as (KeyRecordItem & { pk: string })[];
    const users = new Set(s.actors.map((a) => a.userId));
    for (const userId of users) {
      {
        {
          const usableIds = await this.usableKeyIds(actors, snap, userId);
          const counter = snap.items.get(`USERKEYS#${userId}|COUNTER`) as KeyCounterItem | undefined;
          const holders = Object.keys(counter?.holders ?? {}).sort();
          const live = keysNow(userId).filter((r) => !r.revoked && !r.erased).map((r) => r.key_id).sort();
          if (JSON.stringify(holders) !== JSON.stringify([...usableIds].sort())) violations.push(`at the end: the slots of ${userId} (${holders.join(',') || 'none'}) are not its usable keys (${usableIds.join(',') || 'none'})`);
          if (JSON.stringify(live) !== JSON.stringify([...usableIds].sort())) violations.push(`at the end: the listed active keys of ${userId} (${live.join(',') || 'none'}) are not its usable keys (${usableIds.join(',') || 'none'})`);
          if (counter && counter.active !== holders.length) violations.push(`at the end: ${userId}'s counter says ${counter.active}, its slots are ${holders.length}`);
        }
      }
    }
    // A request left pending holds no key; it is left only by a create whose user was deleted before its retry (the
    // retry finds the user gone), and its TTL removes it within 24 hours.
    const requests = [...snap.items.values()].filter((i) => i.type === 'KEY_REQUEST') as unknown as KeyRequestItem[];
    const gone = (userId: string) => (snap.items.get(`USER#${userId}|USER`) as { deleted?: boolean } | undefined)?.deleted === true;
    for (const r of requests) if (r.state === 'pending' && !gone(r.user_id)) violations.push(`at the end: the create request for ${r.key_id} is still pending`);
    // Keys a create answered with: usable unless a revoke of them answered, or their user's deletion applied.
    const revokedIds = new Set(actors.filter((a) => a.spec.revokes && ['revoked', 'already'].includes(a.answers.at(-1)?.outcome ?? '')).map((a) => a.spec.revokes!()));
    const deletedUsers = new Set(actors.filter((a) => a.spec.deletes && a.answers.at(-1)?.definitive).map((a) => a.spec.userId));
    for (const a of actors) {
      for (const answer of a.answers) {
        if (answer.outcome !== 'created' || !answer.key) continue;
        const owner = answer.userId ?? a.spec.userId;
        const expectUsable = !revokedIds.has(answer.keyId!) && !deletedUsers.has(owner);
        const item = snap.items.get(`APIKEY#${hashApiKey(answer.key)}|APIKEY`) as ApiKeyItem | undefined;
        const isUsable = item !== undefined && !item.revoked;
        if (expectUsable !== isUsable) violations.push(`at the end: ${a.spec.name}'s created key ${answer.keyId} is ${isUsable ? '' : 'not '}usable`);
        // The key is the user's it was made for, whoever holds which name now: its holder sees it and can revoke it.
        const record = snap.items.get(`USERKEYS#${owner}|KEY#${answer.keyId}`) as KeyRecordItem | undefined;
        if (isUsable && (item.user_id !== owner || record?.key_hash !== hashApiKey(answer.key))) {
          violations.push(`at the end: ${a.spec.name}'s key ${answer.keyId}, made for ${owner}, is ${item.user_id}'s${record ? '' : ` and not in ${owner}'s records`}`);
        }
      }
    }
    if (s.aws) {
      const usages = new Set<string>();
      for (const a of actors) for (const key of a.keys) {
        const item = snap.items.get(`APIKEY#${hashApiKey(key)}|APIKEY`) as ApiKeyItem | undefined;
        if (item && !item.revoked && item.usage_identifier) usages.add(item.usage_identifier);
      }
      const orphans = [...snap.attached].filter((v) => !usages.has(v) && !v.startsWith('seeded'));
      if (orphans.length) violations.push(`at the end: ${orphans.length} plan key(s) in the plan with no usable key`);
      // An API key outside the plan can be left only by a lost or crashed CreateApiKey (its id never came back).
      const outside = snap.apiKeys.filter((k) => !snap.attached.has(k.value)).length;
      const createFaults = actors.reduce((n, a) => n + a.faultsHit.filter((f) => f !== 'fail').length, 0);
      if (outside > createFaults) violations.push(`at the end: ${outside} API key(s) outside the plan, more than the ${createFaults} lost or crashed call(s)`);
    }
  }

  /**
   * No plan key outlives its record (issue 45): once a minute has passed, the
   * sweep (lambdas/store/keys/plan-key-sweep.ts, through the real ApiGatewayPlanKeys
   * over the modelled API Gateway) leaves exactly the plan keys of the usable
   * keys, each in the plan, whatever crash left one behind (a create cut off
   * between CreateApiKey and recording its id, or after recording it on a
   * record its user's deletion had erased), and makes no usable key unusable.
   */
  private async checkSweep(actors: ActorState[], before: Snapshot, tableName: string, apiKeys: ApiKeyStore, aMinuteOn: () => Date, violations: string[]): Promise<void> {
    const apiGateway = { send: async (command: object) => modelledApiGateway(apiKeys, command) };
    const sweeper = new KeyStore(this.observer, tableName, { clock: aMinuteOn, planKeys: new ApiGatewayPlanKeys(apiGateway, PLAN_ID) });
    await sweepPlanKeys(sweeper);
    const items = new Map((await scanItems(this.observer, tableName)).map((i) => [`${i.pk}|${i.sk}`, i]));
    const after: Snapshot = { items, attached: new Set(apiKeys.planKeys), apiKeys: apiKeys.list().map((k) => ({ id: k.id, value: k.value })) };
    const usages = new Set<string>();
    for (const key of this.allKeys(actors)) {
      const wasUsable = await usable(before, key);
      if (wasUsable && !(await usable(after, key))) violations.push('after the sweep: a usable key no longer authenticates');
      const item = after.items.get(`APIKEY#${hashApiKey(key)}|APIKEY`) as ApiKeyItem | undefined;
      if (item && !item.revoked && item.usage_identifier) usages.add(item.usage_identifier);
    }
    const left = after.apiKeys.filter((k) => !k.value.startsWith('seeded') && !usages.has(k.value));
    if (left.length) violations.push(`after the sweep: ${left.length} API key(s) no usable key holds (${left.map((k) => k.id).join(', ')})`);
    const detached = after.apiKeys.filter((k) => usages.has(k.value) && !after.attached.has(k.value));
    if (detached.length) violations.push(`after the sweep: ${detached.length} usable key(s) whose plan key is not in the plan`);
  }

  private allKeys(actors: ActorState[]): string[] {
    return actors.flatMap((a) => a.keys);
  }

  private keysWithId(actors: ActorState[], snap: Snapshot, keyId: string): string[] {
    return this.allKeys(actors).filter((k) => (snap.items.get(`APIKEY#${hashApiKey(k)}|APIKEY`) as ApiKeyItem | undefined)?.key_id === keyId || recordOf(snap, k)?.key_id === keyId);
  }

  private async usableKeyIds(actors: ActorState[], snap: Snapshot, userId: string): Promise<string[]> {
    const out: string[] = [];
    for (const key of this.allKeys(actors)) {
      const item = snap.items.get(`APIKEY#${hashApiKey(key)}|APIKEY`) as ApiKeyItem | undefined;
      if (item && !item.revoked && item.user_id === userId && (await usable(snap, key))) out.push(item.key_id);
    }
    return out;
  }

  private usageOf(snap: Snapshot, keyId: string): string | undefined {
    for (const item of snap.items.values()) if (item.type === 'API_KEY' && item.key_id === keyId && !item.revoked) return item.usage_identifier as string | undefined;
    return undefined;
  }
}

function sameItems(a: ReadonlyMap<string, Record<string, unknown>>, b: ReadonlyMap<string, Record<string, unknown>>): boolean {
  const canonical = (m: ReadonlyMap<string, Record<string, unknown>>) => JSON.stringify([...m.entries()].sort(([x], [y]) => x.localeCompare(y)).map(([k, v]) => [k, Object.entries(v).sort(([x], [y]) => x.localeCompare(y))]));
  return canonical(a) === canonical(b);
}

async function scanItems(client: DynamoDBDocumentClient, tableName: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

function recordOf(snap: Snapshot, key: string): KeyRecordItem | undefined {
  const hash = hashApiKey(key);
  for (const item of snap.items.values()) if (item.type === 'KEY_RECORD' && item.key_hash === hash) return item as unknown as KeyRecordItem;
  return undefined;
}

function ownerOf(snap: Snapshot, key: string): string | undefined {
  const item = snap.items.get(`APIKEY#${hashApiKey(key)}|APIKEY`) as ApiKeyItem | undefined;
  if (item?.user_id) return item.user_id;
  const record = recordOf(snap, key);
  return record?.user_id;
}

/** The real authorizer, reading the snapshot. */
async function usable(snap: Snapshot, key: string): Promise<boolean> {
  const reader = {
    getApiKey: async (hash: string) => (snap.items.get(`APIKEY#${hash}|APIKEY`) as ApiKeyItem | undefined) ?? null,
    isLiveUser: async (userId: string) => {
      const user = snap.items.get(`USER#${userId}|USER`);
      return user?.type === 'USER' && user.deleted !== true;
    },
  };
  try {
    await authorize(reader, { headers: { 'x-events-api-key': key }, requiredScope: 'events:read' }, 'events', new Date(T0));
    return true;
  } catch (error) {
    if (error instanceof NotAuthenticatedError) return false;
    throw error;
  }
}

/** API Gateway's answer to one of the three calls, from the rehearsal's key store; an error answer thrown as the SDK throws it. */
function modelledApiGateway(store: ApiKeyStore, command: object): Record<string, unknown> {
  const input = (command as { input: Record<string, unknown> }).input;
  const call =
    command instanceof CreateApiKeyCommand
      ? store.interpret('KeyAdmin', 'POST', '/apikeys', input)
      : command instanceof CreateUsagePlanKeyCommand
        ? store.interpret('KeyAdmin', 'POST', `/usageplans/${String(input.usagePlanId)}/keys`, { keyId: input.keyId, keyType: input.keyType })
        : command instanceof DeleteApiKeyCommand
          ? store.interpret('KeyAdmin', 'DELETE', `/apikeys/${String(input.apiKey)}`, {})
          : command instanceof GetApiKeysCommand
            ? store.interpret('KeyAdmin', 'GET', `/apikeys?limit=${String(input.limit ?? 25)}${input.position ? `&position=${String(input.position)}` : ''}`, {})
            : undefined;
  if (!call) throw new Error(`API Gateway call not modelled: ${command.constructor.name}`);
  const answer = call.run();
  if (answer.errorType) throw Object.assign(new Error(String(answer.body?.message ?? answer.errorType)), { name: answer.errorType });
  // What the SDK would make of the JSON: epoch seconds become a Date.
  if (command instanceof GetApiKeysCommand) {
    const body = answer.body as { item?: { createdDate: number }[]; position?: string } | undefined;
    return { items: (body?.item ?? []).map((k) => ({ ...k, createdDate: new Date(k.createdDate * 1000) })), ...(body?.position ? { position: body.position } : {}) };
  }
  return answer.body ?? {};
}

// ---- the search --------------------------------------------------------------------------------------------------

export interface Exploration {
  schedules: number;
  violations: { schedule: string; faults: Fault[]; violations: string[] }[];
  /** The most calls each actor made in any schedule (for placing faults). */
  maxCalls: number[];
  answers: Set<string>;
  /** The distinct final states (RunResult.final). */
  finals: Set<string>;
}

/**
 * Every schedule of the scenario with these faults, up to commuting calls
 * (searchSchedules). `limit` stops a search that grows past it (reported as
 * a violation: the scenario is too big for an exhaustive search).
 */
export async function exploreAll(explorer: KeyExplorer, s: Scenario, faults: readonly Fault[], limit = 20_000, reduce = true): Promise<Exploration> {
  const out: Exploration = { schedules: 0, violations: [], maxCalls: s.actors.map(() => 0), answers: new Set(), finals: new Set() };
  const complete = await searchSchedules(
    (prefix, choose) => explorer.run(s, prefix, faults, choose),
    (result) => {
      out.schedules++;
      result.calls.forEach((c, i) => (out.maxCalls[i] = Math.max(out.maxCalls[i]!, c)));
      out.answers.add(result.answers.map((as) => as.map((a) => a.outcome).join('>')).join(' | '));
      out.finals.add(result.final);
      if (result.violations.length) out.violations.push({ schedule: result.steps.map((st) => st.actor).join(''), faults: [...faults], violations: result.violations });
    },
    { limit, reduce },
  );
  if (!complete) out.violations.push({ schedule: '', faults: [...faults], violations: [`stopped after ${limit} schedules: too many for an exhaustive search`] });
  return out;
}

/** One decision point of a run: who went, and who was waiting with which call. */
export interface Step {
  actor: number;
  enabled: Map<number, Footprint>;
}

/** Picks the actor whose call goes next at decision point `i` of a run (past its prefix), among those waiting with their calls. */
export type Chooser = (i: number, waiting: Map<number, Footprint>, last: number) => number;

/** A decision point on the current path of the search. */
interface SearchNode {
  waiting: Map<number, Footprint>;
  chosen: number;
  /** Tried here (the chosen one included). */
  done: Set<number>;
  /** To try here. */
  backtrack: Set<number>;
  /** Waiting here but not worth trying: tried at an earlier point and commuting with every call run since. */
  sleep: Map<number, Footprint>;
}

/**
 * Stateless dynamic partial-order reduction with sleep sets: runs a schedule
 * (a prefix of choices, then awake actors, the last one that ran first),
 * adds by Flanagan and Godefroid's rule the choices that could reorder two
 * conflicting calls, and runs the deepest one not tried yet, until none is
 * left. An actor sleeps at a point when its waiting call was tried at an
 * earlier point of the path and commutes with every call run since: trying
 * it again could only repeat an order already explored (Godefroid's sleep
 * sets). `reduce: false` tries every waiting actor at every step instead
 * (every interleaving: what the reduction is checked against). False when
 * `limit` runs were not enough.
 */
export async function searchSchedules<R extends { steps: Step[] }>(
  run: (prefix: number[], choose: Chooser) => Promise<R>,
  visit: (result: R) => void,
  opts: { limit: number; reduce: boolean },
): Promise<boolean> {
  const stack: SearchNode[] = [];
  /** Who sleeps at the point after `node`: its sleepers and those tried before its choice, if they commute with that choice. */
  const sleepAfter = (node: SearchNode): Map<number, Footprint> => {
    const next = new Map<number, Footprint>();
    if (!opts.reduce) return next;
    const taken = node.waiting.get(node.chosen)!;
    const candidates: [number, Footprint][] = [...node.sleep, ...[...node.done].filter((q) => q !== node.chosen).map((q) => [q, node.waiting.get(q)!] as [number, Footprint])];
    // The actor that ran waits at another call now: it cannot sleep on (only a run past a point where all slept picks a sleeper).
    for (const [q, f] of candidates) if (q !== node.chosen && !dependent(f, taken)) next.set(q, f);
    return next;
  };
  let prefix: number[] = [];
  for (let runs = 1; ; runs++) {
    const choose: Chooser = (i, waiting, last) => {
      const sleep = i === 0 ? new Map<number, Footprint>() : sleepAfter(stack[i - 1]!);
      const awake = [...waiting.keys()].filter((q) => !sleep.has(q));
      // All asleep: every order from here was explored already; any choice finishes the run (its end is still checked).
      const pool = awake.length ? awake : [...waiting.keys()];
      const pick = pool.includes(last) ? last : pool[0]!;
      stack[i] = { waiting, chosen: pick, done: new Set([pick]), backtrack: new Set([pick]), sleep };
      return pick;
    };
    const result = await run(prefix, choose);
    visit(result);
    const steps = result.steps;
    if (opts.reduce) addBacktracks(steps, stack);
    else steps.forEach((st, i) => st.enabled.forEach((_f, q) => stack[i]!.backtrack.add(q)));
    const untried = (i: number) => [...stack[i]!.backtrack].filter((q) => !stack[i]!.done.has(q) && !stack[i]!.sleep.has(q) && stack[i]!.waiting.has(q));
    let d = stack.length - 1;
    while (d >= 0 && untried(d).length === 0) d--;
    if (d < 0) return true;
    if (runs >= opts.limit) return false;
    const next = untried(d)[0]!;
    stack[d]!.chosen = next;
    stack[d]!.done.add(next);
    stack.length = d + 1;
    prefix = [...steps.slice(0, d).map((st) => st.actor), next];
  }
}

/**
 * Flanagan and Godefroid's rule: for each step j and each actor q enabled
 * before it, the last earlier step i of another actor whose call conflicts
 * with q's waiting call and does not happen before q's state at j; at i
 * must also be tried q and every actor whose step between i and j happens
 * before q's state (or, if none of them was waiting at i, everyone who was).
 */
function addBacktracks(steps: Step[], stack: { backtrack: Set<number>; sleep: Map<number, Footprint> }[]): void {
  const actors = new Set(steps.flatMap((s) => [...s.enabled.keys()]));
  const n = Math.max(...actors) + 1;
  /** Clock of each step, and of each actor after its last step. */
  const stepClock: number[][] = [];
  const actorClock: number[][] = Array.from({ length: n }, () => Array(n).fill(-1));
  const footprints = steps.map((s) => s.enabled.get(s.actor)!);
  for (let j = 0; j < steps.length; j++) {
    const p = steps[j]!.actor;
    // Before step j runs: for every actor q waiting, its call against the steps before.
    for (const [q, fq] of steps[j]!.enabled) {
      for (let i = j - 1; i >= 0; i--) {
        const pi = steps[i]!.actor;
        if (pi === q || !dependent(footprints[i]!, fq)) continue;
        if (actorClock[q]![pi]! >= i) continue; // i happens before q's state: no race with it (an earlier step may race)
        // Who can go first at i to reverse the race: q itself, and every actor whose later step leads to q's state (all of
        // them: one of them may be asleep there, its order explored already, while another's is not).
        const pre = steps[i]!.enabled;
        const first = new Set<number>();
        if (pre.has(q)) first.add(q);
        for (let k = i + 1; k < j; k++) if (pre.has(steps[k]!.actor) && actorClock[q]![steps[k]!.actor]! >= k) first.add(steps[k]!.actor);
        // When every one of them sleeps at i, the reversal they stand for was explored earlier only as far as their own
        // calls go: the actors whose calls conflict with theirs there are tried at i too (everyone awake, to be safe).
        const sleeping = stack[i]!.sleep;
        const candidates = first.size ? [...first] : [...pre.keys()];
        const all = candidates.every((r) => sleeping.has(r)) ? [...pre.keys()] : candidates;
        for (const r of all) stack[i]!.backtrack.add(r);
        break;
      }
    }
    const clock = [...actorClock[p]!];
    for (let i = 0; i < j; i++) if (dependent(footprints[i]!, footprints[j]!)) for (let k = 0; k < n; k++) clock[k] = Math.max(clock[k]!, stepClock[i]![k]!);
    clock[p] = j;
    stepClock.push(clock);
    actorClock[p] = clock;
  }
}
