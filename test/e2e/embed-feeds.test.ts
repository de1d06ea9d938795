/**
 * The Embed API's iCalendar feeds over real HTTP against the local server
 * (clock pinned to NOW), parsed with an independent parser (ical.js) and
 * compared field by field with the Embed API's JSON for the same user and
 * event; hidden events never appear; caching, CORS and errors as on the JSON
 * routes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js';
import { endOfLocalDay, type EmbedEvent } from '../../lambdas/core/embed.js';
import { FEED_PAST_DAYS, PLACE_FEED_DAYS, PLACE_FEED_PAST_DAYS } from '../../lambdas/core/embed-feeds.js';
import { PLACE_MAX_LENGTH } from '../../lambdas/core/search-params.js';
import { demoDataset, NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';

let server: TestServer;
const SITE = 'https://events.example';

beforeAll(async () => {
  server = await startTestServer({ siteUrl: SITE });
});
afterAll(async () => server?.close());

/** The raw answer (text, redirects not followed), checked against the Embed OpenAPI document like every get(). */
async function raw(path: string, headers: Record<string, string> = {}) {
  const { status, headers: h, text } = await get(`${server.embedBaseUrl}${path}`, { origin: 'https://host.example', ...headers });
  return { status, headers: h, text };
}

async function json<T>(path: string): Promise<T> {
  return (await get<{ data: T }>(`${server.embedBaseUrl}${path}`)).body.data;
}

