/**
 * The largest user's deletion (issue 57, item 4): 10,000 revoked keys (a
 * thousand days of the daily bound's rotation, or an integration that
 * rotated keys for years) and one live key, deleted through the real ingest
 * and the key-management function's close task, each invocation of that
 * function held to a budget of 3,000 DynamoDB calls (its 6 s at 2 ms a call:
 * a call past it fails the invocation, as Lambda's timeout cuts it) and the
 * ingest's invocations to their 120 s on a modelled clock (each close
 * invocation costs its calls at 2 ms plus 50 ms of Lambda's own; SQS played
 * as it behaves: scripts/throttle-burst.ts).
 *
 * Held: the deletion applies (the user's events gone, every record erased,
 * every key 401) without a single invocation cut off; every invocation
 * stays within CLOSE_CALLS_PER_CALL (about 600 calls, far inside the
 * budget) whatever it meets, and does about the same work as the first
 * (no call walks again what an earlier one closed: the progress item); the
 * live keys are closed in the first invocation (the holders first), and
 * theirs are the only audit lines the deletion writes (the revoked ones had
 * theirs); nothing of the close is left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { hashApiKey } from '../../lambdas/core/api-key.js';
import { WAITING_RECEIVES } from '../../lambdas/core/retry-backoff.js';
import { buildKeyAdminFunction } from '../../lambdas/key-admin/handler.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { closeOutcome } from '../../lambdas/ingest/key-closer.js';
import { CLOSE_CALLS_PER_CALL } from '../../lambdas/store/keys/user-keys.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { batchWriteAll } from '../../lambdas/store/table/batch-write.js';
import { keys } from '../../lambdas/store/table/table.js';
import { playQueue, queueSends } from '../../scripts/throttle-burst.js';
import { directClient } from '../support/direct-dynalite.js';
import type { InProcessStore } from '../support/in-process-dynalite.js';
import { budgetedClient, demoStore } from '../support/invocation-budget.js';
import { authenticates } from '../support/keys.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';

const TABLE = 'close-bounded';
const REVOKED = 10_000;
/** Sequential calls that fit the key-management function's 6 s at 2 ms a call. */
const CALLS_IN_ONE_INVOCATION = 3_000;
const MS_PER_CALL = 2;
const LAMBDA_OVERHEAD_MS = 50;
const INGEST_TIMEOUT_MS = 120_000;
const T = Date.parse('2026-11-21T12:00:00.000Z');

let store: InProcessStore;
beforeAll(async () => {
  store = await demoStore(TABLE);
});
afterAll(async () => store?.close());

