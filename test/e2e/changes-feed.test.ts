/**
 * The changes feeds over HTTP on the local server (PRODUCT P16): a start from
 * no cursor holds the scope's members once, as upserts; every bad input is a
 * 400 naming its field (cursor malformed, tampered with, of another scope;
 * limit out of range), while an unknown parameter is ignored as on every route; an expired cursor is a 410 with
 * P16's message; unknown users and non-public events answer as their read
 * routes. Every answer is also checked against the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CURSOR_LIFETIME_SECONDS, encodeCursor, keyIdOf, parseCursor, everyShardAt } from '../../lambdas/core/feed-cursor.js';
import { legacyCursor, signed, TEST_CURSOR_KEY } from '../support/feed-keys.js';
import { KEYS, NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';

type Page = { data: { changes: { id: string; change: string; event?: { id: string; creator: { username: string } }; guest?: { id: string } }[]; next_cursor: string; has_more: boolean } };
type Failure = { message: string; errors?: { field: string; message: string }[] };

let server: TestServer;
const key = { 'x-events-api-key': KEYS.both };
const call = <T = Page>(path: string, headers: Record<string, string> = key) => get<T>(`${server.publicBaseUrl}${path}`, headers);
const nowSeconds = Date.parse(NOW) / 1000;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

/** Every page from `path` until has_more is false. */
async function readAll(path: string, limit: number): Promise<{ changes: Page['data']['changes']; cursor: string }> {
  const changes: Page['data']['changes'] = [];
  let cursor = '';
  for (let more = true; more; ) {
    const page = await call(`${path}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(page.status).toBe(200);
    changes.push(...page.body.data.changes);
    cursor = page.body.data.next_cursor;
    more = page.body.data.has_more;
  }
  return { changes, cursor };
}

describe('changes feeds over HTTP (PRODUCT P16)', () => {
  it('from no cursor: every public event once, as upserts, equal to the event route; then nothing more', async () => {
    const { changes, cursor } = await readAll('/changes/events', 2);
    expect(changes.every((c) => c.change === 'upserted')).toBe(true);
    const ids = changes.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of changes) expect((await call<{ data: unknown }>(`/events/${c.id}`)).body.data).toEqual(c.event);
    expect(ids).not.toContain('evt_secret03');
    const later = await call(`/changes/events?cursor=${encodeURIComponent(cursor)}`);
    expect(later.body.data).toEqual({ changes: [], next_cursor: expect.any(String), has_more: false });
  });

  it("a host's feed holds the host's events; a guest feed the event's guests", async () => {
    const hosted = await readAll('/changes/users/alice/events', 100);
    expect(hosted.changes.length).toBeGreaterThan(0);
    expect(hosted.changes.every((c) => c.event?.creator.username === 'Alice')).toBe(true);
    const list = await call<{ data: { id: string }[] }>('/users/alice/upcoming-events?limit=100');
    for (const e of list.body.data) expect(hosted.changes.map((c) => c.id)).toContain(e.id);
    const guests = await readAll('/changes/events/evt_jazz01/guests', 100);
    const guestList = await call<{ data: { id: string }[] }>('/events/evt_jazz01/guests?status=all&limit=100');
    expect(guests.changes.map((c) => c.guest)).toEqual(expect.arrayContaining(guestList.body.data));
    expect(guests.changes).toHaveLength(guestList.body.data.length);
  });

  it('bad input is a 400 naming the field, and never reaches DynamoDB beyond the authorizer', async () => {
    const good = (await call('/changes/events?limit=1')).body.data.next_cursor;
    const [version, payload, check] = good.split('.') as [string, string, string];
    const flipped = `${version}.${payload.slice(0, -1)}${payload.endsWith('A') ? 'B' : 'A'}.${check}`;
    const host = (await call('/changes/users/alice/events?limit=1')).body.data.next_cursor;
    const cases: [string, string][] = [
      ['/changes/events?limit=0', 'limit'],
      ['/changes/events?limit=101', 'limit'],
      ['/changes/events?limit=ten', 'limit'],
      ['/changes/events?cursor=nonsense', 'cursor'],
      [`/changes/events?cursor=${encodeURIComponent(flipped)}`, 'cursor'],
      [`/changes/events?cursor=${encodeURIComponent(`x${good}`)}`, 'cursor'],
      [`/changes/events?cursor=${encodeURIComponent(host)}`, 'cursor'],
      [`/changes/users/alice/events?cursor=${encodeURIComponent(good)}`, 'cursor'],
      [`/changes/users/bob.builder/events?cursor=${encodeURIComponent(host)}`, 'cursor'],
      [`/changes/events/evt_jazz01/guests?cursor=${encodeURIComponent(good)}`, 'cursor'],
    ];
    for (const [path, field] of cases) {
      server.calls.splice(0);
      const reply = await call<Failure>(path);
      expect({ path, status: reply.status, fields: reply.body.errors?.map((e) => e.field) }).toEqual({ path, status: 400, fields: [field] });
      // The authorizer's two reads (the key's item, its user's) and nothing more; a foreign host cursor needs the user lookup too.
      if (!path.startsWith('/changes/users/bob')) expect({ path, calls: server.calls.length }).toEqual({ path, calls: 2 });
    }
  });

  it('a cursor older than 30 days is a 410 with the message; one just younger still works', async () => {
    const at = (asOf: number) => encodeURIComponent(signed({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(0), after: '', asOf }));
    const expired = await call<Failure>(`/changes/events?cursor=${at(nowSeconds - CURSOR_LIFETIME_SECONDS - 1)}`);
    expect({ status: expired.status, message: expired.body.message }).toEqual({ status: 410, message: 'Cursor expired: start again without a cursor.' });
    expect((await call(`/changes/events?cursor=${at(nowSeconds - CURSOR_LIFETIME_SECONDS + 60)}`)).status).toBe(200);
    // Whatever key signed it (one retired since: two rotations while the consumer was away), and in the format before key ids.
    const old = { scope: 'EVENTS', mode: 'entries' as const, position: everyShardAt(0), after: '', asOf: nowSeconds - CURSOR_LIFETIME_SECONDS - 1 };
    for (const cursor of [encodeCursor(old, Buffer.from('a retired key')), legacyCursor(old, Buffer.from('a retired key')), legacyCursor(old, TEST_CURSOR_KEY)]) {
      expect((await call<Failure>(`/changes/events?cursor=${encodeURIComponent(cursor)}`)).status).toBe(410);
    }
  });

  it('a cursor given before cursors named their key still works within its 30 days, under the key that signed it only', async () => {
    const cursor = { scope: 'EVENTS', mode: 'entries' as const, position: everyShardAt(0), after: '', asOf: nowSeconds - 60 };
    expect((await call(`/changes/events?cursor=${encodeURIComponent(legacyCursor(cursor, TEST_CURSOR_KEY))}`)).status).toBe(200);
    const forged = await call<Failure>(`/changes/events?cursor=${encodeURIComponent(legacyCursor(cursor, Buffer.from('not the server key')))}`);
    expect({ status: forged.status, fields: forged.body.errors?.map((e) => e.field) }).toEqual({ status: 400, fields: ['cursor'] });
  });

  it('unknown users and non-public events answer as their read routes; the guest feed needs guests:read', async () => {
    const user = await call<Failure>('/changes/users/nobody/events');
    const route = await call<Failure>('/users/nobody/events');
    expect([user.status, user.body.message]).toEqual([route.status, route.body.message]);
    expect((await call<Failure>('/changes/events/evt_secret03/guests')).status).toBe(404);
    expect((await call<Failure>('/changes/events/evt_missing/guests')).status).toBe(404);
    expect((await call<Failure>('/changes/events/evt_jazz01/guests', { 'x-events-api-key': KEYS.eventsOnly })).status).toBe(403);
  });

  it('the cursor is opaque, versioned, names its scope and its key, and is signed with the key', () => {
    const cursor = { scope: 'HOST#usr_1', mode: 'entries' as const, position: everyShardAt(7), after: '', asOf: nowSeconds };
    const c = signed(cursor);
    expect(c.startsWith(`f3.${keyIdOf(TEST_CURSOR_KEY)}.`)).toBe(true);
    expect(parseCursor(c)?.cursor).toEqual(cursor);
    expect(parseCursor(c.replace('f3.', 'f1.'))).toBeNull();
    // The format before key ids is still read (consumers hold such cursors); the one before that is not.
    expect(parseCursor(legacyCursor(cursor, TEST_CURSOR_KEY))?.cursor).toEqual(cursor);
    // Another key gives another key id and another signature of the same payload.
    const other = encodeCursor(cursor, Buffer.from('another key')).split('.');
    expect(other[2]).toBe(c.split('.')[2]);
    expect([other[1], other[3]]).not.toContain(c.split('.')[1]);
    expect(other[3]).not.toBe(c.split('.')[3]);
  });

  it('a cursor signed with another key, or from the future, is a 400 naming cursor, before any read', async () => {
    const forged = encodeCursor({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(0), after: '', asOf: nowSeconds }, Buffer.from('not the server key'));
    const future = signed({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(0), after: '', asOf: nowSeconds + 3_600 });
    for (const cursor of [forged, future]) {
      server.calls.splice(0);
      const reply = await call<Failure>(`/changes/events?cursor=${encodeURIComponent(cursor)}`);
      expect({ status: reply.status, fields: reply.body.errors?.map((e) => e.field), calls: server.calls.length }).toEqual({ status: 400, fields: ['cursor'], calls: 2 }); // the authorizer's two reads only
    }
  });
});
