/**
 * Every delete, closing and disable of a webhook is on the audit trail once
 * (PRODUCT P18: "every disable has an audit line with user, key and webhook
 * ids"; issue 60 item 1: every disable and delete), whatever fails on the
 * way. Each is swept: every DynamoDB call of the operation in turn (as
 * FAULT_POINTS says: every call here, the first of each kind on the second
 * store) fails before landing, lands and then fails (a call cut off, a
 * Lambda timed out), or lands and loses its answer (the SDK sends it
 * again); then the operation is retried as its caller would (the web
 * product retrying a 5xx, the queue redelivering a wake-up). Each ends with
 * exactly one line naming the user, the key and the webhook, the webhook
 * in its final state, and nothing more to deliver.
 *
 * - delete: through the key-management handler (its audit names the IAM caller);
 * - closing: a key's revoke through the handler closes its two webhooks;
 * - disable: a delivery answered 410, run by the delivery's own code.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../../lambdas/core/changes.js';
import { feedScopes } from '../../lambdas/core/feed-cursor.js';
import { runWebhook, type DeliveryDeps } from '../../lambdas/delivery/deliver.js';
import { buildKeyAdmin, type KeyAdminHandler } from '../../lambdas/key-admin/handler.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { WebhookManager } from '../../lambdas/key-admin/webhook-manager.js';
import type { LogFields } from '../../lambdas/http/logger.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { DeliveryState } from '../../lambdas/store/webhooks/delivery-state.js';
import { localSecretBox } from '../../lambdas/store/webhooks/secret-box.js';
import { webhookKeys, type WebhookItem } from '../../lambdas/store/webhooks/webhook-items.js';
import { WebhookRecords } from '../../lambdas/store/webhooks/webhook-records.js';
import { callKind, faultPoints } from '../support/fault-points.js';
import { testKeyring } from '../support/feed-keys.js';
import { demoDataset } from '../support/fixtures.js';
import { CALLER, keyAdminEvent as event, type LoggedLine } from '../support/key-admin-handler.js';
import { loseResponse } from '../support/lost-response.js';
import { useTestStores, type TestStore } from '../support/store.js';

const stores = useTestStores(demoDataset);
let store: TestStore;
beforeEach(() => {
  store = stores();
});

type Mode = 'fails' | 'cut' | 'lost';
const MODES: Mode[] = ['fails', 'cut', 'lost'];

/** Faults on the store's client: while armed, its `at`-th call (counted from arming) fails as `mode` says; `kinds` lists the calls seen. */
function faults(client: DynamoDBDocumentClient) {
  const f = { armed: false, at: 0, mode: 'fails' as Mode, count: 0, kinds: [] as string[], loseNext: false };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!f.armed) return next(args);
      const n = ++f.count;
      f.kinds.push(callKind(context.commandName ?? '', args.input as Record<string, unknown>));
      if (n !== f.at) return next(args);
      if (f.mode === 'fails') throw new Error('failed before landing');
      if (f.mode === 'lost') {
        f.loseNext = true;
        return next(args);
      }
      await next(args);
      throw new Error('cut off after landing');
    },
    { step: 'initialize', name: 'audit-sweep-faults' },
  );
  // Inside the SDK's retries: the request has landed, its answer is dropped, and the SDK sends it again.
  client.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      if (f.loseNext) {
        f.loseNext = false;
        loseResponse(out);
      }
      return out;
    },
    { step: 'deserialize', name: 'audit-sweep-lose' },
  );
  return {
    state: f,
    arm(at: number, mode: Mode) {
      Object.assign(f, { armed: true, at, mode, count: 0, kinds: [], loseNext: false });
    },
    disarm: () => void (f.armed = false),
  };
}

