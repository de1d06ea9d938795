/**
 * Every revoke that took effect is on the record once, whoever revoked
 * (issue 45): the operator CLI (`npm run keys`, its audit on stderr), a
 * user's deletion (the key-management function's close task the ingest
 * invokes, `data:apply`, a resync), a create's takeover, a reclaimed stale
 * slot, and the sweep of orphaned plan keys. Each revoker is cut off right
 * after its record flipped (the flip lands, then the process dies: no line
 * yet), then retried as its caller retries it (the operator runs it again,
 * SQS redelivers, the web product retries, the next sweep): exactly one
 * `Key revoked` line naming the user id and the key id. The API's own
 * revokes under 500, 503 and a crash are keys-audit-revokes.test.ts.
 */
import { beforeEach, expect, it } from '@jest/globals';
import type { Context } from 'aws-lambda';
import { STALE_CREATE_MS } from '../../lambdas/core/key-rules.js';
import { buildKeyAdminFunction } from '../../lambdas/key-admin/handler.js';
import { KeyManager, type PlanKeys } from '../../lambdas/key-admin/key-manager.js';
import { revokeAudit } from '../../lambdas/key-admin/revoke-audit.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { closeOutcome } from '../../lambdas/ingest/key-closer.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { KeyStore, planKeyName, type PlanKeyEntry } from '../../lambdas/store/keys/key-store.js';
import { sweepPlanKeys } from '../../lambdas/store/keys/plan-key-sweep.js';
import { operatorAudit } from '../../local/operator-audit.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { sqsEvent } from '../support/events.js';
import { withoutUser } from '../support/keys.js';
import { demoDataset } from '../support/fixtures.js';
import { useTestStores, type TestStore } from '../support/store.js';
import { recordingMetrics } from '../support/telemetry.js';

const stores = useTestStores(demoDataset);
let store: TestStore;
let now: number;
const clock = () => new Date(now);
beforeEach(() => {
  store = stores();
  now = Date.parse('2026-11-21T12:00:00.000Z');
});

/** The `Key revoked` lines of an audit, as the fields it logged. */
function lines() {
  const logged: Record<string, unknown>[] = [];
  const logger = { debug: () => {}, warn: () => {}, error: () => {}, info: (message: string, ...fields: Record<string, unknown>[]) => void (message === 'Key revoked' && logged.push(Object.assign({}, ...fields))) };
  return { logged, logger };
}

/** A crash right after a record's flip lands (the write that makes it revoked), while armed. */
function crashAfterFlip(s: TestStore) {
  const state = { armed: false, hit: 0 };
  s.client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      const flip = context.commandName === 'UpdateItemCommand' && String(input.UpdateExpression ?? '').includes('revoke_id');
      const out = await next(args);
      if (state.armed && flip) {
        state.hit++;
        throw new Error('process cut off after the flip');
      }
      return out;
    },
    { step: 'initialize', name: 'crashAfterFlip' },
  );
  return state;
}

/** Runs `attempt` with the crash armed (it must die), then again, and again, without it. */
async function crashThenRetry(attempt: () => Promise<unknown>): Promise<void> {
  const crash = crashAfterFlip(store);
  crash.armed = true;
  await expect(attempt()).rejects.toThrow();
  crash.armed = false;
  expect(crash.hit).toBeGreaterThan(0);
  await attempt().catch(() => undefined);
  await attempt().catch(() => undefined);
}

/** Plan keys in memory, listable for the sweep. */
function memoryPlan() {
  const live = new Map<string, PlanKeyEntry>();
  let n = 0;
  const planKeys: PlanKeys = {
    create: async (keyId, _usage, userId) => {
      const id = `apikey${++n}`;
      live.set(id, { id, name: planKeyName(userId, keyId), createdAt: clock() });
      return id;
    },
    attach: async () => undefined,
    remove: async (id) => void live.delete(id),
    listPage: async () => ({ entries: [...live.values()] }),
  };
  return { planKeys, live };
}

/** A process that dies right after a create's record lands, while armed: that call and every later one fail (no clean-up runs). */
function dieAfterRecord(s: TestStore) {
  const state = { armed: true, dead: false };
  s.client.middlewareStack.add(
    (next, context) => async (args) => {
      if (state.armed && state.dead) throw new Error('cut off after the record');
      const out = await next(args);
      const item = (args.input as { Item?: { type?: string } }).Item;
      if (state.armed && context.commandName === 'PutItemCommand' && item?.type === 'KEY_RECORD') {
        state.dead = true;
        throw new Error('cut off after the record');
      }
      return out;
    },
    { step: 'initialize', name: 'diesAfterRecord' },
  );
  return state;
}

const once = (logged: Record<string, unknown>[], keyId: string) => logged.filter((l) => l.keyId === keyId);

it('the operator CLI: a revoke cut off after its flip, run again (409), leaves one line on stderr naming the user id and the key id', async () => {
  const written: string[] = [];
  const mgr = new KeyManager(store.client, store.tableName, { clock, audit: operatorAudit('npm run keys', (line) => written.push(line)) });
  const { info } = await mgr.create({ userId: 'usr_frank', name: 'laptop' });
  await crashThenRetry(() => mgr.revoke('usr_frank', info.keyId));
  const mine = written.filter((l) => l.includes('Key revoked') && l.includes(info.keyId));
  expect(mine).toHaveLength(1);
  expect(mine[0]).toMatch(/caller="operator \(npm run keys\)".*userId=usr_frank keyId=key_\w+ .*by=revoke/);
});

