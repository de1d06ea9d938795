/**
 * The plan-key sweep over the account's whole API key quota (issue 57,
 * item 4): 10,000 API keys in the plan (AWS's default quota per account and
 * region), three orphans among them (at the start, the middle and the end
 * of GetApiKeys' order: a create cut off before recording its plan key),
 * the key-management function's sweep task as its EventBridge schedule
 * invokes it (every KEY_ADMIN.sweepEveryMinutes), each invocation held to a
 * budget of 3,000 DynamoDB calls (its 6 s at 2 ms a call) and to the
 * account's API Gateway management rate (10 calls a second, a burst of 40:
 * "API Gateway quotas for creating, deploying and managing an API",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html),
 * API Gateway's listing paged as GetApiKeys pages (500 a page).
 *
 * Held: a pass over all 10,000 ends within its runs' bound (two runs, 10
 * minutes: inside the hour); every orphan is gone by then, every live key's
 * plan key kept; no run goes near its budget; the next run starts a new
 * pass from the first page.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildKeyAdminFunction } from '../../lambdas/key-admin/handler.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import type { KeyTaskResult } from '../../lambdas/key-admin/tasks.js';
import { SWEEP_PAGES_PER_RUN } from '../../lambdas/store/keys/plan-key-sweep.js';
import { batchWriteAll } from '../../lambdas/store/table/batch-write.js';
import { keys } from '../../lambdas/store/table/table.js';
import { KEY_ADMIN } from '../../lib/key-admin.js';
import { directClient } from '../support/direct-dynalite.js';
import type { InProcessStore } from '../support/in-process-dynalite.js';
import { budgetedClient, demoStore, pagedPlan } from '../support/invocation-budget.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';

const TABLE = 'sweep-bounded';
const PLAN_KEYS = 10_000;
const CALLS_IN_ONE_INVOCATION = 3_000;
/** The account's API Gateway management calls a run may make in its 6 s without being throttled: the burst of 40. */
const API_GATEWAY_BURST = 40;
const T = Date.parse('2026-11-21T12:00:00.000Z');

let store: InProcessStore;
beforeAll(async () => {
  store = await demoStore(TABLE);
});
afterAll(async () => store?.close());


describe("the plan-key sweep over the account's 10,000 API keys", () => {
  it('ends a pass within two runs of its schedule, every orphan deleted, every live key kept, each run far inside its budget', async () => {
    let now = T;
    const clock = () => new Date(now);
    const { planKeys, live, counts } = pagedPlan(clock);
    const mgr = new KeyManager(directClient(store.call), TABLE, { clock, planKeys });
    const { info } = await mgr.create({ userId: 'usr_frank', name: 'model' });
    const model = (await mgr.store.record('usr_frank', info.keyId))!;
    const orphans: string[] = [];
    const records: Record<string, unknown>[] = [];
    for (let i = 1; i < PLAN_KEYS; i++) {
      const userId = `usr_u${String(Math.floor(i / 10)).padStart(4, '0')}`;
      const keyId = `key_${String(i).padStart(20, '0')}`;
      const planKeyId = await planKeys.create(keyId, `ui_${i}`, userId);
      // An orphan at the start, the middle and the end of the listing: a record that never recorded its plan key.
      const orphan = i === 1 || i === PLAN_KEYS / 2 || i === PLAN_KEYS - 1;
      if (orphan) orphans.push(planKeyId);
      records.push({ ...model, ...keys.keyRecord(userId, keyId), key_id: keyId, user_id: userId, key_hash: `hash${i}`, plan_key_id: orphan ? undefined : planKeyId });
    }
    await batchWriteAll(directClient(store.call), TABLE, records);
    expect(live.size).toBe(PLAN_KEYS);

    const timed = budgetedClient(store, CALLS_IN_ONE_INVOCATION, 'Task timed out after 6.00 seconds');
    const keyAdmin = buildKeyAdminFunction({ manager: new KeyManager(timed.client, TABLE, { clock, planKeys }), logger: recordingLogger(), metrics: recordingMetrics() });
    const runs: { calls: number; apiGateway: number; pages: number; passEnded: boolean; deleted: number }[] = [];
    // The schedule's runs, once everything is older than a minute.
    for (let run = 1; run <= 4; run++) {
      now = T + 60_000 + run * KEY_ADMIN.sweepEveryMinutes * 60_000;
      timed.reset();
      counts.calls = 0;
      const report = (await keyAdmin({ task: 'sweep' })) as Extract<KeyTaskResult, { task: 'sweep' }>;
      runs.push({ calls: timed.calls(), apiGateway: counts.calls, pages: report.pages, passEnded: report.passEnded, deleted: report.deleted.length });
      if (report.passEnded) break;
    }
    const minutes = runs.length * KEY_ADMIN.sweepEveryMinutes;
    expect({ runs: runs.length, passEnded: runs.at(-1)!.passEnded, orphansLeft: orphans.filter((o) => live.has(o)), liveKeys: live.size }).toEqual({
      runs: Math.ceil(PLAN_KEYS / (500 * SWEEP_PAGES_PER_RUN)),
      passEnded: true,
      orphansLeft: [],
      liveKeys: PLAN_KEYS - orphans.length,
    });
    expect(minutes).toBeLessThan(60);
    for (const r of runs) {
      expect(r.calls).toBeLessThan(CALLS_IN_ONE_INVOCATION / 10);
      expect(r.apiGateway).toBeLessThanOrEqual(API_GATEWAY_BURST);
    }
    // The next run starts the next pass from the first page.
    now += KEY_ADMIN.sweepEveryMinutes * 60_000;
    timed.reset();
    const next = (await keyAdmin({ task: 'sweep' })) as Extract<KeyTaskResult, { task: 'sweep' }>;
    expect({ pages: next.pages, checked: next.checked, deleted: next.deleted }).toEqual({ pages: SWEEP_PAGES_PER_RUN, checked: SWEEP_PAGES_PER_RUN * 500, deleted: [] });
    process.stdout.write(`sweep of ${PLAN_KEYS} plan keys: ${runs.length} runs (${minutes} minutes), ${runs.map((r) => `${r.pages} pages, ${r.calls} DynamoDB calls, ${r.apiGateway} API Gateway calls`).join('; ')}\n`);
  }, 300_000);
});
