/**
 * keys/examples/manage-webhooks.ts, the web product's example of
 * docs/webhooks.md, run as a script against the local server (loopback
 * receivers allowed, as `npm start -- --allow-loopback-webhooks`), with the
 * local key pair: it makes a webhook of the demo key, retries the create
 * (the same webhook, no second secret), lists it, reads its state, rotates
 * its secret, is told it is not disabled, deletes it and is told a second
 * delete finds nothing.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { hashApiKey, keyIdFromHash } from '../../lambdas/core/api-key.js';
import { LOCAL_KEY_ADMIN_PRINCIPAL } from '../../local/sigv4-check.js';
import { KEYS } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { runTs } from '../support/process.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

const DEMO_KEY_ID = keyIdFromHash(hashApiKey(KEYS.both));
let server: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  server = await startTestServer({ allowLoopbackWebhooks: true });
  receiver = await startReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const env = () => ({
  KEY_ADMIN_URL: server.keyAdminUrl,
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: LOCAL_KEY_ADMIN_PRINCIPAL.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_KEY_ADMIN_PRINCIPAL.secretAccessKey,
});

it('makes, replays, lists, reads, rotates and deletes a webhook of the demo key, each answer as the page shows it', async () => {
  expect(DEMO_KEY_ID).toBe('key_10fa5c81e93a15cfb525');
  const { code, stdout, stderr } = await runTs('keys/examples/manage-webhooks.ts', ['usr_alice', DEMO_KEY_ID, receiver.url], env()).done;
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const [created, retried, listed, state, rotated, resume, deleted, again, ...rest] = stdout.trim().split('\n');
  const id = /^created (wh_\w{20}) \(host usr_alice, active\); secret shown once: whsec_\S{44}$/.exec(created!)?.[1];
  expect(id).toBeDefined();
  expect([retried, listed, state, resume, deleted, again, rest]).toEqual([
    `retried: ${id}, replayed=true, secret not shown again`,
    `listed: ${id} active ${receiver.url}`,
    'state: active, last failure: none',
    'resume: 409 NOT_DISABLED (webhookId)',
    `deleted ${id}`,
    'again: 404 UNKNOWN_WEBHOOK (webhookId)',
    [],
  ]);
  expect(rotated).toMatch(/^rotated: new secret shown once: whsec_\S{44}; the old one signs too until \d{4}-\d\d-\d\dT/);
});

it('names what it needs when run without it', async () => {
  const { code, stdout, stderr } = await runTs('keys/examples/manage-webhooks.ts', ['usr_alice'], { KEY_ADMIN_URL: '', AWS_REGION: '' }).done;
  expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
  for (const needed of ['USER_ID', 'KEY_ID', 'RECEIVER_URL', 'KEY_ADMIN_URL', 'AWS_REGION', 'AWS_ACCESS_KEY_ID=AKIALOCALKEYADMIN000']) expect(stderr).toContain(needed);
});

it("the command docs/webhooks.md shows signs with the server's local pair", () => {
  const page = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const shown = /AWS_ACCESS_KEY_ID=(\S+) AWS_SECRET_ACCESS_KEY=(\S+) npx tsx keys\/examples\/manage-webhooks\.ts usr_alice/.exec(page);
  expect(shown?.slice(1)).toEqual([LOCAL_KEY_ADMIN_PRINCIPAL.accessKeyId, LOCAL_KEY_ADMIN_PRINCIPAL.secretAccessKey]);
});
