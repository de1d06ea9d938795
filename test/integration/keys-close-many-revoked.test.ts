/**
 * Review fault r3: a user who has revoked many keys can never be deleted.
 *
 * In AWS a user's deletion closes their keys in the key-management function
 * (lambdas/key-admin/tasks.ts `close`, lambdas/store/keys/user-keys.ts
 * closeUserKeys), which runs under that function's 6 s timeout (lib/key-admin.ts
 * passes no timeoutSeconds: RouteFunction's default). closeUserKeys retires
 * EVERY record of the user, one after another, then erases every one:
 *
 *   for (const keyId of ids) await store.retire(...)   // ids: holders + every non-erased record
 *   for (const keyId of ids) await store.erase(...)
 *
 * A revoked key's record is never erased by its revoke (only a deletion, a
 * takeover or a failed create erases), so it stays a non-erased record for
 * good, and a user can revoke up to 10 keys a day (10 creates a day, each
 * revocable). Retiring a record already revoked writes nothing durable but
 * costs 3 sequential calls (the record's GetItem, the authorizer item's
 * UpdateItem, the slot record's GetItem in releaseSlot); no erase runs until
 * every retire has. So once 3 x (revoked records) calls outlast the timeout,
 * every attempt spends its whole 6 s re-retiring revoked records and ends
 * before its first erase: no attempt makes progress, the close fails every
 * time (a timeout is a FunctionError: `failed`, back after the queue's
 * 720 s), the user's tombstone stays pending, the cascade never runs, and the
 * record goes to the dead-letter queue; its redrive fails the same way.
 * Meanwhile the deleted user's events stay public on every read route and
 * feed, their RSVPs listed, and the user id cannot be re-created (every
 * change of the user settles the pending tombstone first).
 *
 * The budget here: 3,000 sequential DynamoDB calls for one invocation, i.e. a
 * 2 ms round trip (a consistent GetItem or UpdateItem from Lambda through the
 * SDK takes more: DynamoDB's "single-digit milliseconds" plus the SDK's own
 * steps), so the function's 6 s is cut at that call as Lambda cuts it. The user
 * revoked 1,100 keys (10 created and revoked a day, 110 days): at 2 ms a call
 * the retire loop alone is 3,300 calls, 6.6 s. At a more usual 4 ms a call,
 * 500 revoked keys (50 days of rotation) already wedge it.
 *
 * Adopted from the review's reproducer (issue 57, r3). One change of
 * interface: the close task is now bounded per invocation and answers
 * whether it is done (lambdas/key-admin/tasks.ts), so the stand-in for
 * invokeKeyCloser hands that answer on as the real one does (closeOutcome)
 * and the settle invokes the task again until it is done; and the queue's
 * model takes what the ingest sends again (a throttled record is a new
 * message now: scripts/throttle-burst.ts, queueSends). The fix: each
 * invocation closes at most CLOSE_KEYS_PER_CALL keys, each retired then
 * erased before the next, so the next invocation starts where the erased
 * records say.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context, SQSEvent, SQSBatchResponse } from 'aws-lambda';
import { WAITING_RECEIVES } from '../../lambdas/core/retry-backoff.js';
import { buildKeyAdminFunction } from '../../lambdas/key-admin/handler.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { KeyCloseFailed, closeOutcome } from '../../lambdas/ingest/key-closer.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { playQueue, queueSends } from '../../scripts/throttle-burst.js';
import { directClient } from '../support/direct-dynalite.js';
import type { InProcessStore } from '../support/in-process-dynalite.js';
import { budgetedClient, demoStore } from '../support/invocation-budget.js';
import { authenticates } from '../support/keys.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';

const TABLE = 'close-wedge';
const DAY = 86_400_000;
/** Sequential calls that fit the key-management function's 6 s at 2 ms a call. */
const CALLS_IN_ONE_INVOCATION = 3_000;
const REVOKED = 1_100;

let store: InProcessStore;
beforeAll(async () => {
  store = await demoStore(TABLE);
});
afterAll(async () => store?.close());

describe("a deletion of a user who rotated keys for a few months, closed by the key-management function's close task", () => {
  it('applies within the queue\'s deliveries: the user\'s keys closed, the cascade run, her events no longer public', async () => {
    // 110 days of rotation through the key manager: each day 10 keys created and revoked (the daily bound's most).
    let now = Date.parse('2026-08-01T09:00:00.000Z');
    const clock = () => new Date(now);
    const mgr = new KeyManager(directClient(store.call), TABLE, { clock });
    for (let i = 0; i < REVOKED; i++) {
      if (i > 0 && i % 10 === 0) now += DAY;
      const { info } = await mgr.create({ userId: 'usr_alice', name: `rotated ${i}` });
      await mgr.revoke('usr_alice', info.keyId);
    }
    now = Date.parse('2026-11-21T12:00:00.000Z');
    const { key: current } = await mgr.create({ userId: 'usr_alice', name: 'current' });
    const repository = new DynamoRepository(directClient(store.call), TABLE);
    expect(await authenticates(repository, current)).toBe(true);
    expect(await repository.getPublicEvent('evt_jazz01')).not.toBeNull();

    // The key-management function: its DynamoDB calls of one invocation cut at the timeout, as Lambda cuts it.
    const timed = budgetedClient(store, CALLS_IN_ONE_INVOCATION, 'Task timed out after 6.00 seconds');
    const calls = timed.calls;
    const keyAdmin = buildKeyAdminFunction({ manager: new KeyManager(timed.client, TABLE, { clock }), logger: recordingLogger(), metrics: recordingMetrics() });
    const invocations: string[] = [];
    // What invokeKeyCloser does with a FunctionError (a timeout is one): the change fails.
    const closeUserKeys = async (userId: string, version: number) => {
      timed.reset();
      try {
        const answer = await keyAdmin({ task: 'close', userId, version });
        invocations.push('ok');
        // What invokeKeyCloser does with the task's answer: done, or invoke again (a bounded close).
        return closeOutcome(userId, answer);
      } catch (error) {
        invocations.push(`timed out after ${calls() - 1} calls`);
        throw new KeyCloseFailed(`closing ${userId}'s keys failed in the key-management function (Unhandled): ${String(error)}`);
      }
    };
    const sends = queueSends();
    const ingest = buildIngest({ client: directClient(store.call), tableName: TABLE, logger: recordingLogger(), metrics: recordingMetrics(), clock, continueLater: sends.continueLater, retryIn: async () => undefined, closeUserKeys });

    // SQS as it behaves (a failed record comes back after the queue's 720 s), up to the queue's maxReceiveCount.
    const outcome = await playQueue({
      bodies: [JSON.stringify({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' })],
      start: now,
      spacingMs: 1000,
      windowEnds: now,
      ingest: ingest as (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>,
      visibility: new Map(),
      sends,
      setNow: (t) => void (now = t),
      tick: () => undefined,
      maxReceives: WAITING_RECEIVES,
    }).then(
      () => 'applied',
      (e: Error) => e.message,
    );

    expect({
      outcome,
      currentKey: (await authenticates(repository, current)) ? 'authenticates' : '401',
      // The deleted user's event, still public and still naming her (username, image) as its host.
      herEvent: (await repository.getPublicEvent('evt_jazz01')) ? `public, hosted by ${(await repository.getPublicEvent('evt_jazz01'))!.creator.username}` : 'gone',
      lastInvocation: invocations.at(-1),
    }).toEqual({ outcome: 'applied', currentKey: '401', herEvent: 'gone', lastInvocation: 'ok' });
  }, 300_000);
});
