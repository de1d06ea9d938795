/**
 * Issue 37's outside check, run as an outside tool would: a real `npm start`
 * process (daily quota 3, so a day's worth of requests can be spent), the
 * key-management port through the signed admin client, `npm run data:apply`
 * as a separate process on its store, every answer read over HTTP.
 *
 * - a user deleted by a change record: her keys, seeded and made, answer 401
 *   from the next request on, and the web product finds her gone;
 * - revokes racing the creates of the same key (the revoke fired at the key
 *   id as soon as `list` shows it, while its create may still be running): a
 *   revoke that answered 200 leaves a key that never authenticates, and the
 *   user's active keys are exactly the ones that do;
 * - revoking and re-creating keys to outspend the per-user bound: the
 *   creates stop at 10 a UTC day, so the requests stop at the bound.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KeyAdminClient, KeyAdminError, type CreatedKey, type KeyInfo } from '../../keys/admin-client.js';
import { MAX_ACTIVE_KEYS, MAX_CREATES_PER_DAY } from '../../lambdas/core/key-rules.js';
import { LOCAL_KEY_ADMIN_PRINCIPAL } from '../../local/sigv4-check.js';
import { KEYS } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { runTs, waitForOutput } from '../support/process.js';

const DAILY_QUOTA = 3;
let server: ReturnType<typeof runTs>;
let publicUrl: string;
let store: string;
let admin: KeyAdminClient;
beforeAll(async () => {
  server = runTs('local/cli/start.ts', ['--port', '0', '--key-admin-port', '0', '--daily-quota', String(DAILY_QUOTA)]);
  [, publicUrl] = (await waitForOutput(server, /Public API: (\S+)\n/)) as [string, string];
  [, store] = (await waitForOutput(server, /Store: +(\S+)/)) as [string, string];
  const [, keyAdminUrl] = (await waitForOutput(server, /Key admin: +(\S+)/)) as [string, string];
  admin = new KeyAdminClient({ baseUrl: keyAdminUrl, region: 'eu-west-1', credentials: LOCAL_KEY_ADMIN_PRINCIPAL });
}, 60_000);
afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.done;
});

const status = async (key: string) => (await get(`${publicUrl}/users/frank/events`, { authorization: `Bearer ${key}` })).status;
/** A refusal's code, or 'ok'. */
const outcome = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (e: unknown) => {
      if (e instanceof KeyAdminError) return `${e.status} ${e.code}`;
      throw e;
    },
  );
let idem = 0;
const nextIdem = () => `outside-check-${String(++idem).padStart(4, '0')}`;

describe('a user deleted through npm run data:apply', () => {
  it('her keys, seeded and made, answer 401 from the next request on, and the web product finds her gone', async () => {
    const made = (await admin.create({ idempotencyKey: nextIdem(), userId: 'usr_alice', name: 'Before her deletion' })) as CreatedKey;
    expect([await status(made.key), await status(KEYS.both), await status(KEYS.eventsOnly)]).toEqual([200, 200, 200]);

    const file = join(mkdtempSync(join(tmpdir(), 'pe-keys-outside-')), 'delete-alice.jsonl');
    writeFileSync(file, `${JSON.stringify({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' })}\n`);
    const applied = await runTs('local/cli/data-apply.ts', [file, '--endpoint', store]).done;
    expect({ code: applied.code, stdout: applied.stdout }).toEqual({ code: 0, stdout: expect.stringContaining('applied: 1\n') });

    expect([await status(made.key), await status(KEYS.both), await status(KEYS.eventsOnly)]).toEqual([401, 401, 401]);
    expect(await outcome(admin.list('usr_alice'))).toBe('404 UNKNOWN_USER');
  });
});

