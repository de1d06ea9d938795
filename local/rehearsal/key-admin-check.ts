/**
 * The key-management round trip `npm run rehearse` runs on each stage (and
 * test/rehearsal/key-admin.test.ts runs too): through the template's
 * AWS_IAM API, an unsigned create is refused; a create signed by the web
 * product's stand-in makes a key that answers 200 on the Public API at once;
 * a retried create answers the same key id without the key; after a revoke
 * the key is 401 at once. A template without the key-management API has no
 * lines.
 */
import { randomUUID } from 'node:crypto';
import { KeyAdminClient, KeyAdminError, type CreatedKey } from '../../keys/admin-client.js';
import { KEY_ADMIN_BASE_PATH } from '../../lambdas/key-admin/routes.js';
import { rehearsalRequests } from './checks.js';
import { REGION } from './iam.js';
import type { Rehearsal } from './rehearsal.js';

export interface CheckLine {
  readonly ok: boolean;
  readonly line: string;
}

/** A keyed Public API route's status with this key. */
async function publicStatus(rehearsal: Rehearsal, key: string): Promise<number> {
  const keyed = rehearsalRequests(key).find((r) => r.headers['x-events-api-key'] && r.path.startsWith('/api/public/'));
  if (!keyed) throw new Error('no keyed Public API route');
  const res = await fetch(rehearsal.urlFor(keyed.path), { headers: keyed.headers });
  await res.arrayBuffer();
  return res.status;
}

export async function keyAdminRoundTrip(rehearsal: Rehearsal, username = 'frank'): Promise<CheckLine[]> {
  const api = rehearsal.apis.find((a) => a.id.startsWith('KeyAdminApi'));
  if (!api) return [];
  const base = `${api.url}${KEY_ADMIN_BASE_PATH}`;
  const lines: CheckLine[] = [];
  const check = (ok: boolean, line: string) => lines.push({ ok, line });

  const unsigned = await fetch(`${base}/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ idempotencyKey: randomUUID(), username, name: 'unsigned' }) });
  await unsigned.arrayBuffer();
  check(unsigned.status === 403, `${unsigned.status} key admin: unsigned create refused`);

  const admin = new KeyAdminClient({ baseUrl: base, region: REGION, credentials: rehearsal.webProduct });
  const input = { idempotencyKey: randomUUID(), username, name: 'rehearsal round trip' };
  let created: CreatedKey;
  try {
    const answer = await admin.create(input);
    if (answer.replayed) throw new Error('a first create answered as a replay');
    created = answer;
  } catch (error) {
    check(false, `key admin: signed create failed: ${error instanceof KeyAdminError ? `${error.status} ${error.message}` : String(error)}`);
    return lines;
  }
  check(true, `201 key admin: signed create made ${created.keyId}`);
  const live = await publicStatus(rehearsal, created.key);
  check(live === 200, `${live} key admin: the new key on the Public API`);
  const again = await admin.create(input);
  check(again.replayed && again.keyId === created.keyId && !('key' in again), `200 key admin: retried create replayed ${again.keyId} without the key`);
  await admin.revoke(username, created.keyId);
  const revoked = await publicStatus(rehearsal, created.key);
  check(revoked === 401, `${revoked} key admin: the revoked key on the Public API`);
  return lines;
}