/** The key-management function and the delivery on the store, one clock the test moves, every line they log. */
function world() {
  let now = Date.parse('2026-11-21T12:00:00.000Z');
  const clock = () => new Date(now);
  const lines: LoggedLine[] = [];
  const published: { dimensions: Record<string, string>; values: readonly { name: string }[] }[] = [];
  const log = (level: string) => (message: string, ...fields: LogFields[]) => void lines.push({ level, message, fields: Object.assign({}, ...fields) as LogFields });
  const logger = { debug: log('DEBUG'), info: log('INFO'), warn: log('WARN'), error: log('ERROR') };
  const metrics = { publish: (dimensions: Record<string, string>, values: readonly { name: string }[]) => void published.push({ dimensions: { ...dimensions }, values }) };
  const secrets = localSecretBox();
  const keys = new KeyManager(store.client, store.tableName, { clock });
  const webhooks = new WebhookManager({
    client: store.client,
    tableName: store.tableName,
    keys: keys.store,
    feeds: store.repository,
    events: store.repository,
    keyring: testKeyring,
    secrets,
    // Not what this file is about (the guard's own tests and the e2e ones are): every URL passes.
    checkUrl: async () => ({ ok: true }),
    nudge: async () => undefined,
    siteUrl: 'https://events.example.com',
    clock,
  });
  const handler: KeyAdminHandler = buildKeyAdmin({ manager: keys, webhooks, logger, metrics });
  const delivery = (status: number): DeliveryDeps => ({
    state: new DeliveryState(store.client, store.tableName),
    feeds: store.repository,
    events: store.repository,
    keyring: testKeyring,
    secrets,
    post: async () => ({ kind: 'answered', status }),
    siteUrl: 'https://events.example.com',
    clock,
    random: () => 0.5,
    logger,
    metrics,
  });
  let version = 5_000;
  const change = async () => {
    const jazz = demoDataset().events.find((e) => e.id === 'evt_jazz01')!;
    await new ChangeApplier(store.client, store.tableName, { clock }).apply({ type: 'event.upserted', version: ++version, event: { ...jazz, title: `Edit ${version}` } } as Change);
  };
  const call = async (method: 'POST' | 'DELETE', path: Parameters<typeof event>[1], pathParameters: Record<string, string>, body?: unknown) => {
    const answer = await handler(event(method, path, { pathParameters, ...(body === undefined ? {} : { body }) }));
    return { status: answer.statusCode, body: JSON.parse(answer.body) as { data: Record<string, unknown> } };
  };
  return {
    lines,
    published,
    records: new WebhookRecords(store.client, store.tableName),
    delivery,
    change,
    tick: (ms: number) => void (now += ms),
    async newKey(userId = 'usr_frank') {
      const made = await call('POST', '/keys', {}, { idempotencyKey: `audit-${now}-${Math.random().toString(36).slice(2, 10)}`, userId, name: 'hooks' });
      expect(made.status).toBe(201);
      return { userId, keyId: String(made.body.data.keyId) };
    },
    async newHook(userId: string, keyId: string) {
      const made = await call('POST', '/users/{userId}/keys/{keyId}/webhooks', { userId, keyId }, { url: 'https://hooks.example.com/in', scope: { type: 'catalogue' } });
      expect(made.status).toBe(201);
      return String(made.body.data.webhookId);
    },
    remove: (userId: string, keyId: string, webhookId: string) => call('DELETE', '/users/{userId}/keys/{keyId}/webhooks/{webhookId}', { userId, keyId, webhookId }),
    revoke: (userId: string, keyId: string) => call('DELETE', '/users/{userId}/keys/{keyId}', { userId, keyId }),
    resume: (userId: string, keyId: string, webhookId: string) => call('POST', '/users/{userId}/keys/{keyId}/webhooks/{webhookId}/resume', { userId, keyId, webhookId }),
  };
}

const linesOf = (lines: LoggedLine[], message: string, webhookId: string) => lines.filter((l) => l.message === message && l.fields.webhookId === webhookId).map((l) => l.fields);

/**
 * Where to fail a run whose calls have these kinds: every call on a webhook's items (the webhook, its scope entry,
 * its key's places) and the first call, which stands for every call before the webhooks' part (a key's own items,
 * swept by the keys' tests): the operation then fails before any webhook is touched, and its retry does it all.
 * On the second store, the first of each kind (FAULT_POINTS).
 */
function sweep(kinds: readonly string[], opts: { until?: number } = {}): number[] {
  const ours = (kind: string) => / (WEBHOOK|WHSCOPE)\/|\/HOOKS$/.test(kind);
  return faultPoints(kinds).filter((n) => (n === 1 || ours(kinds[n - 1]!)) && n <= (opts.until ?? kinds.length));
}

const sweepLine = (what: string, kinds: readonly string[], points: readonly number[]) =>
  `${what}: ${kinds.length} DynamoDB calls; failed in turn: ${points.map((n) => `${n} (${kinds[n - 1]})`).join(', ')}\n`;

/** A fault that loses an answer matters for a write (sent again); a read's is a read again. */
const modesAt = (kind: string | undefined): Mode[] => (/^(Get|Query|BatchGet|Scan)/.test(kind ?? '') ? ['fails', 'cut'] : MODES);