/** A TEXT value as RFC 5545 §3.3.11 reads it (ical.js leaves X-WR-CALNAME, a property it does not know, as written). */
const unescapeText = (value: unknown) => String(value).replace(/\\([\\;,nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));

/** What the feed says about each event, as ical.js reads it. */
function read(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  return {
    name: unescapeText(calendar.getFirstPropertyValue('x-wr-calname')),
    events: calendar.getAllSubcomponents('vevent').map((v) => {
      const e = new ICAL.Event(v);
      const value = (name: string) => {
        const x = v.getFirstPropertyValue(name);
        return x === null ? null : String(x);
      };
      return {
        uid: e.uid,
        summary: e.summary,
        description: value('description'),
        location: value('location'),
        url: value('url'),
        start: e.startDate.toJSDate().toISOString(),
        end: e.endDate.toJSDate().toISOString(),
        stamp: (v.getFirstPropertyValue('dtstamp') as ICAL.Time | null)?.toJSDate().toISOString(),
      };
    }),
  };
}

/** What the feed must say, from the Embed API's answer. */
function expected(e: EmbedEvent) {
  return {
    uid: `${e.id}@events.example`,
    summary: e.title,
    description: e.description,
    location: e.location ? [e.location.name, e.location.city, e.location.country].filter(Boolean).join(', ') : null,
    url: e.url,
    start: e.start_date,
    end: e.end_date ?? new Date(endOfLocalDay(Date.parse(e.start_date), e.timezone) + 1).toISOString(),
  };
}

const DAY = 24 * 60 * 60 * 1000;

describe('GET /api/embed/v1/users/{username}/events.ics', () => {
  it('is text/calendar with CRLF lines, CORS and a strong ETag, no key needed', async () => {
    const reply = await raw('/users/alice/events.ics');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    expect(reply.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(reply.text.startsWith('BEGIN:VCALENDAR\r\n')).toBe(true);
    expect(reply.text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });

  it("holds the user's public events of the last 90 days and the future, the same as the Embed API says", async () => {
    const since = new Date(Date.parse(NOW) - FEED_PAST_DAYS * DAY).toISOString();
    const api = await json<EmbedEvent[]>(`/users/alice/events?from=${since}&limit=100`);
    const feed = read((await raw('/users/alice/events.ics')).text);
    expect(feed.name).toBe('Events by Alice');
    expect(feed.events.map(({ stamp: _, ...rest }) => rest)).toEqual(api.map(expected));
    // The picnic (June 2026) is older than 90 days; the meetup (September) is not.
    expect(feed.events.map((e) => e.uid)).toContain('evt_meetup02@events.example');
    expect(feed.events.map((e) => e.uid)).not.toContain('evt_picnic06@events.example');
  });

  it('never lists a hidden event, for any user', async () => {
    const dataset = demoDataset();
    const hidden = dataset.events.filter((e) => e.status !== 'published' || e.visibility !== 'public').map((e) => e.id);
    expect(hidden.length).toBeGreaterThan(0);
    for (const user of dataset.users) {
      const reply = await raw(`/users/${user.username}/events.ics`);
      expect(reply.status).toBe(200);
      for (const id of hidden) expect(reply.text).not.toContain(id);
    }
  });

  it('bounds a long series: every upcoming one, only the recent past', async () => {
    const feed = read((await raw('/users/eve-series/events.ics')).text);
    const all = await json<EmbedEvent[]>('/users/eve-series/events?limit=100');
    const horizon = Date.parse(NOW) - FEED_PAST_DAYS * DAY;
    expect(feed.events.map((e) => e.uid)).toEqual(all.filter((e) => Date.parse(e.start_date) >= horizon).map((e) => `${e.id}@events.example`));
  });

  it('answers If-None-Match with 304 and no body', async () => {
    const first = await raw('/users/alice/events.ics');
    const etag = first.headers.get('etag')!;
    const again = await raw('/users/alice/events.ics', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('access-control-allow-origin')).toBe('*');
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
  });

  it('answers errors as JSON envelopes with CORS and no-store', async () => {
    for (const [path, status, message] of [
      ['/users/nobody/events.ics', 404, 'User not found'],
      ['/users/%40alice/events.ics', 400, undefined],
    ] as const) {
      const reply = await raw(path);
      expect(reply.status).toBe(status);
      expect(reply.headers.get('content-type')).toBe('application/json');
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      const body = JSON.parse(reply.text) as { success: boolean; message: string };
      expect(body.success).toBe(false);
      if (message) expect(body.message).toBe(message);
    }
  });
});

describe('GET /api/embed/v1/events.ics?city&country (a place\'s calendar)', () => {
  const day = (n: number) => new Date(Date.parse(NOW.slice(0, 10)) + n * DAY).toISOString().slice(0, 10);
  /** Discovery's JSON answer over a window, every page. */
  async function listed(query: string, from: string, to: string): Promise<EmbedEvent[]> {
    const all: EmbedEvent[] = [];
    for (let cursor = ''; ; ) {
      const page = await json<{ events: EmbedEvent[]; pagination: { has_more: boolean; next_cursor?: string } }>(`/events?${query}&from=${from}&to=${to}&limit=100${cursor}`);
      all.push(...page.events);
      if (!page.pagination.has_more) return all;
      cursor = `&cursor=${encodeURIComponent(page.pagination.next_cursor!)}`;
    }
  }

  it.each([
    ['city=Amsterdam', 'Events in Amsterdam'],
    ['country=nl', 'Events in NL'],
    ['city=%20amsterdam%20&country=Netherlands', 'Events in Amsterdam, NL'],
    ['country=US', 'Events in US'],
    // A place with events is named as its first event spells it; one with none, as the query's folded key.
    ['city=LISBON', 'Events in Lisbon'],
    ['city=Porto', 'Events in porto'],
  ])('%s (%s): the events discovery lists from today to 30 days on and the week before, as the Embed API shows them', async (query, name) => {
    const reply = await raw(`/events.ics?${query}`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    expect(reply.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const feed = read(reply.text);
    expect(feed.name).toBe(name);
    const shown = [...(await listed(query, day(-PLACE_FEED_PAST_DAYS), day(-1))), ...(await listed(query, day(0), day(PLACE_FEED_DAYS)))];
    expect(feed.events.map(({ stamp: _, ...rest }) => rest)).toEqual(shown.map(expected).sort((a, b) => a.start.localeCompare(b.start) || a.uid.localeCompare(b.uid)));
  });

  it('holds the nearest past only: a session of the week before is in it, an older one is not; hidden events never', async () => {
    const uids = read((await raw('/events.ics?city=Amsterdam')).text).events.map((e) => e.uid);
    // NOW is Saturday 2026-11-21: the series met on the 19th (in the week before) and on the 12th (not).
    expect(uids).toContain('evt_series_12@events.example');
    expect(uids).not.toContain('evt_series_11@events.example');
    expect(uids).toContain('evt_series_13@events.example');
    expect(uids).not.toContain('evt_series_finale@events.example');
    const dataset = demoDataset();
    const hidden = dataset.events.filter((e) => e.status !== 'published' || e.visibility !== 'public').map((e) => e.id);
    for (const query of ['country=US', 'country=GB', 'country=DE', 'city=Berlin']) {
      const reply = await raw(`/events.ics?${query}`);
      for (const id of hidden) expect(reply.text).not.toContain(id);
    }
  });

  it('is cached until the UTC date changes at most, and answers If-None-Match with 304', async () => {
    const first = await raw('/events.ics?city=amsterdam');
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    const again = await raw('/events.ics?city=amsterdam', { 'if-none-match': first.headers.get('etag')! });
    expect([again.status, again.text]).toEqual([304, '']);
  });

  it('refuses what discovery refuses, naming the field: JSON envelopes with CORS and no-store', async () => {
    for (const [query, fields] of [
      ['', ['city']],
      ['city=', ['city']],
      ['country=%20', ['country']],
      [`city=${'x'.repeat(PLACE_MAX_LENGTH + 1)}`, ['city']],
    ] as const) {
      const reply = await raw(`/events.ics${query ? `?${query}` : ''}`);
      expect({ query, status: reply.status }).toEqual({ query, status: 400 });
      expect(reply.headers.get('content-type')).toBe('application/json');
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      const body = JSON.parse(reply.text) as { success: boolean; errors: { field: string }[] };
      expect({ query, fields: body.errors.map((e) => e.field) }).toEqual({ query, fields });
    }
    // A window parameter is ignored like any unknown one (PRODUCT P6): the window is the feed's own.
    const plain = await raw('/events.ics?city=Amsterdam');
    for (const extra of ['from=2026-12-01', 'limit=5', 'to=2027-01-01&cursor=x']) {
      const reply = await raw(`/events.ics?city=Amsterdam&${extra}`);
      expect({ extra, status: reply.status, text: reply.text }).toEqual({ extra, status: 200, text: plain.text });
    }
    // The same message as the JSON route's for the same query.
    const noPlace = JSON.parse((await raw('/events.ics')).text) as { message: string };
    const fromJson = JSON.parse((await raw('/events')).text) as { message: string };
    expect(noPlace.message).toBe(fromJson.message);
  });
});

describe('the cache rule of the JSON routes', () => {
  it('cuts max-age short before the feed changes: the next start, or the oldest event leaving the window', async () => {
    // 30 s before Rooftop Jazz starts (it then moves from the upcoming part to the past part).
    const beforeJazz = await startTestServer({ siteUrl: SITE, clock: () => new Date('2027-01-15T00:59:30.000Z') });
    // 20 s before Bitcoin Meetup (2026-09-10T17:00Z) is 90 days old; Rooftop Jazz is weeks away.
    const meetupLeaves = new Date(Date.parse('2026-09-10T17:00:00.000Z') + FEED_PAST_DAYS * DAY - 20_000);
    const beforeLeaving = await startTestServer({ siteUrl: SITE, clock: () => meetupLeaves });
    try {
      const a = await get(`${beforeJazz.embedBaseUrl}/users/alice/events.ics`);
      expect(a.headers.get('cache-control')).toBe('public, max-age=30');
      const b = await get(`${beforeLeaving.embedBaseUrl}/users/alice/events.ics`);
      expect(b.headers.get('cache-control')).toBe('public, max-age=20');
      expect(b.text).toContain('evt_meetup02@');
    } finally {
      await beforeJazz.close();
      await beforeLeaving.close();
    }
  });
});

describe('GET /api/embed/v1/events/{eventId}/event.ics', () => {
  it.each(['evt_jazz01', 'evt_meetup02', 'evt_workshop05', 'evt_picnic06'])('%s: the same fields as the Embed API', async (id) => {
    const api = await json<EmbedEvent>(`/events/${id}`);
    const reply = await raw(`/events/${id}/event.ics`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    const feed = read(reply.text);
    expect(feed.name).toBe(api.title);
    expect(feed.events.map(({ stamp: _, ...rest }) => rest)).toEqual([expected(api)]);
    // Nothing in one event's calendar depends on the clock.
    expect(reply.headers.get('cache-control')).toBe('public, max-age=60');
  });

  it('keeps markup and special characters as text', async () => {
    const api = await json<EmbedEvent>('/events/evt_workshop05');
    const [event] = read((await raw('/events/evt_workshop05/event.ics')).text).events;
    expect(event?.summary).toBe('Workshop: <b>HTML</b> & "escaping"');
    expect(event?.description).toBe(api.description);
  });

  it('answers 404 for hidden and missing events, as the JSON route does', async () => {
    for (const id of ['evt_secret03', 'evt_draft04', 'evt_hack08', 'evt_unlisted11', 'evt_missing']) {
      const reply = await raw(`/events/${id}/event.ics`);
      expect(reply.status).toBe(404);
      expect(JSON.parse(reply.text)).toEqual({ success: false, message: 'Resource not found.' });
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('is also reachable as {eventId}.ics, by a permanent redirect', async () => {
    const reply = await raw('/events/evt_jazz01.ics');
    expect(reply.status).toBe(308);
    expect(reply.headers.get('location')).toBe('evt_jazz01/event.ics');
    expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    const followed = await fetch(`${server.embedBaseUrl}/events/evt_jazz01.ics`);
    expect(followed.url).toBe(`${server.embedBaseUrl}/events/evt_jazz01/event.ics`);
    expect(read(await followed.text()).events[0]?.uid).toBe('evt_jazz01@events.example');
    // A hidden event's redirect leads to the same 404 as its feed.
    expect((await fetch(`${server.embedBaseUrl}/events/evt_secret03.ics`)).status).toBe(404);
  });
});

describe('GET /api/embed/v1/users/{username}/events?order=desc', () => {
  it('lists latest first and reads only the page', async () => {
    const asc = await json<EmbedEvent[]>('/users/eve-series/events?limit=100');
    server.calls.splice(0);
    const desc = await json<EmbedEvent[]>(`/users/eve-series/events?order=desc&to=${NOW}&limit=3`);
    expect(desc.map((e) => e.id)).toEqual(asc.filter((e) => e.start_date <= NOW).reverse().slice(0, 3).map((e) => e.id));
    expect(server.calls).toEqual(['QueryCommand']);
    const bad = await get<{ message: string }>(`${server.embedBaseUrl}/users/alice/events?order=up`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('Order must be one of: asc, desc');
  });
});
