/**
 * Nobody can make a cursor the API did not give (PRODUCT P16: malformed,
 * tampered with or from another scope → 400 naming `cursor`). The review
 * (R2) showed the earlier cursor's check was an unkeyed SHA-256 of its
 * payload: anyone could edit a cursor and recompute it with node:crypto, so
 * an edited cursor answered 200, an expired one edited back to life too, a
 * future `issued` never expired, and position 0 replayed every id ever
 * removed from a scope. Here an outsider does all of that the way anyone
 * reading the code could, over HTTP against the real local server: every
 * forgery is a 400 before any read, and the real cursor still works.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, createHmac } from 'node:crypto';
import { CURSOR_LIFETIME_SECONDS, FEED_SHARDS, everyShardAt } from '../../lambdas/core/feed-cursor.js';
import { TEST_CURSOR_KEY, signed, unshardedCursor } from '../support/feed-keys.js';
import { KEYS, NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';

type Page = { data?: { changes: { id: string; change: string }[]; next_cursor: string; has_more: boolean }; message?: string; errors?: { field: string }[] };
let server: TestServer;
const call = (path: string) => get<Page>(`${server.publicBaseUrl}${path}`, { 'x-events-api-key': KEYS.both });
const now = Date.parse(NOW) / 1000;

/** `position`: one per head shard (a single number in cursors from before the shards). */
type Payload = [string, string, number[] | number, string, number];
const payloadOf = (cursor: string): Payload => JSON.parse(Buffer.from(cursor.split('.')[2]!, 'base64url').toString('utf8')) as Payload;
/**
 * What an outsider does: decode the payload, edit it, and seal it again with
 * a check anyone can compute; as cursors are now (naming the real cursor's
 * key) and as they were before they named a key (still read, for consumers
 * holding one).
 */
function forge(cursor: string, edit: (v: Payload) => Payload, seal: (signed: string) => string): string[] {
  const keyId = cursor.split('.')[1]!;
  const edited = Buffer.from(JSON.stringify(edit(payloadOf(cursor)))).toString('base64url');
  return [`f3.${keyId}.${edited}`, `f2.${edited}`].map((signed) => `${signed}.${seal(signed)}`);
}
const seals: Record<string, (s: string) => string> = {
  'an unkeyed SHA-256': (s) => createHash('sha256').update(s).digest('base64url').slice(0, 22),
  'an HMAC under a guessed key': (s) => createHmac('sha256', 'events').update(s).digest('base64url').slice(0, 22),
  'an HMAC under an empty key': (s) => createHmac('sha256', '').update(s).digest('base64url').slice(0, 22),
};

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('feed cursors cannot be forged (R2)', () => {
  it('an edited cursor, an expired one edited back to life and one dated in the future are all 400 naming cursor, before any read', async () => {
    const real = (await call('/changes/events?limit=2')).body.data!.next_cursor;
    for (const [how, seal] of Object.entries(seals)) {
      const forgeries = {
        'position 0 (every removal ever)': forge(real, ([scope]) => [scope, 'e', everyShardAt(0), '', now], seal),
        'another scope': forge(real, ([, mode, position, after, asOf]) => ['HOST#usr_alice', mode, position, after, asOf], seal),
        'a later start': forge(real, ([scope, mode, , after, asOf]) => [scope, mode, everyShardAt(1_000_000), after, asOf], seal),
        'revived after 31 days': forge(real, ([scope, mode, position, after]) => [scope, mode, position, after, now], seal),
        'ten years ahead': forge(real, ([scope, mode, position, after]) => [scope, mode, position, after, now + 10 * 365 * 86_400], seal),
      };
      for (const [what, cursors] of Object.entries(forgeries)) {
        for (const cursor of cursors) {
          server.calls.splice(0);
          const reply = await call(`/changes/events?cursor=${encodeURIComponent(cursor)}`);
          expect({ how, what, cursor, status: reply.status, fields: reply.body.errors?.map((e) => e.field), reads: server.calls.length }).toEqual({ how, what, cursor, status: 400, fields: ['cursor'], reads: 2 }); // the authorizer's two (the key's item, its user's), no more
        }
      }
    }
    expect((await call(`/changes/events?cursor=${encodeURIComponent(real)}`)).status).toBe(200);
  });

  it('even a cursor the API signed is refused when dated in the future, and answers 410 once older than 30 days', async () => {
    const at = (asOf: number) => encodeURIComponent(signed({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(0), after: '', asOf }));
    expect((await call(`/changes/events?cursor=${at(now + 3_600)}`)).status).toBe(400);
    expect((await call(`/changes/events?cursor=${at(now - CURSOR_LIFETIME_SECONDS - 1)}`)).status).toBe(410);
    expect((await call(`/changes/events?cursor=${at(now)}`)).status).toBe(200);
  });

  it('a start from no cursor never hands out the history: its first cursor lists the current members, never a position 0 of a scope with entries', async () => {
    const first = (await call('/changes/events')).body.data!;
    expect(first.changes).toEqual([]);
    expect(first.has_more).toBe(true);
    const [scope, mode, position] = payloadOf(first.next_cursor);
    expect({ scope, mode }).toEqual({ scope: 'EVENTS', mode: 'm' });
    // One position per head shard: the scope has entries, so some shard is past 0.
    expect(position).toHaveLength(FEED_SHARDS);
    expect(Array.isArray(position) && position.some((p) => p > 0)).toBe(true);
  });

  it('a genuine cursor from before the head shards (one position) answers 410 within its 30 days, a forged one 400', async () => {
    for (const how of ['keyed', 'legacy'] as const) {
      const old = (key: Uint8Array) => encodeURIComponent(unshardedCursor({ scope: 'EVENTS', mode: 'entries', position: 42, after: '', asOf: now - 60 }, key, how));
      expect((await call(`/changes/events?cursor=${old(TEST_CURSOR_KEY)}`)).status).toBe(410);
      expect((await call(`/changes/events?cursor=${old(Buffer.from('not the server key'))}`)).status).toBe(400);
    }
  });
});
