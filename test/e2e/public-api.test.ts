/**
 * The Public API over real HTTP against the local server (dynalite, real
 * table, real handlers, API Gateway emulation), and in jest's rehearsal
 * project against the synthesized stack's bundles and gateway
 * (test/support/target.ts), clock pinned to NOW.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PublicEvent, Guest } from '../../lambdas/core/event-mapper.js';
import type { Pagination } from '../../lambdas/core/pagination.js';
import { KEYS } from '../support/fixtures.js';
import { get, type Reply } from '../support/http.js';
import { startTarget, type Target } from '../support/target.js';

type Envelope<T> = { success: boolean; message: string; data: T; pagination?: Pagination; errors?: { field: string; message: string }[] };

let server: Target;
let base: string;
const auth = { 'x-events-api-key': KEYS.both };
const api = <T = unknown>(path: string, headers: Record<string, string> = auth) => get<Envelope<T>>(`${base}${path}`, headers);
const ids = (events: { id: string }[]) => events.map((e) => e.id);

beforeAll(async () => {
  server = await startTarget();
  base = server.publicBaseUrl;
});
afterAll(async () => server?.close());

/**
 * A request whose path parameter is an empty segment. AWS: `{param}` matches
 * no empty segment, so no method matches and API Gateway answers itself
 * (MISSING_AUTHENTICATION_TOKEN, "a method or resource that does not exist":
 * https://repost.aws/knowledge-center/api-gateway-authentication-token-errors),
 * the stack's 404 envelope, before the authorizer. The local server lets the
 * handler name the missing parameter (PRODUCT P6). Read raw on the rehearsal:
 * the contract check matches `{param}` as the local server does.
 */
async function expectEmptySegment(path: string, localStatus: number, localMessage?: string) {
  if (server.name === 'rehearsal') {
    const res = await fetch(`${base}${path}`, { headers: auth });
    expect([res.status, await res.json()]).toEqual([404, { success: false, message: 'Resource not found.' }]);
  } else expectError(await api(path), localStatus, localMessage);
}

function expectError(reply: Reply<Envelope<unknown>>, status: number, message?: string) {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/json');
  expect(reply.body.success).toBe(false);
  if (message !== undefined) expect(reply.body.message).toBe(message);
  expect(reply.body).not.toHaveProperty('data');
}

describe('GET /events/{eventId}', () => {
  it('returns the full Public Event object', async () => {
    const reply = await api<PublicEvent>('/events/evt_jazz01');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      success: true,
      message: 'Event evt_jazz01 retrieved',
      data: {
        id: 'evt_jazz01',
        title: 'Rooftop Jazz',
        description: '**Live** jazz at sunset.',
        cover: 'https://images.example.com/e/jazz.jpg',
        location: 'Skyline Terrace, 12 Main St',
        start_date: '2027-01-15T01:00:00.000Z',
        end_date: '2027-01-15T04:00:00.000Z',
        timezone: 'America/Chicago',
        status: 'published',
        visibility: 'public',
        cost: 15.5,
        created_at: '2026-10-01T12:00:00.000Z',
        creator: { id: 'usr_alice', username: 'Alice', image: 'https://images.example.com/u/alice.png', verification_status: 'verified' },
        links: { spotify_url: 'https://open.spotify.com/playlist/abc', wavlake_url: null },
        contributions: { cashapp: '$alicejazz', venmo: null, paypal: 'paypal.me/alicejazz', btc_lightning: 'alice@getalby.com' },
      },
    });
  });

  it('fills the documented fallbacks and keeps optional fields as null', async () => {
    const { body } = await api<PublicEvent>('/events/evt_meetup02');
    expect(body.data).toMatchObject({
      description: '',
      cover: `${server.siteUrl}/images/default-cover.png`,
      location: '',
      end_date: null,
      cost: null,
      links: { spotify_url: null, wavlake_url: null },
      contributions: { cashapp: null, venmo: null, paypal: null, btc_lightning: null },
    });
    const bob = await api<PublicEvent>('/events/evt_bobtalk09');
    expect(bob.body.data.creator).toEqual({ id: 'usr_bob', username: 'bob.builder', image: expect.stringMatching(/\/images\/default-avatar\.png$/), verification_status: null });
  });

  it.each(['evt_secret03', 'evt_draft04', 'evt_hack08', 'evt_unlisted11', 'evt_does_not_exist'])('answers 404 for %s (private, draft, cancelled, unlisted or missing)', async (id) => {
    expectError(await api(`/events/${id}`), 404, 'Resource not found.');
  });

  it.each([
    ['/events/not-an-id', 'eventId'],
    ['/events/evt_', 'eventId'],
    ['/events/evt_a%2Fb', 'eventId'],
  ])('answers 400 for the invalid id in %s', async (path, field) => {
    const reply = await api(path);
    expectError(reply, 400);
    expect(reply.body.errors?.[0]?.field).toBe(field);
  });

  it('answers 400 "Event id is required" when the id is missing', async () => {
    await expectEmptySegment('/events/', 400, 'Event id is required');
  });
});

