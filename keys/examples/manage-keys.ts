/**
 * The example of docs/managing-keys.md: what the web product's backend does
 * when a user creates, lists and revokes keys in its settings area.
 *
 *   KEY_ADMIN_URL=URL AWS_REGION=REGION npx tsx keys/examples/manage-keys.ts USER_ID
 *
 * USER_ID: the web product's id of the user whose keys it makes, lists and
 * revokes (locally, a demo user such as usr_frank): a key belongs to a user
 * id, never to a username. Credentials come from the AWS SDK's default chain: in
 * AWS the web product's role; locally the documented local pair in
 * AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
 */
import { randomUUID } from 'node:crypto';
import { KeyAdminClient, KeyAdminError } from '../admin-client.js';

const USAGE = `usage: KEY_ADMIN_URL=URL AWS_REGION=REGION npx tsx keys/examples/manage-keys.ts USER_ID

  USER_ID        the id of the user whose keys are created, listed and revoked (locally: a demo user, e.g. usr_frank)
  KEY_ADMIN_URL  the stack output KeyAdminApiUrl (locally: the "Key admin:" URL npm start prints)
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

// One idempotency key per key the user asked for, kept with the request: a retry reuses it.
const idempotencyKey = randomUUID();
const created = await admin.create({ idempotencyKey, userId, name: 'Website', scopes: ['events:read'] });
if (created.replayed) throw new Error('a first create is never a replay');
// Show created.key to the user now: it is never shown again.
console.log(`created ${created.keyId} (${created.scopes.join(', ')}); key shown once: ${created.key.slice(0, 6)}…`);

// The answer was lost (a timeout, say) and the request is retried: same key id, no key.
const retried = await admin.create({ idempotencyKey, userId, name: 'Website', scopes: ['events:read'] });
console.log(`retried: ${retried.keyId}, replayed=${retried.replayed}, key ${'key' in retried ? 'shown again' : 'not shown again'}`);

for (const k of await admin.list(userId)) console.log(`listed: ${k.keyId} ${k.revoked ? 'revoked' : 'active'} ${JSON.stringify(k.name)}`);

const revoked = await admin.revoke(userId, created.keyId);
console.log(`revoked ${revoked.keyId} at ${revoked.revokedAt}`);

try {
  await admin.revoke(userId, created.keyId);
} catch (error) {
  if (!(error instanceof KeyAdminError)) throw error;
  // Already revoked (a retried revoke, say): the key stays revoked; treat it as done.
  console.log(`again: ${error.status} ${error.code} (${error.field})`);
}