type Deletion = (planKeys: PlanKeys, audit: ReturnType<typeof lines>) => Promise<void>;
const deleteAlice = { type: 'user.deleted', version: 1000, user_id: 'usr_alice' } as const;
const deletions: [string, Deletion][] = [
  [
    "the ingest, invoking the key-management function's close task",
    async (planKeys, { logger }) => {
      const keyAdmin = buildKeyAdminFunction({ manager: new KeyManager(store.client, store.tableName, { clock, planKeys }), logger: { ...logger }, metrics: recordingMetrics() });
      const ingest = buildIngest({
        client: store.client,
        tableName: store.tableName,
        logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
        metrics: recordingMetrics(),
        clock,
        continueLater: async () => undefined,
        closeUserKeys: async (userId, version) => closeOutcome(userId, await keyAdmin({ task: 'close', userId, version })),
      });
      const out = await ingest(sqsEvent([JSON.stringify(deleteAlice)]), { awsRequestId: 'r', getRemainingTimeInMillis: () => 60_000 } as unknown as Context);
      // A failed close fails the change: SQS delivers it again.
      if (out.batchItemFailures.length) throw new Error('the change failed; SQS delivers it again');
    },
  ],
  ['data:apply (the applier)', async (planKeys, { logger }) => void (await new ChangeApplier(store.client, store.tableName, { clock, planKeys, revokeAudit: revokeAudit(logger, recordingMetrics()) }).apply(deleteAlice))],
  [
    'a resync of a file without the user',
    async (planKeys, { logger }) => {
      const without = withoutUser(demoDataset(), 'usr_alice');
      await executeResync(store.client, store.tableName, planResync(await scanTable(store.client, store.tableName), without), { clock, planKeys, audit: revokeAudit(logger, recordingMetrics()) });
    },
  ],
];

it.each(deletions)("a user's deletion through %s, cut off after a key's flip and delivered again: one line per key", async (_, remove) => {
  const { planKeys } = memoryPlan();
  const audit = lines();
  const mgr = new KeyManager(store.client, store.tableName, { clock, planKeys });
  const made = [await mgr.create({ userId: 'usr_alice', name: 'one' }), await mgr.create({ userId: 'usr_alice', name: 'two' })];
  await crashThenRetry(() => remove(planKeys, audit));
  for (const { info } of made) expect(once(audit.logged, info.keyId)).toEqual([expect.objectContaining({ userId: 'usr_alice', keyId: info.keyId, by: 'user deleted' })]);
  // Every key of hers, seeded ones included, once.
  expect(new Set(audit.logged.map((l) => l.keyId)).size).toBe(audit.logged.length);
});

it("a create's takeover, cut off after it revoked the dead create's key, and retried: one line", async () => {
  const audit = lines();
  const mgr = new KeyManager(store.client, store.tableName, { clock, audit: revokeAudit(audit.logger, recordingMetrics()) });
  // The first create dies right after its record (its key never usable), its request left pending.
  const dies = dieAfterRecord(store);
  const ask = { idempotencyKey: 'takeover-audit-01', userId: 'usr_frank', name: 'laptop' };
  await expect(mgr.createOnce(ask)).rejects.toThrow('cut off');
  dies.armed = false;
  const dead = (await new KeyStore(store.client, store.tableName, { clock }).request('usr_frank', ask.idempotencyKey))!.key_id;
  now += STALE_CREATE_MS + 1_000;
  await crashThenRetry(() => mgr.createOnce(ask));
  expect(once(audit.logged, dead)).toEqual([expect.objectContaining({ userId: 'usr_frank', keyId: dead, by: 'create taken over' })]);
});

it('a stale slot reclaimed by a create at the limit, cut off after the flip, and retried: one line', async () => {
  const audit = lines();
  const mgr = new KeyManager(store.client, store.tableName, { clock, maxActive: 1, audit: revokeAudit(audit.logger, recordingMetrics()) });
  const dies = dieAfterRecord(store);
  await expect(mgr.create({ userId: 'usr_frank', name: 'dies' })).rejects.toThrow('cut off');
  dies.armed = false;
  const { slots } = await mgr.store.readSlots('usr_frank');
  const stale = Object.keys(slots.holders)[0]!;
  now += STALE_CREATE_MS + 1_000;
  await crashThenRetry(() => mgr.create({ userId: 'usr_frank', name: 'after' }));
  expect(once(audit.logged, stale)).toEqual([expect.objectContaining({ userId: 'usr_frank', keyId: stale, by: 'stale create reclaimed' })]);
});

it('the sweep, retiring a dead create whose plan key it found unrecorded, cut off after the flip and run again: one line, and the plan key gone', async () => {
  const audit = lines();
  const { planKeys, live } = memoryPlan();
  const sweeper = new KeyStore(store.client, store.tableName, { clock, planKeys, audit: revokeAudit(audit.logger, recordingMetrics()) });
  // What a create that died between CreateApiKey and recording its id leaves (its process gone, no clean-up): its slot,
  // its record naming no plan key, and the plan key.
  const keyId = 'key_0DEADCREATE000001';
  await sweeper.reserve('usr_frank', keyId, clock(), 1);
  await sweeper.putRecord('usr_frank', { type: 'KEY_RECORD', key_id: keyId, key_hash: 'f'.repeat(64), user_id: 'usr_frank', name: 'dies', scopes: ['events:read'], created_at: clock().toISOString(), revoked: false });
  await planKeys.create(keyId, 'ui_dead', 'usr_frank');
  // Too young to sweep: a create may still be recording it.
  expect((await sweepPlanKeys(sweeper)).young).toBe(1);
  now += STALE_CREATE_MS + 1_000;
  await crashThenRetry(() => sweepPlanKeys(sweeper));
  expect(live.size).toBe(0);
  expect(once(audit.logged, keyId)).toEqual([expect.objectContaining({ userId: 'usr_frank', keyId, by: 'stale create reclaimed' })]);
});
