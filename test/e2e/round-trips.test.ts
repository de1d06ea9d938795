/**
 * Holds the code to docs/data-model.md: for every row of its access-pattern
 * table, counts the DynamoDB calls the local server makes for a typical and an
 * edge request and compares them with the documented numbers.
 */
import { everyShardAt } from '../../lambdas/core/feed-cursor.js';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { routes } from '../../lambdas/routes.js';
import { signed } from '../support/feed-keys.js';
import { KEYS, NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { roundTrips, startTestServer, type TestServer } from '../support/local.js';

const doc = readFileSync(new URL('../../docs/data-model.md', import.meta.url), 'utf8');
const documented = new Map<string, { typical: number; edge: number }>();
for (const line of doc.split('\n')) {
  const m = /^\|[^|]*\((\w+)\)\s*\|(?:[^|]*\|){3}\s*(\d+) \/ (\d+)\s*\|/.exec(line);
  if (m) documented.set(m[1] as string, { typical: Number(m[2]), edge: Number(m[3]) });
}

const asOf = Date.parse(NOW) / 1000;
/** A catalogue cursor past the feed's end: one Query, nothing after it. */
const caughtUp = encodeURIComponent(signed({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(1_000_000), after: '', asOf }));
/** A start from no cursor in progress (its members), of each feed: the page a consumer reads most when it starts. */
const starting = (scope: string) => encodeURIComponent(signed({ scope, mode: 'members', position: everyShardAt(1), after: '', asOf }));

/** A typical and an edge request per row (see the doc's notes column). */
const cases: Record<string, { typical: string; edge: string }> = {
  getEvent: { typical: '/events/evt_jazz01', edge: '/events/evt_missing' },
  getEventGuests: { typical: '/events/evt_jazz01/guests?status=all', edge: '/events/evt_jazz01/guests?offset=99' },
  getUserEvents: { typical: '/users/alice/events?type=past', edge: '/users/frank/events' },
  getUserProfileEvents: { typical: '/users/alice/profile-events?since=2027-01-01', edge: '/users/nobody/profile-events' },
  getUserUpcomingEvents: { typical: '/users/eve-series/upcoming-events', edge: '/users/frank/upcoming-events' },
  getUserPastEvents: { typical: '/users/alice/past-events', edge: '/users/frank/past-events' },
  embedGetEvent: { typical: '/events/evt_jazz01', edge: '/events/evt_missing' },
  embedGetUserEvents: { typical: '/users/alice/events?limit=2', edge: '/users/frank/events' },
  embedGetUserFeed: { typical: '/users/alice/events.ics', edge: '/users/frank/events.ics' },
  embedGetEventFeed: { typical: '/events/evt_jazz01/event.ics', edge: '/events/evt_missing/event.ics' },
  embedGetPlaceFeed: { typical: '/events.ics?city=Amsterdam&country=NL', edge: '/events.ics?city=Nowhere' },
  getEventChanges: { typical: `/changes/events?cursor=${starting('EVENTS')}`, edge: `/changes/events?cursor=${caughtUp}` },
  getUserEventChanges: { typical: `/changes/users/alice/events?cursor=${starting('HOST#usr_alice')}`, edge: '/changes/users/nobody/events' },
  getEventGuestChanges: { typical: `/changes/events/evt_jazz01/guests?cursor=${starting('GUESTS#evt_jazz01')}`, edge: '/changes/events/evt_missing/guests' },
  getPlaceEventChanges: { typical: `/changes/places/events?city=Amsterdam&country=NL&cursor=${starting('PLACE#NL#amsterdam')}`, edge: '/changes/places/events?city=Nowhere' },
  // A page of a city's events: the place shards at once, then the items by key; edge: nothing at the place (no item read).
  searchEvents: { typical: '/events?city=Amsterdam&from=2026-11-21&to=2027-01-31&limit=5', edge: '/events?city=Nowhere' },
  embedSearchEvents: { typical: '/events?city=Amsterdam&from=2026-11-21&to=2027-01-31&limit=5', edge: '/events?city=Nowhere' },
  publicOpenApi: { typical: '/openapi.json', edge: '/openapi.json' },
  embedOpenApi: { typical: '/openapi.json', edge: '/openapi.json' },
};

let server: TestServer;
async function callsFor(path: string, headers: Record<string, string> = { 'x-events-api-key': KEYS.both }, base = server.publicBaseUrl) {
  server.calls.splice(0);
  server.spans.splice(0);
  const reply = await get(`${base}${path}`, headers);
  return { status: reply.status, calls: [...server.calls], rounds: roundTrips(server.spans), body: reply.body as { data?: { next_cursor?: string; has_more?: boolean } } };
}

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('round trips per route, as documented in docs/data-model.md', () => {
  it('documents every route and the authorizer', () => {
    expect([...documented.keys()].sort()).toEqual([...routes.map((r) => r.id), 'authorizer'].sort());
  });

  it('authorizer: one GetItem with a key, none without', async () => {
    const denied = await callsFor('/events/evt_jazz01', { 'x-events-api-key': KEYS.guestsOnly });
    expect({ status: denied.status, calls: denied.calls }).toEqual({ status: 403, calls: ['GetItemCommand'] });
    expect(denied.calls).toHaveLength(documented.get('authorizer')!.typical);
    const none = await callsFor('/events/evt_jazz01', {});
    expect({ status: none.status, calls: none.calls }).toEqual({ status: 401, calls: [] });
    expect(none.calls).toHaveLength(documented.get('authorizer')!.edge);
  });

  it.each(routes.map((r) => [r.id, r.surface, r.auth] as const))('%s (%s)', async (id, surface, auth) => {
    const expected = documented.get(id)!;
    const base = surface === 'public' ? server.publicBaseUrl : server.embedBaseUrl;
    // On keyed routes the first call is always the authorizer's.
    const authorizerCalls = auth === 'key' ? 1 : 0;
    const typical = await callsFor(cases[id]!.typical, undefined, base);
    expect(typical.status).toBe(200);
    if (authorizerCalls) expect(typical.calls[0]).toBe('GetItemCommand');
    expect(typical.calls.length - authorizerCalls).toBe(expected.typical);
    const edge = await callsFor(cases[id]!.edge, undefined, base);
    expect(edge.calls.length - authorizerCalls).toBe(expected.edge);
    expect([...typical.calls, ...edge.calls]).not.toContain('ScanCommand');
  });

  // PRODUCT P16: a feed page takes at most two round trips after the authorizer, with or without a cursor.
  it.each(['/changes/events', '/changes/users/alice/events', '/changes/events/evt_jazz01/guests', '/changes/places/events?city=amsterdam'])('%s: every page, from no cursor on, in at most two round trips after the authorizer', async (path) => {
    const rounds: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 4; page++) {
      const reply = await callsFor(`${path}${path.includes('?') ? '&' : '?'}limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(reply.status).toBe(200);
      expect(reply.calls[0]).toBe('GetItemCommand');
      rounds.push(reply.rounds - 1);
      cursor = reply.body.data!.next_cursor;
    }
    expect(rounds.every((r) => r >= 1 && r <= 2)).toBe(true);
  });

  // PRODUCT P17: a page of a search takes at most two round trips after the authorizer (the place shards at once, then the items).
  it('GET /events: every page, cursors followed, in two round trips after the authorizer', async () => {
    let cursor: string | undefined;
    for (let page = 0; page < 4; page++) {
      const reply = await callsFor(`/events?city=Amsterdam&from=2026-08-01&to=2026-10-31&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(reply.status).toBe(200);
      expect(reply.calls[0]).toBe('GetItemCommand');
      expect(reply.rounds - 1).toBe(2);
      cursor = (reply.body.data as { pagination: { next_cursor?: string } }).pagination.next_cursor;
    }
    expect((await callsFor('/events?city=Amsterdam&limit=0')).calls).toEqual(['GetItemCommand']);
  });

  it('invalid parameters never reach DynamoDB beyond the authorizer', async () => {
    expect((await callsFor('/events/evt_jazz01/guests?limit=0')).calls).toEqual(['GetItemCommand']);
    expect((await callsFor('/users/%40alice/upcoming-events')).calls).toEqual(['GetItemCommand']);
    expect((await callsFor('/changes/places/events?country=%20')).calls).toEqual(['GetItemCommand']);
  });
});