describe('a user with 10,000 revoked keys, deleted', () => {
  it('is deleted within the queue\'s deliveries, each invocation of the close within its bound and far inside its timeout', async () => {
    const client = directClient(store.call);
    const clock = () => new Date(T);
    const mgr = new KeyManager(client, TABLE, { clock });
    const { key: live } = await mgr.create({ userId: 'usr_alice', name: 'current' });
    // Hers from the demo dataset too: each live key revoked by the deletion has its line.
    const liveKeys = (await mgr.store.records('usr_alice')).filter((r) => !r.revoked).length;
    // 10,000 revoked keys as a revoke leaves them (record revoked and audited, authorizer item revoked), older than the live one.
    const seeded: Record<string, unknown>[] = [];
    const revokedKeys: string[] = [];
    for (let i = 0; i < REVOKED; i++) {
      const keyId = `key_0000${String(i).padStart(16, '0')}`;
      const key = `pk_revoked${String(i).padStart(32, '0')}`;
      revokedKeys.push(key);
      const hash = hashApiKey(key);
      seeded.push(
        { ...keys.keyRecord('usr_alice', keyId), type: 'KEY_RECORD', key_id: keyId, key_hash: hash, user_id: 'usr_alice', name: `rotated ${i}`, scopes: ['events:read'], created_at: '2024-01-01T00:00:00.000Z', revoked: true, revoked_at: '2024-01-02T00:00:00.000Z', revoke_id: `r${i}`, revoked_by: 'revoke', audited: `a${i}`, confirmed: true, user_version: 0 },
        { ...keys.apiKey(hash), type: 'API_KEY', key_id: keyId, revoked: true, revoked_at: '2024-01-02T00:00:00.000Z' },
      );
    }
    await batchWriteAll(client, TABLE, seeded);
    const repository = new DynamoRepository(client, TABLE);
    expect(await authenticates(repository, live)).toBe(true);

    // The key-management function: its calls counted per invocation, cut past the budget as Lambda's timeout cuts it.
    const timed = budgetedClient(store, CALLS_IN_ONE_INVOCATION, 'Task timed out after 6.00 seconds');
    const calls = timed.calls;
    const logger = recordingLogger();
    const keyAdmin = buildKeyAdminFunction({ manager: new KeyManager(timed.client, TABLE, { clock }), logger, metrics: recordingMetrics() });
    const perInvocation: number[] = [];
    let linesAfterFirst = 0;
    /** The ingest's clock inside one delivery: each close invocation spends its calls' time and Lambda's. */
    let ingestSpent = 0;
    const closeUserKeys = async (userId: string, version: number) => {
      timed.reset();
      const answer = await keyAdmin({ task: 'close', userId, version });
      perInvocation.push(calls());
      if (perInvocation.length === 1) linesAfterFirst = logger.entries.filter((l) => l.message === 'Key revoked').length;
      ingestSpent += calls() * MS_PER_CALL + LAMBDA_OVERHEAD_MS;
      return closeOutcome(userId, answer);
    };
    const sends = queueSends();
    const ingest = buildIngest({ client, tableName: TABLE, logger: recordingLogger(), metrics: recordingMetrics(), clock, continueLater: sends.continueLater, closeUserKeys });
    const deliveries: number[] = [];
    const timedIngest = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
      ingestSpent = 0;
      deliveries.push(perInvocation.length);
      return ingest(event, { ...context, getRemainingTimeInMillis: () => INGEST_TIMEOUT_MS - ingestSpent });
    };
    let now = T;
    const outcome = await playQueue({
      bodies: [JSON.stringify({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' })],
      start: now,
      spacingMs: 1000,
      windowEnds: now,
      ingest: timedIngest,
      visibility: new Map(),
      sends,
      setNow: (t) => void (now = t),
      tick: () => undefined,
      maxReceives: WAITING_RECEIVES,
    }).then(
      (run) => `applied after ${run.messages[0]!.deliveries} deliveries`,
      (e: Error) => e.message,
    );

    const items = ((await client.send(new ScanCommand({ TableName: TABLE, ConsistentRead: true }))).Items ?? []) as Record<string, unknown>[];
    const aliceKeys = items.filter((i) => String(i.pk) === 'USERKEYS#usr_alice');
    const sample = revokedKeys.filter((_, i) => i % 1000 === 0);
    expect({
      outcome: outcome.startsWith('applied') ? 'applied' : outcome,
      liveKey: (await authenticates(repository, live)) ? 'authenticates' : '401',
      revokedKeys: (await Promise.all(sample.map((k) => authenticates(repository, k)))).some(Boolean) ? 'one authenticates' : '401',
      herEvent: (await repository.getPublicEvent('evt_jazz01')) ? 'public' : 'gone',
      records: aliceKeys.filter((i) => i.type === 'KEY_RECORD').every((i) => i.erased === true && Object.keys(i).length === 6) ? 'all erased, ids only' : 'not all erased',
      closeProgressLeft: aliceKeys.filter((i) => i.type === 'KEY_CLOSE').length,
      auditLines: logger.entries.filter((l) => l.message === 'Key revoked').length,
    }).toEqual({ outcome: 'applied', liveKey: '401', revokedKeys: '401', herEvent: 'gone', records: 'all erased, ids only', closeProgressLeft: 0, auditLines: liveKeys });
    // Every invocation within the bound (the bound counts a key's close at its most, plus the walk's reads), far inside the budget.
    expect(Math.max(...perInvocation)).toBeLessThanOrEqual(CLOSE_CALLS_PER_CALL + 20);
    // Each goes on where the last stopped: the last invocations cost what the first did, not more (no walk over what is closed).
    const full = perInvocation.slice(1, -1);
    expect(Math.max(...full) - Math.min(...full)).toBeLessThanOrEqual(20);
    // The holders first: the first invocation closed every live key (their lines are written then).
    expect(linesAfterFirst).toBe(liveKeys);
    process.stdout.write(
      `${REVOKED} revoked keys and 1 live one: ${perInvocation.length} invocations of the close (at most ${Math.max(...perInvocation)} calls each, ${perInvocation.reduce((a, b) => a + b, 0)} in all), over ${deliveries.length} ingest deliveries (${outcome})\n`,
    );
  }, 600_000);
});
