/**
 * The example of docs/managing-keys.md: what the web product's backend does
 * when a user creates, lists and revokes keys in its settings area.
 *
 *   KEY_ADMIN_URL=URL PUBLIC_API_URL=URL AWS_REGION=REGION npx tsx keys/examples/manage-keys.ts USER_ID
 *
 * USER_ID: the web product's id of the user whose keys it makes, lists and
 * revokes (locally, a demo user such as usr_frank): a key belongs to a user
 * id, never to a username. Credentials come from the AWS SDK's default chain: in
 * AWS the web product's role; locally the documented local pair in
 * AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. With PUBLIC_API_URL (the
 * Public API's base URL), the new key is tried on it: 200, then 401 once
 * revoked (the revoke is immediate). The key is printed in full: this is an
 * example for a developer's terminal; the web product shows it to its user
 * once and keeps no copy.
 */
import { randomUUID } from 'node:crypto';
import { KeyAdminClient, KeyAdminError } from '../admin-client.js';

const USAGE = `usage: KEY_ADMIN_URL=URL [PUBLIC_API_URL=URL] AWS_REGION=REGION npx tsx keys/examples/manage-keys.ts USER_ID

  USER_ID        the id of the user whose keys are created, listed and revoked (locally: a demo user, e.g. usr_frank)
  KEY_ADMIN_URL  the stack output KeyAdminApiUrl (locally: the "Key admin:" URL npm start prints)
  PUBLIC_API_URL optional: the Public API's base URL (locally: http://127.0.0.1:3000/api/public/v1); the key is tried on it
  AWS_REGION     the stack's region (locally: whichever you like)
  credentials    the AWS SDK's default chain: the web product's role in AWS; locally
                 AWS_ACCESS_KEY_ID=AKIALOCALKEYADMIN000 AWS_SECRET_ACCESS_KEY=local-key-admin-secret-not-an-aws-secret
`;

const userId = process.argv[2];
const baseUrl = process.env.KEY_ADMIN_URL;
const region = process.env.AWS_REGION;
if (!userId || !baseUrl || !region) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const admin = new KeyAdminClient({ baseUrl, region });
const publicApi = process.env.PUBLIC_API_URL;

/** One request of the Public API with the key (an event of the demo data): its status. */
async function tryKey(key: string): Promise<number> {
  return (await fetch(`${publicApi}/events/evt_jazz01`, { headers: { 'x-events-api-key': key } })).status;
}

// One idempotency key per key the user asked for, kept with the request: a retry reuses it.
const idempotencyKey = randomUUID();
const created = await admin.create({ idempotencyKey, userId, name: 'Website', scopes: ['events:read'] });
if (created.replayed) throw new Error('a first create is never a replay');
// Show created.key to the user now: it is never shown again.
console.log(`created ${created.keyId} (${created.scopes.join(', ')}); key shown once: ${created.key}`);
if (publicApi) console.log(`the key on the Public API: ${await tryKey(created.key)}`);

// The answer was lost (a timeout, say) and the request is retried: same key id, no key.
const retried = await admin.create({ idempotencyKey, userId, name: 'Website', scopes: ['events:read'] });
console.log(`retried: ${retried.keyId}, replayed=${retried.replayed}, key ${'key' in retried ? 'shown again' : 'not shown again'}`);

for (const k of await admin.list(userId)) console.log(`listed: ${k.keyId} ${k.revoked ? 'revoked' : 'active'} ${JSON.stringify(k.name)}`);

const revoked = await admin.revoke(userId, created.keyId);
console.log(`revoked ${revoked.keyId} at ${revoked.revokedAt}`);
if (publicApi) console.log(`the key on the Public API after its revoke: ${await tryKey(created.key)}`);

try {
  await admin.revoke(userId, created.keyId);
} catch (error) {
  if (!(error instanceof KeyAdminError)) throw error;
  // Already revoked (a retried revoke, say): the key stays revoked; treat it as done.
  console.log(`again: ${error.status} ${error.code} (${error.field})`);
}
