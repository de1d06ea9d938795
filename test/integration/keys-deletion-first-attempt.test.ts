/**
 * A user's deletion makes their keys answer 401 from its first attempt on,
 * whatever fails after (issue 57, item 3): the real ingest applies the
 * `user.deleted` while the close of the user's keys cannot run, and the real
 * authorizer (its Lambda handler, over the table) answers every key of hers
 * 401 from the first delivery on, before any key item is touched, because
 * it reads her user item, a tombstone from that delivery on.
 *
 * What fails after, each on every delivery of the test:
 * - Lambda refuses the key closer's invoke (429, the account's concurrency
 *   used up): a throttle, so the record is sent again as a new message,
 *   delayed, and none of its receives is used;
 * - the key-management function fails (a refusal that is not a throttle:
 *   AccessDenied on a plan key): the record fails, SQS delivers it again.
 *
 * Meanwhile her keys can be revoked by hand (the record is there; the
 * tombstone no longer makes the key manager answer UNKNOWN_USER), and once
 * the close has run they are ALREADY_REVOKED.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import type { Context } from 'aws-lambda';
import { fixedClock } from '../../lambdas/core/clock.js';
import { configSchema } from '../../lambdas/core/config.js';
import { build as buildAuthorizer } from '../../lambdas/handlers/authorizer.js';
import { createDeps } from '../../lambdas/http/deps.js';
import { THROTTLES_ATTRIBUTE, buildIngest } from '../../lambdas/ingest/handler.js';
import { KeyCloseFailed, closeOutcome } from '../../lambdas/ingest/key-closer.js';
import { buildKeyAdminFunction } from '../../lambdas/key-admin/handler.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { userKeysCloser } from '../../lambdas/store/keys/user-keys.js';
import { authorizerEvent, sqsEvent } from '../support/events.js';
import { KEYS, demoDataset } from '../support/fixtures.js';
import { useTestStores, type TestStore } from '../support/store.js';
import { recordingLogger, recordingMetrics } from '../support/telemetry.js';

const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

const T = '2026-11-21T12:00:00.000Z';
const clock = fixedClock(T);
const context = { awsRequestId: 'r', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
const deletion = JSON.stringify({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });

/** The authorizer's Lambda handler over the test's table: 401 (Unauthorized) or its policy's effect. */
async function answerOf(key: string): Promise<string> {
  const config = configSchema.parse({ tableName: store.tableName, serviceName: 'events', siteUrl: 'https://example.org', userEventsVariant: 'typed' });
  const authorizer = buildAuthorizer(createDeps(config, { keys: store.repository, clock, logger: recordingLogger() }));
  return authorizer(authorizerEvent({ headers: { 'x-events-api-key': key } }), context).then(
    (r) => String(r.policyDocument.Statement[0]!.Effect),
    (e: Error) => (e.message === 'Unauthorized' ? '401' : e.message),
  );
}

const failures: [string, () => never, { resent: boolean }][] = [
  [
    "Lambda refusing the invoke (the account's concurrency used up: a throttle)",
    () => {
      throw new KeyCloseFailed("closing usr_alice's keys: Lambda refused the invoke (TooManyRequestsException): Rate Exceeded.", { throttling: true });
    },
    { resent: true },
  ],
  [
    'the key-management function failing (AccessDenied on a plan key: not a throttle)',
    () => {
      throw new KeyCloseFailed("closing usr_alice's keys failed in the key-management function (Unhandled): AccessDeniedException");
    },
    { resent: false },
  ],
];