describe('GET /events/{eventId}/guests', () => {
  it('lists yes guests by default, in rsvp order, with top-level pagination', async () => {
    const reply = await api<Guest[]>('/events/evt_jazz01/guests');
    expect(reply.status).toBe(200);
    expect(reply.body.data.map((g) => g.username)).toEqual(['bob.builder', 'eve-series', 'frank']);
    expect(reply.body.pagination).toEqual({ limit: 10, offset: 0, total: 3 });
    expect(reply.body.data[0]).toEqual({
      id: 'usr_bob',
      username: 'bob.builder',
      name: null,
      image: null,
      verification_status: null,
      rsvp_status: 'yes',
      rsvp_date: '2026-10-02T08:00:00.000Z',
    });
  });

  it('status=all lists every linked guest, ties on rsvp_date broken by user id, anonymous guests never', async () => {
    const { body } = await api<Guest[]>('/events/evt_jazz01/guests?status=all');
    expect(body.data.map((g) => [g.id, g.rsvp_status])).toEqual([
      ['usr_bob', 'yes'],
      ['usr_carol', 'maybe'],
      ['usr_dave', 'no'],
      ['usr_eve', 'yes'],
      ['usr_frank', 'yes'],
    ]);
    expect(body.pagination?.total).toBe(5);
    expect(body.data[4]?.rsvp_date).toBe('2026-10-05T07:30:00.000Z');
  });

  it.each([
    ['maybe', ['usr_carol']],
    ['no', ['usr_dave']],
  ])('status=%s filters', async (status, expected) => {
    const { body } = await api<Guest[]>(`/events/evt_jazz01/guests?status=${status}`);
    expect(body.data.map((g) => g.id)).toEqual(expected);
    expect(body.pagination?.total).toBe(expected.length);
  });

  it('pages by offset until offset + limit >= total', async () => {
    const seen: string[] = [];
    for (let offset = 0, total = Infinity; offset < total; offset += 2) {
      const { body } = await api<Guest[]>(`/events/evt_jazz01/guests?status=all&limit=2&offset=${offset}`);
      expect(body.pagination).toMatchObject({ limit: 2, offset });
      total = body.pagination!.total;
      seen.push(...body.data.map((g) => g.id));
    }
    expect(seen).toEqual(['usr_bob', 'usr_carol', 'usr_dave', 'usr_eve', 'usr_frank']);
  });

  it('answers an empty page past the end', async () => {
    const { body } = await api<Guest[]>('/events/evt_jazz01/guests?offset=50');
    expect(body.data).toEqual([]);
    expect(body.pagination).toEqual({ limit: 10, offset: 50, total: 3 });
  });

  it.each(['evt_secret03', 'evt_draft04', 'evt_nope'])('answers 404 for the guests of %s', async (id) => {
    expectError(await api(`/events/${id}/guests`), 404, 'Resource not found.');
  });

  it('answers 400 with every invalid parameter listed', async () => {
    const reply = await api('/events/evt_jazz01/guests?status=going&limit=500&offset=-1');
    expectError(reply, 400, 'Status must be one of: yes, maybe, no, all');
    expect(reply.body.errors?.map((e) => e.field)).toEqual(['status', 'limit', 'offset']);
  });
});

