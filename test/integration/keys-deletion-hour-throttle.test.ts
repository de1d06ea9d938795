/**
 * Review fault r2: a throttle that lasts longer than the backoff schedule
 * dead-letters the change, and nothing delivers it again: a user deleted
 * while the key-management function is throttled for an hour keeps working
 * keys after the throttle is over.
 *
 * The schedule (lambdas/core/retry-backoff.ts): a throttled record comes back
 * after 2 s, 4 s, ... 256 s, then 300 s, each drawn between half and all of
 * it; the queue's maxReceiveCount is WAITING_RECEIVES (17). The 17th delivery
 * is the last: it comes at most 2 + 4 + ... + 256 + 8 x 300 = 2,910 s (48.5
 * min) after the first, at least 1,455 s (24 min) with the jitter at its
 * least; the next receive moves the record to the dead-letter queue. So a
 * throttle of 24 to 48 minutes or longer dead-letters every record it meets.
 *
 * What the docs promise instead: operations.md (ChangeLag) "every record
 * applies at its first delivery after the throttle ends, within at most
 * 300 s"; the keys bullet "A throttled invoke (the account's concurrency used
 * up) backs off as a DynamoDB throttle does"; managing-keys.md "A deleted
 * user: every key of theirs answers 401 from the deletion on". The
 * IngestDeadLetters row says records dead-letter when "invalid, or waiting
 * for a user or event that never came": not after a throttle, so the throttle
 * alarms clear (ChangeLag, TableThrottles) while the deletion sits in the DLQ
 * and the user's keys keep authenticating until someone redrives it by hand.
 *
 * Worse, the user's tombstone was written before the close was invoked
 * (settle.ts closes the keys in the tombstone's settle), so while the record
 * waits in the DLQ the key-management API and `npm run keys` answer every
 * revoke of those keys `404 UNKNOWN_USER`: the keys authenticate and cannot be
 * revoked. The DLQ keeps a message 14 days from its FIRST send (a standard
 * queue's DLQ keeps the original enqueue timestamp; lib/ingest.ts gives both
 * queues 14 days): not redriven by then, the deletion is lost for good.
 *
 * Here: the real ingest handler, the real key closer (lambdas/ingest/key-closer.ts,
 * the AWS SDK's Lambda client) against a stand-in of Lambda's Invoke API that
 * answers 429 TooManyRequestsException (the account's concurrency used up)
 * for the first hour and runs the real key-management function's close task
 * after; SQS played as it behaves (scripts/throttle-burst.ts playQueue) with
 * its maxReceiveCount; the jitter at its most (the longest schedule).
 *
 * Adopted from the review's reproducer (issue 57, r2). One change of
 * interface: a throttled record is now sent to the queue again as a new
 * message, delayed by its backoff (lambdas/ingest/handler.ts), so the queue's
 * model takes what the ingest sends (scripts/throttle-burst.ts, queueSends)
 * instead of dropping it. The fixes: a throttle (here Lambda's, on the key
 * closer's invoke) uses up none of a record's receives, however long it
 * lasts; a deleted user's key can be revoked by hand while its close waits
 * (and is ALREADY_REVOKED once it ran); the authorizer refuses a key whose
 * user is deleted from the tombstone on (keys-deletion-first-attempt.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WAITING_RECEIVES, throttleVisibility } from '../../lambdas/core/retry-backoff.js';
import { buildKeyAdminFunction } from '../../lambdas/key-admin/handler.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { buildIngest } from '../../lambdas/ingest/handler.js';
import { invokeKeyCloser } from '../../lambdas/ingest/key-closer.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { playQueue, queueSends } from '../../scripts/throttle-burst.js';
import { directClient } from '../support/direct-dynalite.js';
import type { InProcessStore } from '../support/in-process-dynalite.js';
import { demoStore } from '../support/invocation-budget.js';
import { authenticates } from '../support/keys.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';

const TABLE = 'hour-throttle';
const ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:KeyAdminFunction';
const START = Date.parse('2026-11-21T12:00:00.000Z');
const HOUR = 3_600_000;

let store: InProcessStore;
let lambda: Server;
let endpoint: string;
let now = START;
let throttled = true;
let keyAdmin: ReturnType<typeof buildKeyAdminFunction>;
const invokes: string[] = [];

beforeAll(async () => {
  store = await demoStore(TABLE);
  keyAdmin = buildKeyAdminFunction({ manager: new KeyManager(directClient(store.call), TABLE, { clock: () => new Date(now) }), logger: recordingLogger(), metrics: recordingMetrics() });
  // Lambda's Invoke API: 429 while the account's concurrency is used up, else the function's answer.
  lambda = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      if (throttled) {
        invokes.push(`${(now - START) / 1000}s 429`);
        res.writeHead(429, { 'content-type': 'application/json', 'x-amzn-errortype': 'TooManyRequestsException:' });
        res.end('{"Reason":"ConcurrentInvocationLimitExceeded","Type":"User","message":"Rate Exceeded."}');
        return;
      }
      void keyAdmin(JSON.parse(body)).then(
        (out) => {
          invokes.push(`${(now - START) / 1000}s 200`);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(out));
        },
        (error: Error) => {
          res.writeHead(200, { 'content-type': 'application/json', 'x-amz-function-error': 'Unhandled' });
          res.end(JSON.stringify({ errorType: error.name, errorMessage: error.message }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => lambda.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(lambda.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => lambda?.close(() => resolve()));
  await store?.close();
});

describe("a user's deletion while the key-management function is throttled for an hour", () => {
  it('applies at its first delivery after the throttle: the deleted user\'s key answers 401', async () => {
    const clock = () => new Date(now);
    const repository = new DynamoRepository(directClient(store.call), TABLE);
    const mgr = new KeyManager(directClient(store.call), TABLE, { clock });
    const { key, info } = await mgr.create({ userId: 'usr_alice', name: 'Website' });
    expect(await authenticates(repository, key)).toBe(true);

    // The longest schedule the jitter allows still ends before the hour does.
    let last = 0;
    for (let n = 1; n < WAITING_RECEIVES; n++) last += throttleVisibility(n, () => 0.999);
    expect(last).toBe(2_910);

    // The SDK's retries collapsed into one attempt: what reaches the ingest is the throttle after them.
    const closeUserKeys = invokeKeyCloser(ARN, { region: 'eu-west-1', endpoint, maxAttempts: 1, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });
    const visibility = new Map<string, number>();
    const sends = queueSends();
    const ingest = buildIngest({
      client: directClient(store.call),
      tableName: TABLE,
      logger: recordingLogger(),
      metrics: recordingMetrics(),
      clock,
      continueLater: sends.continueLater,
      retryIn: async (handle, seconds) => void visibility.set(handle, seconds),
      random: () => 0.999,
      closeUserKeys,
    });
    const windowEnds = START + HOUR;
    const outcome = await playQueue({
      bodies: [JSON.stringify({ type: 'user.deleted', version: 1000, user_id: 'usr_alice', occurred_at: new Date(START).toISOString() })],
      start: START,
      spacingMs: 1000,
      windowEnds,
      ingest,
      visibility,
      sends,
      setNow: (t) => void (now = t),
      tick: (t) => void (t >= windowEnds && (throttled = false)),
      maxReceives: WAITING_RECEIVES,
    }).then(
      () => 'applied',
      (e: Error) => e.message,
    );
    // The throttle is over: a request with the deleted user's key, an hour and a half after her deletion.
    now = START + 1.5 * HOUR;
    throttled = false;
    // And while the deletion waits in the dead-letter queue, nobody can revoke the key that still works: the user's
    // tombstone is written (before the close), so the key-management API and `npm run keys` answer UNKNOWN_USER.
    const revokeByHand = await mgr.revoke('usr_alice', info.keyId).then(() => 'revoked', (e: { code?: string }) => e.code);
    expect({ outcome, keyAfterTheThrottle: (await authenticates(repository, key)) ? 'authenticates' : '401', lastInvoke: invokes.at(-1), revokeByHand }).toEqual({
      outcome: 'applied',
      keyAfterTheThrottle: '401',
      lastInvoke: expect.stringMatching(/ 200$/),
      revokeByHand: 'ALREADY_REVOKED',
    });
  }, 120_000);
});
