/**
 * The key-management round trip `npm run rehearse` runs on each stage (and
 * test/rehearsal/key-admin.test.ts runs too): through the template's
 * AWS_IAM API, an unsigned create is refused; a create signed by the web
 * product's stand-in makes a key that answers 200 on the Public API at once;
 * a retried create answers the same key id without the key; after a revoke
 * the key is 401 at once. A template without the key-management API has no
 * lines. And (foreignKeysRefused) the roles that may delete this stack's
 * API Gateway keys may touch no other key, stage or plan.
 */
import { randomUUID } from 'node:crypto';
import { KeyAdminClient, KeyAdminError, type CreatedKey } from '../../keys/admin-client.js';
import { USAGE_PLAN_TAG } from '../../lambdas/key-admin/usage-plan.js';
import { foreignApiGatewayCalls } from './api-keys.js';
import { KEY_ADMIN_BASE_PATH } from '../../lambdas/key-admin/routes.js';
import { rehearsalRequests } from './checks.js';
import { REGION, evaluate } from './iam.js';
import type { Rehearsal } from './rehearsal.js';

export interface CheckLine {
  readonly ok: boolean;
  readonly line: string;
}

/** A keyed Public API route's status with this key. */
async function publicStatus(rehearsal: Rehearsal, key: string): Promise<number> {
  const keyed = rehearsalRequests(key, rehearsal.cursorKey).find((r) => r.headers['x-events-api-key'] && r.path.startsWith('/api/public/'));
  if (!keyed) throw new Error('no keyed Public API route');
  const res = await fetch(rehearsal.urlFor(keyed.path), { headers: keyed.headers });
  await res.arrayBuffer();
  return res.status;
}

export async function keyAdminRoundTrip(rehearsal: Rehearsal, userId = 'usr_frank'): Promise<CheckLine[]> {
  const api = rehearsal.apis.find((a) => a.id.startsWith('KeyAdminApi'));
  if (!api) return [];
  const base = `${api.url}${KEY_ADMIN_BASE_PATH}`;
  const lines: CheckLine[] = [];
  const check = (ok: boolean, line: string) => lines.push({ ok, line });

  const unsigned = await fetch(`${base}/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ idempotencyKey: randomUUID(), userId, name: 'unsigned' }) });
  await unsigned.arrayBuffer();
  check(unsigned.status === 403, `${unsigned.status} key admin: unsigned create refused`);

  const admin = new KeyAdminClient({ baseUrl: base, region: REGION, credentials: rehearsal.webProduct });
  const input = { idempotencyKey: randomUUID(), userId, name: 'rehearsal round trip' };
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
  await admin.revoke(userId, created.keyId);
  const revoked = await publicStatus(rehearsal, created.key);
  check(revoked === 401, `${revoked} key admin: the revoked key on the Public API`);
  return lines;
}

/**
 * The rehearsal's IAM evaluation of the roles near API Gateway keys (the
 * key-management function's and the ingest's): every action on a foreign
 * API key, stage or usage plan, and on their tags, refused
 * (foreignApiGatewayCalls). A pair IAM does not know (an action with no such
 * resource type) is left out, as AWS could not be asked it. Each line also
 * holds the control: the key-management function may delete a key of the
 * stack's own plan; the ingest may not (it closes a deleted user's keys by
 * invoking that function, and holds no API Gateway action).
 */
export async function foreignKeysRefused(rehearsal: Rehearsal): Promise<CheckLine[]> {
  const lines: CheckLine[] = [];
  const planId = rehearsal.usagePlanIds[0];
  if (!planId) return lines;
  for (const [fn, role] of rehearsal.roles) {
    if (!fn.startsWith('KeyAdminFunction') && !fn.startsWith('IngestFunction')) continue;
    let asked = 0;
    const allowed: string[] = [];
    for (const call of foreignApiGatewayCalls(REGION, planId, USAGE_PLAN_TAG)) {
      const { allowed: ok, decision } = await evaluate({ fn, ...call }, role.roleName, role.policies);
      if (decision.includes('no.resource.types')) continue;
      asked++;
      if (ok) allowed.push(`${call.action} ${call.resource}`);
    }
    // The control: the same evaluation lets the role delete a key of its own plan, so the refusals are the policy's, not an evaluator that refuses everything.
    const own = await evaluate(
      { fn, action: 'apigateway:DELETE', resource: `arn:aws:apigateway:${REGION}::/apikeys/ownplankey01`, context: { [`aws:ResourceTag/${USAGE_PLAN_TAG}`]: planId } },
      role.roleName,
      role.policies,
    );
    const refused = `${asked - allowed.length} of ${asked} API Gateway actions on a foreign key, stage or plan (and their tags) refused`;
    const mayDeleteOwn = fn.startsWith('KeyAdminFunction');
    lines.push({
      ok: allowed.length === 0 && asked > 0 && own.allowed === mayDeleteOwn,
      line: `${fn.replace(/[0-9A-F]{8}$/, '')}: ${refused}${allowed.length ? `; allowed: ${allowed.slice(0, 3).join(', ')}` : ''}; its own plan's key ${own.allowed ? 'may be deleted' : 'may not be deleted either'}`,
    });
  }
  return lines;
}
