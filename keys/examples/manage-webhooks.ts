/**
 * The webhooks example of docs/webhooks.md: what the web product's backend
 * does when a user adds a webhook to one of their keys in its settings area,
 * looks at it, rotates its secret and removes it.
 *
 *   KEY_ADMIN_URL=URL AWS_REGION=REGION npx tsx keys/examples/manage-webhooks.ts USER_ID KEY_ID RECEIVER_URL
 *
 * USER_ID and KEY_ID: the key's owner and the key (locally the demo key of
 * usr_alice, key_10fa5c81e93a15cfb525); RECEIVER_URL: where deliveries go
 * (https on 443 with a public address in AWS; locally, under `npm start --
 * --allow-loopback-webhooks`, http://127.0.0.1:PORT/… too). Credentials come
 * from the AWS SDK's default chain: in AWS the web product's role; locally
 * the documented local pair in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
 * The secret is printed in full: this is an example for a developer's
 * terminal; the web product shows it to its user once and keeps no copy.
 */
import { randomUUID } from 'node:crypto';
import { KeyAdminClient, KeyAdminError } from '../admin-client.js';

const USAGE = `usage: KEY_ADMIN_URL=URL AWS_REGION=REGION npx tsx keys/examples/manage-webhooks.ts USER_ID KEY_ID RECEIVER_URL

  USER_ID        the key's owner, by id (locally: usr_alice)
  KEY_ID         the key the webhook belongs to (locally: key_10fa5c81e93a15cfb525, the demo key)
  RECEIVER_URL   where deliveries go (locally, under npm start -- --allow-loopback-webhooks: http://127.0.0.1:PORT/…)
  KEY_ADMIN_URL  the stack output KeyAdminApiUrl (locally: the "Key admin:" URL npm start prints)
  AWS_REGION     the stack's region (locally: whichever you like)
  credentials    the AWS SDK's default chain: the web product's role in AWS; locally
                 AWS_ACCESS_KEY_ID=AKIALOCALKEYADMIN000 AWS_SECRET_ACCESS_KEY=local-key-admin-secret-not-an-aws-secret
`;

const [userId, keyId, url] = process.argv.slice(2);
const baseUrl = process.env.KEY_ADMIN_URL;
const region = process.env.AWS_REGION;
if (!userId || !keyId || !url || !baseUrl || !region) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const admin = new KeyAdminClient({ baseUrl, region });

// One idempotency key per webhook the user asked for, kept with the request: a retry reuses it.
const idempotencyKey = randomUUID();
const created = await admin.createWebhook(userId, keyId, { url, scope: { type: 'host', userId }, idempotencyKey });
if (created.replayed) throw new Error('a first create is never a replay');
// Show created.secret to the user now (their receiver verifies deliveries with it): it is never shown again.
console.log(`created ${created.webhookId} (${created.scope.type} ${userId}, ${created.state}); secret shown once: ${created.secret}`);

// The answer was lost (a timeout, say) and the request is retried: the same webhook, no secret.
const retried = await admin.createWebhook(userId, keyId, { url, scope: { type: 'host', userId }, idempotencyKey });
console.log(`retried: ${retried.webhookId}, replayed=${retried.replayed}, secret ${'secret' in retried ? 'shown again' : 'not shown again'}`);

for (const w of await admin.listWebhooks(userId, keyId)) console.log(`listed: ${w.webhookId} ${w.state} ${w.url}`);

const state = await admin.getWebhook(userId, keyId, created.webhookId);
console.log(`state: ${state.state}, last failure: ${state.lastFailure ? (state.lastFailure.status ?? state.lastFailure.errorClass) : 'none'}`);

// A new secret, shown once; for 24 hours deliveries carry the old one's signature too, so the receiver can switch over.
const rotated = await admin.rotateWebhookSecret(userId, keyId, created.webhookId);
console.log(`rotated: new secret shown once: ${rotated.secret}; the old one signs too until ${rotated.previousSecretValidUntil}`);

try {
  await admin.resumeWebhook(userId, keyId, created.webhookId);
} catch (error) {
  if (!(error instanceof KeyAdminError)) throw error;
  // Only a disabled webhook resumes (a 410, or 3 days failing): this one is active.
  console.log(`resume: ${error.status} ${error.code} (${error.field})`);
}

await admin.deleteWebhook(userId, keyId, created.webhookId);
console.log(`deleted ${created.webhookId}`);
try {
  await admin.deleteWebhook(userId, keyId, created.webhookId);
} catch (error) {
  if (!(error instanceof KeyAdminError)) throw error;
  // Deleted already (a retried delete, say): treat it as done.
  console.log(`again: ${error.status} ${error.code} (${error.field})`);
}