/** The calls of one clean run of `operation` (for the sweep's list), made after `setUp`. */
async function kindsOf<T>(f: ReturnType<typeof faults>, setUp: () => Promise<T>, operation: (t: T) => Promise<unknown>): Promise<string[]> {
  const t = await setUp();
  f.arm(0, 'fails');
  await operation(t);
  f.disarm();
  return [...f.state.kinds];
}

describe('a delete is on the record once, wherever it is cut off', () => {
  it('each call of a delete failing, cut off after landing, or losing its answer; then its retries', async () => {
    const w = world();
    const f = faults(store.client);
    const key = await w.newKey();
    const kinds = await kindsOf(f, () => w.newHook(key.userId, key.keyId), (id) => w.remove(key.userId, key.keyId, id));
    const points = sweep(kinds);
    process.stdout.write(sweepLine('webhook delete', kinds, points));
    for (const at of points) {
      for (const mode of modesAt(kinds[at - 1])) {
        // Past the 60 s after which a place a cut-off delete left is given back to the next create.
        w.tick(61_000);
        const id = await w.newHook(key.userId, key.keyId);
        f.arm(at, mode);
        const answers = [(await w.remove(key.userId, key.keyId, id)).status];
        f.disarm();
        while (answers.at(-1) !== 200 && answers.at(-1) !== 404 && answers.length < 4) answers.push((await w.remove(key.userId, key.keyId, id)).status);
        const where = `${kinds[at - 1]} (call ${at}) ${mode}: answers ${answers.join(', ')}`;
        expect({ where, lines: linesOf(w.lines, 'Webhook deleted', id) }).toEqual({ where, lines: [expect.objectContaining({ userId: key.userId, keyId: key.keyId, caller: CALLER })] });
        expect({ where, done: [200, 404].includes(answers.at(-1)!) }).toEqual({ where, done: true });
        expect({ where, item: await w.records.webhook(id) }).toEqual({ where, item: undefined });
        expect({ where, entry: await w.records.get(webhookKeys.scopeEntry(feedScopes.catalogue(), id)) }).toEqual({ where, entry: undefined });
      }
    }
    // Every place a cut-off delete kept is given back: the key takes its five webhooks again.
    w.tick(61_000);
    for (let i = 0; i < 5; i++) await w.newHook(key.userId, key.keyId);
  });
});

describe("a key's revoke puts each of its webhooks' closing on the record once", () => {
  it("each call of a revoke failing, cut off after landing, or losing its answer; then its retries", async () => {
    const w = world();
    const f = faults(store.client);
    const setUp = async () => {
      // A day on: each run makes a key, and a user makes at most 10 a day.
      w.tick(86_400_000);
      const key = await w.newKey();
      return { key, hooks: [await w.newHook(key.userId, key.keyId), await w.newHook(key.userId, key.keyId)] };
    };
    const kinds = await kindsOf(f, setUp, ({ key }) => w.revoke(key.userId, key.keyId));
    // The second webhook's calls repeat the first's: the sweep stops at its first, a revoke cut off between the two.
    const second = kinds.indexOf('GetItemCommand WEBHOOK/WEBHOOK', kinds.indexOf('GetItemCommand WEBHOOK/WEBHOOK') + 1) + 1;
    expect(second).toBeGreaterThan(0);
    const points = sweep(kinds, { until: second });
    process.stdout.write(sweepLine("a revoke closing two webhooks", kinds, points));
    for (const at of points) {
      for (const mode of modesAt(kinds[at - 1])) {
        const { key, hooks } = await setUp();
        f.arm(at, mode);
        const answers = [(await w.revoke(key.userId, key.keyId)).status];
        f.disarm();
        while (answers.at(-1) !== 200 && answers.at(-1) !== 409 && answers.length < 4) answers.push((await w.revoke(key.userId, key.keyId)).status);
        const where = `${kinds[at - 1]} (call ${at}) ${mode}: answers ${answers.join(', ')}`;
        for (const id of hooks) {
          expect({ where, id, lines: linesOf(w.lines, 'Webhook closed', id) }).toEqual({ where, id, lines: [expect.objectContaining({ userId: key.userId, keyId: key.keyId, by: 'revoke', caller: CALLER })] });
          const item = await w.records.webhook(id);
          expect({ where, id, closed: item?.key_closed, url: item?.url, secret: item?.secret }).toEqual({ where, id, closed: true, url: undefined, secret: undefined });
          expect({ where, id, entry: await w.records.get(webhookKeys.scopeEntry(feedScopes.catalogue(), id)) }).toEqual({ where, id, entry: undefined });
        }
      }
    }
  });

  it("a user's deletion, applied twice (a redelivery), puts each webhook of their keys on the record once", async () => {
    const w = world();
    const key = await w.newKey('usr_frank');
    const hooks = [await w.newHook(key.userId, key.keyId), await w.newHook(key.userId, key.keyId)];
    const closed: unknown[] = [];
    const applier = new ChangeApplier(store.client, store.tableName, { webhookAudit: (line) => void closed.push(line) });
    await applier.apply({ type: 'user.deleted', version: 9_000, user_id: 'usr_frank' });
    await applier.apply({ type: 'user.deleted', version: 9_000, user_id: 'usr_frank' });
    // In whatever order the key's places list them (a map: DynamoDB keeps no order in it).
    // One order for both sides: code-unit order (localeCompare would fold case and disagree with sort()).
    const codeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const byId = (a: unknown, b: unknown) => codeUnits((a as { webhookId: string }).webhookId, (b as { webhookId: string }).webhookId);
    expect(closed.sort(byId)).toEqual([...hooks].sort(codeUnits).map((webhookId) => ({ event: 'closed', userId: 'usr_frank', keyId: key.keyId, webhookId, by: 'user deleted' })));
  });
});

