/**
 * The client package (client/) against the real local server: every method of
 * both surfaces gives what the raw API gives (envelope unwrapped), every
 * paginated list walks to exactly `total` for any page size (a fast-check
 * property against one raw `limit=100` walk), and failures arrive as typed
 * errors that never hold the key.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ApiError, CursorExpiredError, EmbedClient, PagedList, PublicClient, type PublicEvent } from '../../client/src/index.js';
import { CURSOR_LIFETIME_SECONDS, everyShardAt } from '../../lambdas/core/feed-cursor.js';
import { signed } from '../support/feed-keys.js';
import { NOW } from '../support/fixtures.js';
import { KEYS } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';

type Envelope = { success: boolean; data: unknown; pagination?: { total: number } };

let server: TestServer;
let api: PublicClient;
let embed: EmbedClient;
const auth = { authorization: `Bearer ${KEYS.both}` };

beforeAll(async () => {
  server = await startTestServer();
  api = new PublicClient({ apiKey: KEYS.both, baseUrl: server.publicBaseUrl });
  embed = new EmbedClient({ baseUrl: server.embedBaseUrl });
});
afterAll(async () => server?.close());

const raw = async (path: string, base = server.publicBaseUrl) => (await get<Envelope>(`${base}${path}`, auth)).body;

/** Every item of a raw list, read `limit=100` a page, as a consumer without the client would. */
async function rawWalk(path: string, pick: (body: Envelope) => { items: unknown[]; total: number }): Promise<unknown[]> {
  const all: unknown[] = [];
  for (let offset = 0; ; ) {
    const { items, total } = pick(await raw(`${path}${path.includes('?') ? '&' : '?'}limit=100&offset=${offset}`));
    all.push(...items);
    offset += items.length;
    if (items.length === 0 || offset >= total) return all;
  }
}
const flat = (body: Envelope) => ({ items: body.data as unknown[], total: body.pagination!.total });
const typed = (body: Envelope) => {
  const data = body.data as { events: unknown[]; pagination: { total: number } };
  return { items: data.events, total: data.pagination.total };
};

const USERS = ['alice', 'eve-series', 'bob.builder', 'carol_k', 'frank'];
/** Every paginated list of the Public API: the client's list and the raw route. */
const LISTS: { name: string; list: (user: string, limit: number) => PagedList<unknown>; rawPath: (user: string) => string; pick: typeof flat }[] = [
  { name: 'users.events', list: (u, limit) => api.users.events(u, { limit }), rawPath: (u) => `/users/${u}/events`, pick: typed },
  ...(['upcoming', 'past', 'profile'] as const).map((type) => ({
    name: `users.events type=${type}`,
    list: (u: string, limit: number) => api.users.events(u, { type, limit }),
    rawPath: (u: string) => `/users/${u}/events?type=${type}`,
    pick: typed,
  })),
  { name: 'users.upcomingEvents', list: (u, limit) => api.users.upcomingEvents(u, { limit }), rawPath: (u) => `/users/${u}/upcoming-events`, pick: flat },
  { name: 'users.pastEvents', list: (u, limit) => api.users.pastEvents(u, { limit }), rawPath: (u) => `/users/${u}/past-events`, pick: flat },
];

describe('Public API client: one method per route', () => {
  it('events.get gives the event itself', async () => {
    expect(await api.events.get('evt_jazz01')).toEqual((await raw('/events/evt_jazz01')).data);
  });

  it('events.guests walks every linked guest, a page at a time', async () => {
    const guests = await api.events.guests('evt_jazz01', { limit: 1 }).toArray();
    expect(guests.length).toBeGreaterThan(1);
    expect(guests).toEqual(await rawWalk('/events/evt_jazz01/guests', flat));
    expect(await api.events.guests('evt_jazz01', { status: 'yes', limit: 2 }).toArray()).toEqual(await rawWalk('/events/evt_jazz01/guests?status=yes', flat));
  });

  it('users.profileEvents gives the whole list', async () => {
    const events = await api.users.profileEvents('alice');
    expect(events.length).toBeGreaterThan(0);
    expect(events).toEqual((await raw('/users/alice/profile-events')).data);
  });

  it.each(LISTS.map((l) => [l.name, l] as const))('%s walks to exactly total', async (_name, l) => {
    const walked = await l.list('eve-series', 7).toArray();
    expect(walked).toEqual(await rawWalk(l.rawPath('eve-series'), l.pick));
  });

  it('page() reads one page with its pagination, from the list offset', async () => {
    const page = await api.users.events('eve-series', { limit: 4, offset: 8 }).page();
    expect(page.items).toHaveLength(4);
    expect(page.pagination).toEqual({ limit: 4, offset: 8, total: 25 });
    const all = await api.users.events('eve-series', { offset: 20 }).toArray();
    expect(all.map((e) => e.id)).toEqual(((await rawWalk('/users/eve-series/events', typed)) as PublicEvent[]).slice(20).map((e) => e.id));
  });

  it('openapi gives the document the API serves', async () => {
    const document = await api.openapi();
    expect(document.openapi).toBe('3.1.0');
    expect(document).toEqual(await raw('/openapi.json'));
  });

  it('property: iterating any list with any page size yields exactly one limit=100 walk, in order', async () => {
    const expected = new Map<string, unknown[]>();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...LISTS), fc.constantFrom(...USERS), fc.integer({ min: 1, max: 30 }), async (l, user, size) => {
        const key = `${l.name}/${user}`;
        if (!expected.has(key)) expected.set(key, await rawWalk(l.rawPath(user), l.pick));
        expect(await l.list(user, size).toArray()).toEqual(expected.get(key));
      }),
      { numRuns: 40 },
    );
  });
});