describe.each(failures)("alice's deletion while its key close fails: %s", (_name, fail, { resent }) => {
  it('answers 401 for every key of hers from the first delivery on, lets her keys be revoked by hand meanwhile, and closes them once the close runs', async () => {
    const mgr = new KeyManager(store.client, store.tableName, { clock });
    const { key, info } = await mgr.create({ userId: 'usr_alice', name: 'Integration' });
    const second = await mgr.create({ userId: 'usr_alice', name: 'Laptop' });
    expect(await Promise.all([key, KEYS.both].map(answerOf))).toEqual(['Allow', 'Allow']);

    let closing = false;
    const inProcess = userKeysCloser(store.client, store.tableName, { clock });
    const closeUserKeys = async (userId: string, version: number) => (closing ? inProcess(userId, version) : fail());
    const sent: { body: string; again?: { delaySeconds: number; throttles: number } }[] = [];
    const ingest = buildIngest({ client: store.client, tableName: store.tableName, logger: recordingLogger(), metrics: recordingMetrics(), clock, continueLater: async (body, again) => void sent.push({ body, ...(again ? { again } : {}) }), retryIn: async () => undefined, closeUserKeys });

    // Three deliveries while the close cannot run: each a new message after a throttle, the same message otherwise.
    for (let delivery = 1; delivery <= 3; delivery++) {
      const event = sqsEvent([deletion]);
      const last = sent.at(-1)?.again;
      if (resent && last) event.Records[0]!.messageAttributes = { [THROTTLES_ATTRIBUTE]: { stringValue: String(last.throttles), dataType: 'Number', stringListValues: [], binaryListValues: [] } };
      else event.Records[0]!.attributes.ApproximateReceiveCount = String(delivery);
      const out = await ingest(event, context);
      expect(out.batchItemFailures).toEqual(resent ? [] : [{ itemIdentifier: 'm0' }]);
      // From the first delivery on: every key of hers, made or seeded, answers 401, her records untouched meanwhile.
      expect(await Promise.all([key, second.key, KEYS.both, KEYS.eventsOnly].map(answerOf))).toEqual(['401', '401', '401', '401']);
      expect((await mgr.store.record('usr_alice', info.keyId))?.revoked).toBe(false);
    }
    expect(sent.map((s) => s.again?.throttles)).toEqual(resent ? [1, 2, 3] : []);
    // Revoking by hand works meanwhile (the tombstone is written, her records are there).
    expect((await mgr.revoke('usr_alice', info.keyId)).revoked).toBe(true);

    // The close runs at the next delivery: every key closed; a revoke now says so.
    closing = true;
    expect((await ingest(sqsEvent([deletion]), context)).batchItemFailures).toEqual([]);
    expect(await mgr.revoke('usr_alice', second.info.keyId).then(() => 'revoked', (e: { code?: string }) => e.code)).toBe('ALREADY_REVOKED');
    expect(await mgr.listAll('usr_alice').then(() => 'listed', (e: { code?: string }) => e.code)).toBe('UNKNOWN_USER');
    expect(await Promise.all([key, second.key, KEYS.both].map(answerOf))).toEqual(['401', '401', '401']);
  });
});

it("a key whose user the table does not hold, or holds deleted, answers 401; a live user's answers", async () => {
  const mgr = new KeyManager(store.client, store.tableName, { clock });
  const { key } = await mgr.create({ userId: 'usr_bob', name: 'Bob' });
  expect(await answerOf(key)).toBe('Allow');
  expect(await store.repository.isLiveUser('usr_bob')).toBe(true);
  expect(await store.repository.isLiveUser('usr_nobody')).toBe(false);
  await buildIngest({ client: store.client, tableName: store.tableName, logger: recordingLogger(), metrics: recordingMetrics(), clock, continueLater: async () => undefined }).call(null, sqsEvent([JSON.stringify({ type: 'user.deleted', version: 5, user_id: 'usr_bob' })]), context);
  expect(await store.repository.isLiveUser('usr_bob')).toBe(false);
  expect(await answerOf(key)).toBe('401');
});

it("API Gateway throttling the plan keys' deletion inside the close: the task answers throttled (no function error), the record is sent again, and applies once the throttle ends", async () => {
  let throttled = 3;
  const removed: string[] = [];
  const planKeys = {
    create: async (keyId: string) => `apikey-${keyId}`,
    attach: async () => undefined,
    remove: async (id: string) => {
      // API Gateway's refusal past its fixed rate for managing keys (DeleteApiKey: 5 a second per account).
      if (throttled-- > 0) throw Object.assign(new Error('Too Many Requests'), { name: 'TooManyRequestsException', $metadata: { httpStatusCode: 429 } });
      removed.push(id);
    },
  };
  const mgr = new KeyManager(store.client, store.tableName, { clock, planKeys });
  const { key } = await mgr.create({ userId: 'usr_alice', name: 'AWS key' });
  const logger = recordingLogger();
  const keyAdmin = buildKeyAdminFunction({ manager: new KeyManager(store.client, store.tableName, { clock, planKeys }), logger, metrics: recordingMetrics() });
  const answers: unknown[] = [];
  const closeUserKeys = async (userId: string, version: number) => {
    const answer = await keyAdmin({ task: 'close', userId, version });
    answers.push(answer);
    return closeOutcome(userId, answer);
  };
  const sent: string[] = [];
  const ingest = buildIngest({ client: store.client, tableName: store.tableName, logger: recordingLogger(), metrics: recordingMetrics(), clock, continueLater: async (body) => void sent.push(body), closeUserKeys });
  for (let delivery = 1; delivery <= 3; delivery++) {
    expect((await ingest(sqsEvent([deletion]), context)).batchItemFailures).toEqual([]);
    expect(await answerOf(key)).toBe('401');
  }
  expect(sent).toHaveLength(3);
  expect(answers).toEqual([0, 1, 2].map(() => expect.objectContaining({ task: 'close', done: false, throttled: true })));
  expect(logger.entries.filter((l) => l.message === 'User keys close throttled; the ingest calls again later')).toHaveLength(3);
  expect((await ingest(sqsEvent([deletion]), context)).batchItemFailures).toEqual([]);
  expect(sent).toHaveLength(3);
  expect(answers.at(-1)).toMatchObject({ task: 'close', done: true });
  expect(removed).toEqual([expect.stringMatching(/^apikey-key_/)]);
});