describe('a disable is on the record once, wherever its run is cut off', () => {
  it('each call of a run that a 410 disables failing, cut off after landing, or losing its answer; then the wake-up again', async () => {
    const w = world();
    const f = faults(store.client);
    const gone = w.delivery(410);
    const budget = { maxDeliveries: 20, mayStart: () => true };
    let key = await w.newKey();
    let made = 0;
    const setUp = async () => {
      if (++made % 5 === 0) key = await w.newKey();
      const id = await w.newHook(key.userId, key.keyId);
      await w.change();
      return id;
    };
    const kinds = await kindsOf(f, setUp, (id) => runWebhook(gone, id, budget));
    const points = sweep(kinds);
    process.stdout.write(sweepLine('a delivery answered 410', kinds, points));
    for (const at of points) {
      for (const mode of modesAt(kinds[at - 1])) {
        const id = await setUp();
        f.arm(at, mode);
        const outcomes = [await runWebhook(gone, id, budget).then((o) => o.kind, () => 'threw')];
        f.disarm();
        // The queue wakes it again: after a throw (SQS redelivers), after a retry (its time comes).
        while (outcomes.at(-1) !== 'done' && outcomes.length < 4) {
          w.tick(3_600_000);
          outcomes.push((await runWebhook(gone, id, budget)).kind);
        }
        const where = `${kinds[at - 1]} (call ${at}) ${mode}: runs ${outcomes.join(', ')}`;
        expect({ where, lines: linesOf(w.lines, 'Webhook disabled', id) }).toEqual({ where, lines: [expect.objectContaining({ userId: key.userId, keyId: key.keyId, reason: 'gone', lastFailure: expect.objectContaining({ status: 410 }) })] });
        const item = (await w.records.webhook(id)) as WebhookItem;
        expect({ where, state: item.state, reason: item.disabled_reason }).toEqual({ where, state: 'disabled', reason: 'gone' });
        expect({ where, entry: await w.records.get(webhookKeys.scopeEntry(feedScopes.catalogue(), id)) }).toEqual({ where, entry: expect.objectContaining({ state: 'disabled' }) });
      }
    }
    const counted = w.published.filter((p) => p.dimensions.result === 'gone' && p.values.some((v) => v.name === 'WebhooksDisabled')).length;
    expect(counted).toBe(points.reduce((n, at) => n + modesAt(kinds[at - 1]).length, 0) + 1);
  });

  it('a resumed webhook disabled again has a second line', async () => {
    const w = world();
    const key = await w.newKey();
    const id = await w.newHook(key.userId, key.keyId);
    await w.change();
    await runWebhook(w.delivery(410), id, { maxDeliveries: 20, mayStart: () => true });
    expect((await w.resume(key.userId, key.keyId, id)).status).toBe(200);
    await runWebhook(w.delivery(410), id, { maxDeliveries: 20, mayStart: () => true });
    // Its deliveries are woken again meanwhile, and a run that finds it disabled and on the record adds nothing.
    await runWebhook(w.delivery(410), id, { maxDeliveries: 20, mayStart: () => true });
    expect(linesOf(w.lines, 'Webhook disabled', id)).toHaveLength(2);
  });
});
