/**
 * The webhooks' round trip `npm run rehearse` runs on each stage (PRODUCT
 * P18; test/rehearsal/webhooks.test.ts runs it too): a key and a catalogue
 * webhook made through the template's AWS_IAM key-management API, with a
 * receiver on this machine (the rehearsal allows loopback receivers on the
 * functions it runs: allowLoopbackWebhooks); a change sent to the ingest
 * queue must reach the receiver through the stream, the fan-out and the
 * delivery bundles, signed with the webhook's secret (checked with the
 * standardwebhooks package, as a receiver checks it). The webhook and the key
 * are deleted after. A template without the key-management API or without
 * the webhooks' queue has no lines.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { KeyAdminClient, type CreatedKey } from '../../keys/admin-client.js';
import { KEY_ADMIN_BASE_PATH } from '../../lambdas/key-admin/routes.js';
import { readDataset } from '../loader.js';
import { REGION } from './iam.js';
import type { CheckLine } from './key-admin-check.js';
import type { Rehearsal } from './rehearsal.js';

interface Received {
  verified: boolean;
  body: { changes?: { id: string; change: string; event?: { title?: string } }[] };
}

/** A receiver that answers 204 and keeps what it got, its signature checked against `secret`. */
async function receiver(): Promise<{ url: string; got: Received[]; secret: { value: string }; close(): Promise<void> }> {
  const got: Received[] = [];
  const secret = { value: '' };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      try {
        new Webhook(secret.value).verify(text, req.headers as Record<string, string>);
        verified = true;
      } catch {
        // Not signed with the webhook's secret: recorded as unverified.
      }
      got.push({ verified, body: JSON.parse(text) as Received['body'] });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    got,
    secret,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** `dataFile`: the rehearsal's dataset, whose first public, published event the change edits. */
export async function webhookRoundTrip(rehearsal: Rehearsal, dataFile: string, userId = 'usr_dave'): Promise<CheckLine[]> {
  const api = rehearsal.apis.find((a) => a.id.startsWith('KeyAdminApi'));
  const ingest = [...rehearsal.queues.keys()].find((q) => q.startsWith('IngestQueue'));
  if (!api || !ingest || ![...rehearsal.queues.keys()].some((q) => q.startsWith('WebhooksWakeUps'))) return [];
  const lines: CheckLine[] = [];
  const check = (ok: boolean, line: string) => lines.push({ ok, line });
  const admin = new KeyAdminClient({ baseUrl: `${api.url}${KEY_ADMIN_BASE_PATH}`, region: REGION, credentials: rehearsal.webProduct });
  const hooks = await receiver();
  let key: CreatedKey | undefined;
  try {
    key = (await admin.create({ idempotencyKey: randomUUID(), userId, name: 'rehearsal webhooks' })) as CreatedKey;
    const made = await admin.createWebhook(userId, key.keyId, { url: hooks.url, scope: { type: 'catalogue' } });
    if (!('secret' in made)) throw new Error('the create answered no secret');
    hooks.secret.value = made.secret;
    check(true, `201 webhooks: created ${made.webhookId} on the catalogue, its secret sealed by KMS`);
    const title = `Rehearsed webhook ${randomUUID().slice(0, 8)}`;
    const shown = (await readDataset(dataFile)).dataset.events.find((e) => e.status === 'published' && e.visibility === 'public');
    if (!shown) throw new Error('the dataset has no public, published event to change');
    rehearsal.send(ingest, JSON.stringify({ type: 'event.upserted', version: Date.now() * 1000, event: { ...shown, title } }));
    await rehearsal.drain();
    const delivery = hooks.got.find((d) => d.body.changes?.some((c) => c.id === shown.id && c.event?.title === title));
    check(!!delivery && delivery.verified, `${delivery ? 'delivered' : 'not delivered'} webhooks: a change through the ingest, the stream, the fan-out and the delivery function${delivery?.verified ? ', signed with its secret' : ''}`);
    await admin.deleteWebhook(userId, key.keyId, made.webhookId);
  } catch (error) {
    check(false, `webhooks: ${String((error as Error).message ?? error)}`);
  } finally {
    if (key) await admin.revoke(userId, key.keyId).catch(() => undefined);
    await hooks.close();
  }
  return lines;
}