describe('user event lists', () => {
  it('upcoming-events: hosted, start >= now, earliest first, ties by id', async () => {
    const reply = await api<PublicEvent[]>('/users/alice/upcoming-events');
    expect(reply.status).toBe(200);
    expect(ids(reply.body.data)).toEqual(['evt_jazz01', 'evt_workshop05', 'evt_tie07a', 'evt_tie07b']);
    expect(reply.body.pagination).toEqual({ limit: 10, offset: 0, total: 4 });
  });

  it('past-events: start < now, most recent first', async () => {
    const { body } = await api<PublicEvent[]>('/users/alice/past-events');
    expect(ids(body.data)).toEqual(['evt_meetup02', 'evt_picnic06']);
  });

  it('looks users up case-insensitively', async () => {
    const { body } = await api<PublicEvent[]>('/users/ALICE/upcoming-events?limit=1');
    expect(ids(body.data)).toEqual(['evt_jazz01']);
    expect(body.data[0]?.creator.username).toBe('Alice');
  });

  it.each(['upcoming-events', 'past-events'])('%s walks every page exactly once', async (list) => {
    const all = (await api<PublicEvent[]>(`/users/eve-series/${list}?limit=100`)).body.data;
    expect(all.length).toBe(list === 'upcoming-events' ? 13 : 12);
    const walked: string[] = [];
    for (let offset = 0, total = Infinity; offset < total; offset += 5) {
      const { body } = await api<PublicEvent[]>(`/users/eve-series/${list}?limit=5&offset=${offset}`);
      total = body.pagination!.total;
      walked.push(...ids(body.data));
    }
    expect(walked).toEqual(ids(all));
    const starts = all.map((e) => e.start_date);
    expect(starts).toEqual([...starts].sort((a, b) => (list === 'upcoming-events' ? a.localeCompare(b) : b.localeCompare(a))));
  });

  it('answers [] for an existing user without events, 404 for an unknown one', async () => {
    const frank = await api<PublicEvent[]>('/users/frank/upcoming-events');
    expect(frank.status).toBe(200);
    expect(frank.body.data).toEqual([]);
    expect(frank.body.pagination).toEqual({ limit: 10, offset: 0, total: 0 });
    expectError(await api('/users/nobody/upcoming-events'), 404, 'User not found');
    expectError(await api('/users/nobody/past-events'), 404, 'User not found');
    expectError(await api('/users/nobody/profile-events'), 404, 'User not found');
  });

  it.each([
    ['0', 'Limit must be between 1 and 100'],
    ['101', 'Limit must be between 1 and 100'],
    ['-1', 'Limit must be between 1 and 100'],
    ['abc', 'Limit must be an integer between 1 and 100'],
    ['1.5', 'Limit must be an integer between 1 and 100'],
  ])('rejects limit=%s: %s', async (limit, message) => {
    const reply = await api(`/users/alice/past-events?limit=${limit}`);
    expectError(reply, 400, message);
    expect(reply.body.errors).toEqual([{ field: 'limit', message }]);
  });

  it.each(['%40alice', 'a%20b', '', '%20'])('rejects the username %j', async (username) => {
    if (username === '') return expectEmptySegment('/users//upcoming-events', 400);
    const reply = await api(`/users/${username}/upcoming-events`);
    expectError(reply, 400);
    expect(reply.body.errors?.[0]?.field).toBe('username');
  });

  it('answers "Username is required" when the username is missing', async () => {
    await expectEmptySegment('/users//past-events', 400, 'Username is required');
  });
});