describe('revokes racing the creates of the same key, over the key-management API', () => {
  it.each(['usr_frank', 'usr_dave'])('for %s, every create of the day raced: a revoke that answered 200 leaves a key that never authenticates', async (userId) => {
    const seen = new Set((await admin.list(userId)).map((k) => k.keyId));
    const rounds: { create: string; revoke: string; caughtInFlight: boolean; authenticates?: number }[] = [];
    for (let round = 0; round < MAX_CREATES_PER_DAY; round++) {
      let settled = false;
      const creating = admin.create({ idempotencyKey: nextIdem(), userId, name: `race ${round}` }).finally(() => (settled = true));
      const created = outcome(creating);
      // The web product's other request: revoke the new key the moment its id is listed (its create may still be running).
      let fresh: KeyInfo | undefined;
      let caughtInFlight = false;
      while (!fresh) {
        const before = settled;
        fresh = (await admin.list(userId)).find((k) => !seen.has(k.keyId));
        if (fresh) caughtInFlight = !before;
        else if (settled && !fresh) break;
      }
      if (!fresh) throw new Error(`round ${round}: the create answered ${await created} and listed no new key`);
      seen.add(fresh.keyId);
      const revoked = await outcome(admin.revoke(userId, fresh.keyId));
      const create = await created;
      const key = create === 'ok' ? ((await creating) as CreatedKey).key : undefined;
      rounds.push({ create, revoke: revoked, caughtInFlight, ...(key ? { authenticates: await status(key) } : {}) });
    }
    // Each round: the revoke is answered 200 (it found the key's record), and whatever the create answered, the key is refused.
    for (const r of rounds) {
      expect(r.revoke).toBe('ok');
      expect(['ok', '409 REVOKED_WHILE_CREATING']).toContain(r.create);
      if (r.create === 'ok') expect(r.authenticates).toBe(401);
    }
    // Nothing left active but what the user had before: the revoked keys gave their slots back.
    const after = await admin.list(userId);
    expect(after.filter((k) => !k.revoked && seen.has(k.keyId) && k.name.startsWith('race '))).toEqual([]);
    expect(after.filter((k) => !k.revoked).length).toBeLessThanOrEqual(MAX_ACTIVE_KEYS);
    process.stdout.write(`${userId}: ${rounds.filter((r) => r.caughtInFlight).length} of ${rounds.length} revokes sent while their create was in flight\n`);
  });
});

describe('revoking and re-creating keys to outspend the per-user bound', () => {
  it('each key spends its day, then is revoked and another made: the creates stop at 10 a UTC day, so the requests at 10 keys × the quota; the next UTC day, more', async () => {
    let served = 0;
    let refusedCreate: string | undefined;
    for (let made = 0; made < MAX_CREATES_PER_DAY + 5 && !refusedCreate; made++) {
      const created = await admin.create({ idempotencyKey: nextIdem(), userId: 'usr_eve', name: `spend ${made}` }).then(
        (c) => c as CreatedKey,
        (e: unknown) => {
          if (!(e instanceof KeyAdminError)) throw e;
          refusedCreate = `${e.status} ${e.code} ${e.field}`;
          return undefined;
        },
      );
      if (!created) break;
      // Spend the key's whole day: its quota, then 429.
      for (let s = await status(created.key); s === 200; s = await status(created.key)) served++;
      expect(await status(created.key)).toBe(429);
      await admin.revoke('usr_eve', created.keyId);
    }
    // eve-series held no key at the day's start: her day is the 10 creates' keys, each its quota, and nothing more.
    expect({ refusedCreate, served }).toEqual({ refusedCreate: '429 CREATE_LIMIT userId', served: MAX_CREATES_PER_DAY * DAILY_QUOTA });

    // The next UTC day (the server's movable clock): a create works again.
    const moved = await fetch(`${new URL(publicUrl).origin}/local/clock`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ offset_days: 1 }) });
    expect(moved.status).toBe(200);
    const tomorrow = (await admin.create({ idempotencyKey: nextIdem(), userId: 'usr_eve', name: 'next day' })) as CreatedKey;
    expect(await status(tomorrow.key)).toBe(200);
  });
});
