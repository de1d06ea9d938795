/**
 * Webhooks in the rehearsal of the staging template (PRODUCT P18, issue 60
 * item 2): a change sent to the ingest queue is applied by the ingest bundle,
 * its feed-head writes reach the fan-out bundle through the table's stream
 * (the event source's filter as the template has it), the fan-out wakes the
 * webhook on the FIFO queue (its own message group), and the delivery bundle
 * sends it, signed, to a receiver on this machine: each bundle from cdk.out
 * under its own role, every AWS call evaluated against that role (the KMS
 * calls against the secrets key's own policy too), and no call denied.
 *
 * The receiver is on loopback, which the outbound guard refuses unless the
 * local setting allows it: the rehearsal sets it on the functions it runs
 * (allowLoopbackWebhooks), the template never does (test/infra/webhooks.test.ts).
 * The queues have a clock here (queueClock): a failed delivery's wake-up
 * stays invisible until its retry is due, and the test moves the clock.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DecryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { KeyAdminClient, KeyAdminError, type CreatedKey } from '../../keys/admin-client.js';
import { KEY_ADMIN_BASE_PATH } from '../../lambdas/key-admin/routes.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { REHEARSAL_STAGES } from '../../local/rehearsal/checks.js';
import { REGION } from '../../local/rehearsal/iam.js';
import { startRehearsal, type Rehearsal } from '../../local/rehearsal/rehearsal.js';
import { webhookRoundTrip } from '../../local/rehearsal/webhook-check.js';
import { demoDataset, DEMO_FILE } from '../support/fixtures.js';
import { startReceiver, type Answer, type Receiver } from '../support/webhook-receiver.js';

let rehearsal: Rehearsal;
let admin: KeyAdminClient;
let receiver: Receiver;
/** The functions' and the queues' clock: real time (a receiver checks a signature's timestamp against its own), moved on by the test. */
let ahead = 0;
const answers: Answer[] = [];
let key: CreatedKey;
let webhookId: string;

beforeAll(async () => {
  rehearsal = await startRehearsal({ context: REHEARSAL_STAGES.staging!, dataFile: DEMO_FILE, now: () => new Date(Date.now() + ahead), queueClock: true, allowLoopbackWebhooks: true });
  const api = rehearsal.apis.find((a) => a.id.startsWith('KeyAdminApi'))!;
  admin = new KeyAdminClient({ baseUrl: `${api.url}${KEY_ADMIN_BASE_PATH}`, region: REGION, credentials: rehearsal.webProduct });
  receiver = await startReceiver({ answer: () => answers.shift() ?? 204 });
}, 120_000);
afterAll(async () => {
  await rehearsal?.close();
  await receiver?.close();
});