describe('GET /users/{username}/profile-events', () => {
  it('lists own public events plus yes/maybe RSVPs, most recently created first', async () => {
    const { body, status } = await api<PublicEvent[]>('/users/alice/profile-events');
    expect(status).toBe(200);
    expect(ids(body.data)).toEqual([
      'evt_tie07a',
      'evt_tie07b',
      'evt_workshop05',
      'evt_gallery10',
      'evt_jazz01',
      'evt_series_03',
      'evt_meetup02',
      'evt_picnic06',
    ]);
    const attended = body.data.filter((e) => e.creator.username !== 'Alice').map((e) => e.id);
    expect(attended).toEqual(['evt_gallery10', 'evt_series_03']);
  });

  it('never lists hidden events or "no" answers', async () => {
    const { body } = await api<PublicEvent[]>('/users/dave/profile-events');
    expect(ids(body.data)).toEqual(['evt_meetup02', 'evt_picnic06']);
  });

  it('applies inclusive since/from/to bounds on start date, plain dates covering whole days', async () => {
    const day = await api<PublicEvent[]>('/users/alice/profile-events?since=2027-01-15&to=2027-01-15');
    expect(ids(day.body.data)).toEqual(['evt_jazz01']);
    const exact = await api<PublicEvent[]>('/users/alice/profile-events?from=2027-01-15T01:00:00.000Z&to=2027-01-15T01:00:00.000Z');
    expect(ids(exact.body.data)).toEqual(['evt_jazz01']);
    const offset = await api<PublicEvent[]>(`/users/alice/profile-events?since=${encodeURIComponent('2027-03-10T17:00:00+01:00')}`);
    expect(ids(offset.body.data)).toEqual(['evt_tie07a', 'evt_tie07b', 'evt_workshop05', 'evt_gallery10']);
  });

  it('rejects bad dates and inconsistent bounds', async () => {
    expectError(await api('/users/alice/profile-events?since=yesterday'), 400, 'Invalid date format. Use ISO 8601 format');
    const swapped = await api('/users/alice/profile-events?since=2027-02-01&to=2027-01-01');
    expectError(swapped, 400);
    expect(swapped.body.errors?.[0]?.field).toBe('since');
    const conflict = await api('/users/alice/profile-events?since=2027-01-01&from=2027-01-02');
    expectError(conflict, 400);
    expect(conflict.body.errors?.[0]?.field).toBe('from');
    expect((await api('/users/alice/profile-events?since=2027-01-01&from=2027-01-01T00:00:00Z')).status).toBe(200);
  });
});

describe('GET /users/{username}/events (Variant B, typed: the default)', () => {
  type Typed = { events: PublicEvent[]; pagination: Pagination };

  it('without type: own public events, most recently created first, pagination inside data', async () => {
    const { body } = await api<Typed>('/users/alice/events');
    expect(ids(body.data.events)).toEqual(['evt_tie07a', 'evt_tie07b', 'evt_workshop05', 'evt_jazz01', 'evt_meetup02', 'evt_picnic06']);
    expect(body.data.pagination).toEqual({ limit: 20, offset: 0, total: 6 });
    expect(body).not.toHaveProperty('pagination');
  });

  it.each([
    ['upcoming', ['evt_jazz01', 'evt_workshop05', 'evt_tie07a', 'evt_tie07b']],
    ['past', ['evt_meetup02', 'evt_picnic06']],
    ['profile', ['evt_tie07a', 'evt_tie07b', 'evt_workshop05', 'evt_gallery10', 'evt_jazz01', 'evt_series_03', 'evt_meetup02', 'evt_picnic06']],
  ])('type=%s', async (type, expected) => {
    const { body } = await api<Typed>(`/users/alice/events?type=${type}`);
    expect(ids(body.data.events)).toEqual(expected);
    expect(body.data.pagination.total).toBe(expected.length);
  });

  it('pages with limit/offset until offset + limit >= total', async () => {
    const walked: string[] = [];
    let total = Infinity;
    for (let offset = 0; offset < total; offset += 7) {
      const { body } = await api<Typed>(`/users/eve-series/events?limit=7&offset=${offset}`);
      total = body.data.pagination.total;
      walked.push(...ids(body.data.events));
    }
    expect(total).toBe(25);
    expect(new Set(walked).size).toBe(25);
  });

  it('takes since/from/to as extra filters', async () => {
    const { body } = await api<Typed>('/users/alice/events?type=upcoming&to=2027-03-31');
    expect(ids(body.data.events)).toEqual(['evt_jazz01', 'evt_workshop05']);
  });

  it('answers 400 "Username missing or user not found" for an unknown user', async () => {
    expectError(await api('/users/nobody/events'), 400, 'Username missing or user not found');
    await expectEmptySegment('/users//events', 400, 'Username missing or user not found');
  });

  it('rejects an unknown type, naming the allowed values', async () => {
    expectError(await api('/users/alice/events?type=hosted'), 400, 'Type must be one of: upcoming, past, profile');
  });
});