describe('Public API client: changes feeds', () => {
  it('iterates a feed to the end with any page size, exposing the cursor to resume from', async () => {
    const whole = [];
    for await (const change of api.changes.events()) whole.push(change);
    expect(whole.every((c) => c.change === 'upserted')).toBe(true);
    for (const limit of [1, 2, 7]) {
      const feed = api.changes.events({ limit });
      const seen = [];
      for await (const change of feed) seen.push(change);
      expect(seen).toEqual(whole);
      // Resuming from the saved cursor: up to date, nothing more.
      const again = api.changes.events({ cursor: feed.cursor });
      const more = [];
      for await (const change of again) more.push(change);
      expect(more).toEqual([]);
      expect(again.cursor).toEqual(expect.any(String));
    }
    const guests = [];
    for await (const change of api.changes.guests('evt_jazz01')) guests.push(change);
    expect(guests.length).toBeGreaterThan(0);
    const hosted = [];
    for await (const change of api.changes.userEvents('alice')) hosted.push(change);
    expect(hosted.length).toBeGreaterThan(0);
  });

  it('an expired cursor is a CursorExpiredError; a foreign one a 400 naming cursor', async () => {
    const expired = signed({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(0), after: '', asOf: Date.parse(NOW) / 1000 - CURSOR_LIFETIME_SECONDS - 1 });
    const error = await api.changes.events({ cursor: expired }).page().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CursorExpiredError);
    expect((error as CursorExpiredError).status).toBe(410);
    const foreign = await api.changes.userEvents('alice', { cursor: expired }).page().catch((e: unknown) => e);
    expect([(foreign as ApiError).status, (foreign as ApiError).errors.map((e) => e.field)]).toEqual([400, ['cursor']]);
  });
});

describe('Public API client: typed errors', () => {
  async function failure(call: () => Promise<unknown>): Promise<ApiError> {
    const error = await call().then(
      () => new Error('expected a failure'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }

  it('404 carries status and message, after one attempt', async () => {
    const error = await failure(() => api.events.get('evt_nope'));
    expect({ status: error.status, message: error.message, errors: error.errors, attempts: error.attempts }).toEqual({
      status: 404,
      message: (await raw('/events/evt_nope') as unknown as { message: string }).message,
      errors: [],
      attempts: 1,
    });
  });

  it('400 names every failing parameter in errors[]', async () => {
    const error = await failure(() => api.users.events('alice', { limit: 1000 }).toArray());
    expect(error.status).toBe(400);
    expect(error.errors.map((e) => e.field)).toEqual(['limit']);
  });

  it('401 and 403 never show the key', async () => {
    const bad = 'pk_wrong_0123456789abcdefghijklmnopqrstuv';
    const unknownKey = await failure(() => new PublicClient({ apiKey: bad, baseUrl: server.publicBaseUrl }).events.get('evt_jazz01'));
    expect(unknownKey.status).toBe(401);
    const scoped = await failure(() => new PublicClient({ apiKey: KEYS.eventsOnly, baseUrl: server.publicBaseUrl, keyHeader: 'x-events-api-key' }).events.guests('evt_jazz01').page());
    expect(scoped.status).toBe(403);
    expect(JSON.stringify([unknownKey, scoped, String(unknownKey.stack), String(scoped.stack)])).not.toMatch(/pk_wrong|pk_events_only/);
  });

  it('refuses a path value that could not stay one segment, before sending', () => {
    expect(() => api.events.get('..')).toThrow('eventId must not be empty, "." or ".."');
  });
});

describe('Embed API client: one method per route', () => {
  it('events.get, users.events and openapi give what the API gives', async () => {
    expect(await embed.events.get('evt_jazz01')).toEqual((await raw('/events/evt_jazz01', server.embedBaseUrl)).data);
    expect(await embed.users.events('alice', { limit: 3, order: 'desc' })).toEqual((await raw('/users/alice/events?limit=3&order=desc', server.embedBaseUrl)).data);
    expect(await embed.openapi()).toEqual(await raw('/openapi.json', server.embedBaseUrl));
  });

  it('events.feed and users.feed give the iCalendar text', async () => {
    const eventFeed = await embed.events.feed('evt_jazz01');
    expect(eventFeed).toBe((await get(`${server.embedBaseUrl}/events/evt_jazz01/event.ics`)).text);
    expect(eventFeed).toMatch(/^BEGIN:VCALENDAR/);
    expect(await embed.users.feed('alice')).toBe((await get(`${server.embedBaseUrl}/users/alice/events.ics`)).text);
  });

  it('a 404 is a typed error', async () => {
    await expect(embed.events.get('evt_nope')).rejects.toMatchObject({ name: 'ApiError', status: 404 });
    await expect(embed.users.feed('nobody-here')).rejects.toMatchObject({ name: 'ApiError', status: 404 });
  });
});