const fn = (id: string) => id.replace(/[0-9A-F]{8}$/, '');
const callsOf = (prefix: string) => rehearsal.endpoint.calls.filter((c) => c.fn.startsWith(prefix));
const ingestQueue = () => [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestQueue'))!;
const wakeUps = () => rehearsal.queues.get([...rehearsal.queues.keys()].find((q) => q.startsWith('WebhooksWakeUps'))!)!;
let version = 9_000_000_000_000;
const jazz = demoDataset().events.find((e) => e.id === 'evt_jazz01')!;
const edit = (title: string) => rehearsal.send(ingestQueue(), JSON.stringify({ type: 'event.upserted', version: ++version, event: { ...jazz, title } }));

describe('a webhook created through the rehearsed key-management API', () => {
  it('is made by the key-admin bundle: its URL checked by the outbound guard, its secret sealed by KMS under its own role and the key policy', async () => {
    key = (await admin.create({ idempotencyKey: 'rehearsal-webhooks-0001', userId: 'usr_carol', name: 'Hooks' })) as CreatedKey;
    const made = await admin.createWebhook('usr_carol', key.keyId, { url: receiver.url, scope: { type: 'catalogue' } });
    if (!('secret' in made)) throw new Error('no secret');
    receiver.secrets.push(made.secret);
    webhookId = made.webhookId;
    expect(made).toMatchObject({ state: 'active', scope: { type: 'catalogue' }, url: receiver.url });
    const encrypts = callsOf('KeyAdminFunction').filter((c) => c.action === 'kms:Encrypt');
    expect(encrypts.map((c) => [c.allowed, c.resource])).toEqual([[true, expect.stringMatching(/^arn:aws:kms:[^:]+:\d{12}:key\/WebhooksSecretsKey/)]]);
    // Sealed in the item, never in clear.
    const store = createDocumentClient({ endpoint: rehearsal.storeEndpoint });
    const item = (await store.send(new GetCommand({ TableName: rehearsal.tableName, Key: { pk: `WEBHOOK#${webhookId}`, sk: 'WEBHOOK' } }))).Item!;
    store.destroy();
    expect(String(item.secret)).toMatch(/^kms:/);
    expect(JSON.stringify(item)).not.toContain(made.secret);
    expect(rehearsal.problems()).toEqual([]);
  }, 60_000);

  it('refuses a private address even with loopback allowed: the guard opens 127.0.0.1 and ::1 only', async () => {
    const e = await admin.createWebhook('usr_carol', key.keyId, { url: 'http://10.0.0.1/hooks', scope: { type: 'catalogue' } }).then(
      () => undefined,
      (error: unknown) => error as KeyAdminError,
    );
    expect([e?.status, e?.field]).toEqual([400, 'url']);
  });
});

describe('a change applied by the ingest bundle reaches the receiver', () => {
  it('through the stream, the fan-out and the delivery bundles, each under its own role, signed, with nothing denied', async () => {
    const invoked = rehearsal.invocations.length;
    edit('Rooftop Jazz, rehearsed');
    const result = await rehearsal.drain();
    expect(result).toMatchObject({ failures: 0, deadLettered: 0 });
    const order = rehearsal.invocations.slice(invoked).map(fn);
    expect(order[0]).toBe('IngestFunction');
    expect(order).toEqual(expect.arrayContaining(['WebhooksFanOutFunction', 'WebhooksDeliveryFunction']));
    expect(order.indexOf('WebhooksFanOutFunction')).toBeLessThan(order.lastIndexOf('WebhooksDeliveryFunction'));
    const [delivery, ...more] = receiver.deliveries;
    expect(more).toEqual([]);
    expect(delivery!.verified).toBe(true);
    expect(delivery!.body).toMatchObject({ webhook_id: webhookId, scope: { type: 'catalogue' }, changes: [{ id: 'evt_jazz01', change: 'upserted', event: { id: 'evt_jazz01', title: 'Rooftop Jazz, rehearsed' } }] });
    expect(delivery!.headers['webhook-id']).toMatch(/^msg_/);
    // The delivery's cursor is a P16 cursor of the catalogue: a pull from it with the webhook's key is up to date.
    const pull = await fetch(rehearsal.urlFor(`/api/public/v1/changes/events?cursor=${encodeURIComponent(delivery!.body.cursor)}`), { headers: { 'x-events-api-key': key.key } });
    expect(pull.status).toBe(200);
    expect(((await pull.json()) as { data: { changes: unknown[]; has_more: boolean } }).data).toMatchObject({ changes: [], has_more: false });
    expect(rehearsal.problems()).toEqual([]);
  }, 90_000);

  it('each function called only what its role allows: the fan-out read the scope list, the delivery opened the secret (KMS, its key policy) and wrote delivery state only', () => {
    const fanOut = callsOf('WebhooksFanOutFunction');
    expect(new Set(fanOut.map((c) => c.action))).toEqual(new Set(['dynamodb:DescribeStream', 'dynamodb:GetShardIterator', 'dynamodb:GetRecords', 'dynamodb:Query', 'sqs:SendMessage']));
    const delivery = callsOf('WebhooksDeliveryFunction');
    expect(delivery.filter((c) => c.action === 'kms:Decrypt').map((c) => c.allowed)).toEqual([true]);
    expect(delivery.filter((c) => /^dynamodb:(Put|Delete|BatchWrite)/.test(c.action))).toEqual([]);
    expect(new Set(delivery.map((c) => c.action))).toEqual(
      new Set(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:Query', 'dynamodb:BatchGetItem', 'secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue', 'kms:Decrypt']),
    );
    expect([...fanOut, ...delivery].every((c) => c.allowed)).toBe(true);
  });

  it('a failed attempt: the wake-up stays invisible in its group until the retry is due, then the same delivery is sent again, content as it is now', async () => {
    answers.push(503);
    edit('Rooftop Jazz, retried');
    await rehearsal.drain();
    expect(receiver.deliveries).toHaveLength(2);
    const failed = receiver.deliveries[1]!;
    expect((await admin.getWebhook('usr_carol', key.keyId, webhookId)).state).toBe('retrying');
    // In flight: made invisible by the delivery function (its role's sqs:ChangeMessageVisibility), for at most the first retry's 5 s.
    const [held, ...others] = wakeUps();
    expect(others).toEqual([]);
    expect(held!.visibilityTimeout).toBeGreaterThanOrEqual(3);
    expect(held!.visibilityTimeout).toBeLessThanOrEqual(5);
    expect(await rehearsal.drain()).toMatchObject({ batches: 0 });
    edit('Rooftop Jazz, retried and changed again');
    await rehearsal.drain();
    // The new change's wake-up waits behind the one in flight (the webhook's group), or was not sent (retrying webhooks are not woken).
    expect(receiver.deliveries).toHaveLength(2);
    ahead += 6_000;
    await rehearsal.drain();
    expect(receiver.deliveries.length).toBeGreaterThanOrEqual(3);
    const again = receiver.deliveries[2]!;
    expect(again.headers['webhook-id']).toBe(failed.headers['webhook-id']);
    expect(again.verified).toBe(true);
    expect(again.body.changes).toEqual([expect.objectContaining({ id: 'evt_jazz01', event: expect.objectContaining({ title: 'Rooftop Jazz, retried and changed again' }) })]);
    expect((await admin.getWebhook('usr_carol', key.keyId, webhookId)).state).toBe('active');
    expect(receiver.replica.get('evt_jazz01')).toMatchObject({ title: 'Rooftop Jazz, retried and changed again' });
    expect(wakeUps()).toEqual([]);
    expect(callsOf('WebhooksDeliveryFunction').filter((c) => c.action === 'sqs:ChangeMessageVisibility').every((c) => c.allowed)).toBe(true);
    expect(rehearsal.problems()).toEqual([]);
  }, 90_000);
});

describe("the secrets key's policy, rehearsed: only the delivery function opens a secret, and only for its webhook", () => {
  const sealed = async () => {
    const store = createDocumentClient({ endpoint: rehearsal.storeEndpoint });
    const item = (await store.send(new GetCommand({ TableName: rehearsal.tableName, Key: { pk: `WEBHOOK#${webhookId}`, sk: 'WEBHOOK' } }))).Item!;
    store.destroy();
    return Buffer.from(String(item.secret).slice(4), 'base64');
  };
  const decryptAs = async (functionId: string, context: Record<string, string>) => {
    const kms = new KMSClient({ region: REGION, endpoint: rehearsal.endpoint.url, credentials: { accessKeyId: functionId, secretAccessKey: 'x' } });
    try {
      await kms.send(new DecryptCommand({ CiphertextBlob: await sealed(), EncryptionContext: context }));
      return 'opened';
    } catch (error) {
      return (error as Error).name;
    } finally {
      kms.destroy();
    }
  };
  const functionId = (prefix: string) => [...rehearsal.roles.keys()].find((id) => id.startsWith(prefix))!;

  it('the key manager may seal but not open; a read route may not open; the delivery function may not open it as another webhook\'s', async () => {
    expect(await decryptAs(functionId('KeyAdminFunction'), { webhook_id: webhookId })).toBe('AccessDeniedException');
    expect(await decryptAs(functionId('getEventFunction'), { webhook_id: webhookId })).toBe('AccessDeniedException');
    expect(await decryptAs(functionId('WebhooksDeliveryFunction'), { webhook_id: 'wh_someoneelse000000000' })).toBe('InvalidCiphertextException');
    expect(await decryptAs(functionId('WebhooksDeliveryFunction'), {})).toBe('AccessDeniedException');
    expect(await decryptAs(functionId('WebhooksDeliveryFunction'), { webhook_id: webhookId })).toBe('opened');
    // The refusals are recorded as the denials they are; the rest of the run had none.
    expect(rehearsal.endpoint.denials.map((d) => [fn(d.fn), d.action])).toEqual([
      ['KeyAdminFunction', 'kms:Decrypt'],
      ['getEventFunction', 'kms:Decrypt'],
      ['WebhooksDeliveryFunction', 'kms:Decrypt'],
    ]);
    rehearsal.endpoint.denials.length = 0;
  });
});

describe('without a queue clock, as `npm run rehearse` runs it', () => {
  let plain: Rehearsal;
  let plainAhead = 0;
  const plainAnswers: Answer[] = [];
  let plainReceiver: Receiver;
  beforeAll(async () => {
    plain = await startRehearsal({ context: REHEARSAL_STAGES.staging!, dataFile: DEMO_FILE, now: () => new Date(Date.now() + plainAhead), allowLoopbackWebhooks: true });
    plainReceiver = await startReceiver({ answer: () => plainAnswers.shift() ?? 204 });
  }, 120_000);
  afterAll(async () => {
    await plain?.close();
    await plainReceiver?.close();
  });
  const plainWakeUps = () => plain.queues.get([...plain.queues.keys()].find((q) => q.startsWith('WebhooksWakeUps'))!)!;

  it('a retry made invisible by the delivery function waits for the next drain: one attempt a drain, never spun into the dead-letter queue', async () => {
    const api = plain.apis.find((a) => a.id.startsWith('KeyAdminApi'))!;
    const plainAdmin = new KeyAdminClient({ baseUrl: `${api.url}${KEY_ADMIN_BASE_PATH}`, region: REGION, credentials: plain.webProduct });
    const plainKey = (await plainAdmin.create({ idempotencyKey: 'rehearsal-webhooks-0002', userId: 'usr_carol', name: 'Hooks' })) as CreatedKey;
    const made = await plainAdmin.createWebhook('usr_carol', plainKey.keyId, { url: plainReceiver.url, scope: { type: 'catalogue' } });
    if (!('secret' in made)) throw new Error('no secret');
    plainReceiver.secrets.push(made.secret);
    plainAnswers.push(503);
    const ingest = [...plain.queues.keys()].find((q) => q.startsWith('IngestQueue'))!;
    plain.send(ingest, JSON.stringify({ type: 'event.upserted', version: 9_000_000_000_001, event: { ...jazz, title: 'Rooftop Jazz, held' } }));
    expect(await plain.drain()).toMatchObject({ deadLettered: 0 });
    expect(plainReceiver.deliveries).toHaveLength(1);
    const [held, ...others] = plainWakeUps();
    expect(others).toEqual([]);
    expect(held!.receiveCount).toBe(1);
    // Not due yet: the next drain gives it out once, the function finds its retry not due and holds it again.
    expect(await plain.drain()).toMatchObject({ batches: 1, deadLettered: 0 });
    expect(plainReceiver.deliveries).toHaveLength(1);
    expect(plainWakeUps().map((m) => m.receiveCount)).toEqual([2]);
    plainAhead += 6_000;
    expect(await plain.drain()).toMatchObject({ deadLettered: 0 });
    expect(plainReceiver.deliveries.map((d) => [d.id, d.verified])).toEqual([
      [plainReceiver.deliveries[0]!.id, true],
      [plainReceiver.deliveries[0]!.id, true],
    ]);
    expect(plainWakeUps()).toEqual([]);
    expect((await plainAdmin.getWebhook('usr_carol', plainKey.keyId, made.webhookId)).state).toBe('active');
    expect(plain.problems()).toEqual([]);
  }, 90_000);

  it('the round trip `npm run rehearse` runs passes its checks: a webhook made, a change delivered through the bundles, signed', async () => {
    const lines = await webhookRoundTrip(plain, DEMO_FILE);
    expect(lines.map((l) => l.line.replace(/wh_\w+/g, 'WEBHOOK_ID'))).toEqual([
      '201 webhooks: created WEBHOOK_ID on the catalogue, its secret sealed by KMS',
      'delivered webhooks: a change through the ingest, the stream, the fan-out and the delivery function, signed with its secret',
    ]);
    expect(lines.every((l) => l.ok)).toBe(true);
    // The other webhook of the catalogue had the same change.
    expect(plainReceiver.deliveries).toHaveLength(3);
    expect(plain.endpoint.calls.filter((c) => !c.allowed)).toEqual([]);
    expect(plain.problems()).toEqual([]);
  }, 90_000);
});