describe('authentication, scopes and check order', () => {
  it.each([
    ['no key', {}],
    ['an unknown key', { 'x-events-api-key': 'pk_unknown_0123456789abcdefghijklmnopqr' }],
    ['a revoked key', { 'x-events-api-key': KEYS.revoked }],
    ['a revoked Bearer key', { authorization: `Bearer ${KEYS.revoked}` }],
    ['a malformed Authorization header', { authorization: `Token ${KEYS.both}` }],
  ])('answers 401 for %s', async (_name, headers) => {
    expectError(await api('/events/evt_jazz01', headers), 401, 'Not authenticated.');
  });

  it('accepts Authorization: Bearer, scheme case-insensitive', async () => {
    expect((await api('/events/evt_jazz01', { Authorization: `bearer ${KEYS.both}` })).status).toBe(200);
  });

  it('uses the x-events-api-key header when both carriers are present', async () => {
    expect((await api('/events/evt_jazz01', { 'x-events-api-key': KEYS.both, authorization: `Bearer ${KEYS.revoked}` })).status).toBe(200);
    expectError(await api('/events/evt_jazz01', { 'x-events-api-key': KEYS.revoked, authorization: `Bearer ${KEYS.both}` }), 401);
  });

  it('answers 403 for a valid key without the route scope', async () => {
    expectError(await api('/events/evt_jazz01/guests', { 'x-events-api-key': KEYS.eventsOnly }), 403, 'Insufficient API key scope.');
    expectError(await api('/users/alice/events', { 'x-events-api-key': KEYS.guestsOnly }), 403, 'Insufficient API key scope.');
    expect((await api('/events/evt_jazz01/guests', { 'x-events-api-key': KEYS.guestsOnly })).status).toBe(200);
  });

  it('checks route, then key, then scope, then parameters, then existence', async () => {
    expectError(await api('/nope', {}), 404, 'Resource not found.');
    expectError(await api('/events/evt_jazz01/attendees'), 404, 'Resource not found.');
    expectError(await api('/events/not-an-id', {}), 401);
    expectError(await api('/events/not-an-id/guests', { 'x-events-api-key': KEYS.eventsOnly }), 403);
    expectError(await api('/events/not-an-id'), 400);
    expectError(await api('/events/evt_nope'), 404);
    expectError(await api('/events/not-an-id', { 'x-events-api-key': 'pk_unknown_0123456789abcdefghijklmnopqr' }), 401);
  });

  it('answers 404 envelopes for other methods, with or without a key', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      expectError(await get(`${base}/events/evt_jazz01`, auth, method), 404, 'Resource not found.');
      expectError(await get(`${base}/events/evt_jazz01`, {}, method), 404, 'Resource not found.');
    }
  });

  it('never sends CORS headers on the Public API', async () => {
    for (const reply of [await api('/events/evt_jazz01'), await api('/events/evt_nope'), await api('/events/evt_jazz01', {})]) {
      expect([...reply.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
  });
});

describe('privacy sweep', () => {
  it('no hidden event, anonymous guest, e-mail or phone appears in any response', async () => {
    const paths = [
      ...['alice', 'bob.builder', 'carol_k', 'dave', 'eve-series', 'frank'].flatMap((u) => [
        `/users/${u}/events?limit=100`,
        `/users/${u}/events?type=profile&limit=100`,
        `/users/${u}/events?type=upcoming&limit=100`,
        `/users/${u}/events?type=past&limit=100`,
        `/users/${u}/profile-events`,
        `/users/${u}/upcoming-events?limit=100`,
        `/users/${u}/past-events?limit=100`,
      ]),
      ...['evt_jazz01', 'evt_meetup02', 'evt_gallery10', 'evt_picnic06', 'evt_secret03', 'evt_draft04', 'evt_unlisted11'].flatMap((e) => [
        `/events/${e}`,
        `/events/${e}/guests?status=all&limit=100`,
      ]),
    ];
    const bodies = (await Promise.all(paths.map((p) => api(p)))).map((r) => r.text).join('\n');
    for (const hidden of ['evt_secret03', 'evt_draft04', 'evt_hack08', 'evt_unlisted11', 'Private dinner', 'Half-planned']) {
      expect(bodies).not.toContain(hidden);
    }
    for (const secret of ['Anon Guest', 'Walk-in', '@example.com', '+1-555-', 'email', 'phone', 'pk_', 'APIKEY', 'gsi1pk']) {
      expect(bodies).not.toContain(secret);
    }
    expect(bodies).toContain('evt_jazz01');
  });
});
