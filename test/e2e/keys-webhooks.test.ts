/**
 * `npm run keys -- webhooks …` against a running local server (PRODUCT P18:
 * webhooks managed "by operators with npm run keys"), each command a real
 * process signing with the documented local pair: create (the secret
 * printed once, deliveries verified with it), list, get (state and last
 * failure), rotate-secret (both signatures for 24 hours), resume after a
 * 410, delete; refusals with the API's status, code and field; every change
 * on the key-management API's audit trail naming the caller; and
 * `npm run keys -- revoke` closing the key's webhooks, each with its
 * `Webhook closed` line on stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LOCAL_KEY_ADMIN_PRINCIPAL } from '../../local/sigv4-check.js';
import { NOW } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { runTs } from '../support/process.js';
import { recordingLogger } from '../support/telemetry.js';
import { webhookAdmin, type WebhookAdmin } from '../support/webhook-admin.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

const logger = recordingLogger();
let server: TestServer;
let hooks: WebhookAdmin;
let receiver: Receiver;
let now = Date.parse(NOW);
beforeAll(async () => {
  server = await startTestServer({ clock: () => new Date(now), allowLoopbackWebhooks: true, logger });
  hooks = webhookAdmin(server, () => new Date(now), 'keys-cli');
  receiver = await startReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const cli = (...args: string[]) => runTs('local/cli/keys.ts', args).done;
const webhooks = (command: string, key: { userId: string; keyId: string }, ...args: string[]) =>
  cli('webhooks', command, ...args, '--user-id', key.userId, '--key-id', key.keyId, '--key-admin-url', server.keyAdminUrl);
const audited = (message: string, webhookId: string) => logger.entries.filter((e) => e.message === message && e.webhookId === webhookId);

describe('npm run keys -- webhooks, against a running server', () => {
  let key: { key: string; keyId: string; userId: string };
  let webhookId: string;
  let secret: string;

  it('create prints the webhook and its secret once; deliveries are signed with it', async () => {
    key = await hooks.newKey('usr_alice');
    const made = await webhooks('create', key, '--url', receiver.url, '--scope', 'host', '--host-id', 'usr_alice');
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: '' });
    const [, id, , , shown] = /^Created (wh_\w{20}) on key (\S+) of usr_alice: host usr_alice to (\S+) \(active\)\.\nSecret \(shown once, store it now\):\n(whsec_\S+)\n$/.exec(made.stdout) ?? [];
    expect(id).toBeDefined();
    [webhookId, secret] = [id!, shown!];
    receiver.secrets.push(secret);
    await hooks.edit('Jazz night (from the CLI)');
    expect(receiver.deliveries.map((d) => [d.body.webhook_id, d.verified])).toEqual([[webhookId, true]]);
    expect(audited('Webhook created', webhookId)).toEqual([expect.objectContaining({ userId: 'usr_alice', keyId: key.keyId, caller: LOCAL_KEY_ADMIN_PRINCIPAL.principalArn })]);
  });

  it('list shows it under a header, get its state; neither ever shows the secret', async () => {
    const listed = await webhooks('list', key);
    expect(listed.code).toBe(0);
    const [header, row, ...rest] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^WEBHOOK ID\s+STATE\s+SCOPE\s+URL$/);
    expect(row).toMatch(new RegExp(`^${webhookId}\\s+active\\s+host usr_alice\\s+${receiver.url}$`));
    expect(rest).toEqual([]);
    const got = await webhooks('get', key, webhookId);
    expect(got.stdout).toMatch(new RegExp(`^Webhook ${webhookId} of key ${key.keyId}\\n  state: +active\\n  scope: +host usr_alice\\n  url: +${receiver.url}\\n  created: +\\d{4}-.*\\n  last success: +\\d{4}-.*\\n  last failure: +none\\n$`));
    for (const out of [listed.stdout, got.stdout]) expect(out).not.toContain('whsec_');
  });

  it('rotate-secret prints the new secret once; for 24 hours deliveries carry both signatures', async () => {
    const rotated = await webhooks('rotate-secret', key, webhookId);
    expect(rotated.code).toBe(0);
    const fresh = /\nSecret \(shown once, store it now\):\n(whsec_\S+)\n$/.exec(rotated.stdout)?.[1];
    expect(fresh).toMatch(/^whsec_/);
    expect(rotated.stdout).toMatch(/signature too until \d{4}-/);
    await hooks.edit('Jazz night (rotated)');
    const last = receiver.deliveries.at(-1)!;
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect([receiver.verify(last, [fresh!]), receiver.verify(last, [secret])]).toEqual([true, true]);
    expect(audited('Webhook rotated', webhookId)).toHaveLength(1);
  });

  it('get shows a 410 as disabled with its status; resume goes on; delete stops it', async () => {
    receiver.answer = () => 410;
    await hooks.edit('Jazz night (gone)');
    const disabled = await webhooks('get', key, webhookId);
    expect(disabled.stdout).toMatch(/\n  state: +disabled \(gone\) since \d{4}-.*\n/);
    expect(disabled.stdout).toMatch(/\n  last failure: +410 at \d{4}-/);
    receiver.answer = () => 204;
    const resumed = await webhooks('resume', key, webhookId);
    expect(resumed.stdout).toBe(`Resumed ${webhookId} from where it stopped (active).\n`);
    await server.webhooks.settled();
    expect(receiver.deliveries.at(-1)!.body.changes[0]).toMatchObject({ event: { title: 'Jazz night (gone)' } });
    const deleted = await webhooks('delete', key, webhookId);
    expect(deleted.stdout).toBe(`Deleted ${webhookId}: no delivery of it starts from now on.\n`);
    const count = receiver.deliveries.length;
    await hooks.edit('Jazz night (after the delete)');
    expect(receiver.deliveries).toHaveLength(count);
    expect((await webhooks('list', key)).stdout).toBe(`No webhooks on key ${key.keyId} of usr_alice.\n`);
    expect([audited('Webhook resumed', webhookId), audited('Webhook deleted', webhookId), audited('Webhook disabled', webhookId)].map((l) => l.length)).toEqual([1, 1, 1]);
  });

  it('refusals: usage errors exit 2, the API\'s refusals exit 1 naming status, code and field', async () => {
    const usage = await webhooks('create', key, '--url', receiver.url, '--scope', 'everything');
    expect({ code: usage.code, stdout: usage.stdout }).toEqual({ code: 2, stdout: '' });
    expect(usage.stderr).toContain('--scope is one of catalogue, host, place, guests');
    expect((await cli('webhooks', 'list', '--user-id', 'usr_alice', '--key-id', key.keyId)).stderr).toContain('give --key-admin-url');
    expect((await webhooks('get', key)).stderr).toContain('get needs a WEBHOOK_ID');
    const place = await webhooks('create', key, '--url', receiver.url, '--scope', 'place');
    expect({ code: place.code, stderr: place.stderr }).toEqual({ code: 1, stderr: 'keys webhooks: 400 BAD_INPUT (scope.city): A place scope needs a city, a country or both\n' });
    const ftp = await webhooks('create', key, '--url', 'ftp://hooks.example.com/in', '--scope', 'catalogue');
    expect(ftp.stderr).toMatch(/^keys webhooks: 400 BAD_URL \(url\): The URL must use https:\/\//);
    const other = await webhooks('get', { userId: 'usr_bob', keyId: key.keyId }, 'wh_0000000000000000000A');
    expect(other.stderr).toMatch(/^keys webhooks: 404 UNKNOWN_KEY \(keyId\)/);
  });
});

describe('npm run keys -- revoke', () => {
  it("closes the key's webhooks, each on the record (stderr), and none delivers again", async () => {
    const key = await hooks.newKey('usr_carol');
    const ids = [];
    for (const scope of [['catalogue'], ['place', '--city', 'Lisbon']]) {
      const made = await webhooks('create', key, '--url', receiver.url, '--scope', ...scope);
      ids.push(/^Created (wh_\w{20})/.exec(made.stdout)![1]!);
    }
    const revoked = await cli('revoke', '--user-id', key.userId, key.keyId, '--endpoint', server.storeEndpoint);
    expect(revoked.code).toBe(0);
    for (const id of ids) expect(revoked.stderr).toMatch(new RegExp(`INFO  Webhook closed caller="operator \\(npm run keys\\)" userId=usr_carol keyId=${key.keyId} webhookId=${id} by=revoke\\n`));
    const count = receiver.deliveries.length;
    await hooks.edit('After the CLI revoke');
    expect(receiver.deliveries).toHaveLength(count);
  });
});
