/**
 * Discovery (PRODUCT P17) over real HTTP against the local server: Public
 * and Embed `GET /events` on the places dataset (test/support/places.ts),
 * every answer checked against the OpenAPI documents (test/support/http.ts)
 * and against the model of the search; time-zone edges, spellings, paging
 * by cursor, every bad input, and a cursor that outlives its day.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmbedEvent } from '../../lambdas/core/embed.js';
import type { PublicEvent } from '../../lambdas/core/event-mapper.js';
import { cityKey, countryKey } from '../../lambdas/core/place.js';
import { signToken } from '../../lambdas/core/feed-cursor.js';
import { SEARCH_CURSOR_INVALID, SEARCH_CURSOR_VERSION } from '../../lambdas/core/search-cursor.js';
import { PLACE_MAX_LENGTH, SEARCH_MESSAGES } from '../../lambdas/core/search-params.js';
import { MESSAGES } from '../../lambdas/core/errors.js';
import { KEYS, NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { expectedIds, placesDataset } from '../support/places.js';
import { TEST_CURSOR_KEY } from '../support/feed-keys.js';

type Pagination = { limit: number; has_more: boolean; next_cursor?: string };
type Envelope<T> = { success: boolean; message: string; data: { events: T[]; pagination: Pagination }; errors?: { field: string; message: string }[] };

const dataset = placesDataset();
let server: TestServer;
let now = Date.parse(NOW);

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-events-'));
  const file = join(dir, 'places.json');
  writeFileSync(file, JSON.stringify(dataset));
  server = await startTestServer({ dataFile: file, siteUrl: 'https://events.example.com', clock: () => new Date(now) });
});
afterAll(async () => server?.close());

const query = (q: Record<string, string | number | undefined>) =>
  new URLSearchParams(Object.entries(q).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]]))).toString();
const publicSearch = (q: Record<string, string | number | undefined>, key: string | null = KEYS.both) =>
  get<Envelope<PublicEvent>>(`${server.publicBaseUrl}/events?${query(q)}`, key ? { 'x-events-api-key': key } : {});
const embedSearch = (q: Record<string, string | number | undefined>) => get<Envelope<EmbedEvent>>(`${server.embedBaseUrl}/events?${query(q)}`, { origin: 'https://host.example' });

/** Every page of a search, following next_cursor, with the ids of each page. */
async function allPages(search: typeof publicSearch | typeof embedSearch, q: Record<string, string | number | undefined>): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor = q.cursor as string | undefined;
  for (;;) {
    const reply = await search({ ...q, cursor });
    expect(reply.status).toBe(200);
    const { events, pagination } = reply.body.data;
    pages.push(events.map((e) => e.id));
    expect(pagination.limit).toBe(Number(q.limit ?? 20));
    expect(events.length).toBeLessThanOrEqual(pagination.limit);
    if (!pagination.has_more) {
      expect(pagination.next_cursor).toBeUndefined();
      return pages;
    }
    cursor = pagination.next_cursor!;
    expect(pages.length).toBeLessThan(50);
  }
}

const model = (city: string | undefined, country: string | undefined, from: string, to: string) =>
  expectedIds(dataset, { place: { ...(city !== undefined ? { city: cityKey(city)! } : {}), ...(country !== undefined ? { country: countryKey(country)! } : {}) }, from, to });

describe('GET /api/public/v1/events', () => {
  it('answers a place and window with Public Event objects, in local start order, and no total', async () => {
    const reply = await publicSearch({ city: 'Lisbon', country: 'PT', from: '2027-05-01', to: '2027-05-03' });
    expect(reply.status).toBe(200);
    expect(reply.body.message).toBe('Events retrieved');
    expect(reply.body.data.events.map((e) => e.id)).toEqual(['evt_lis_first', 'evt_lis_last']);
    expect(reply.body.data.pagination).toEqual({ limit: 20, has_more: false });
    expect(reply.body.data.events[0]).toMatchObject({ id: 'evt_lis_first', location: 'Venue of evt_lis_first', timezone: 'Europe/Lisbon', status: 'published', visibility: 'public' });
    expect(Object.keys(reply.body)).toEqual(['success', 'message', 'data']);
  });

  it('needs a key with events:read', async () => {
    expect((await publicSearch({ city: 'Lisbon' }, null)).status).toBe(401);
    expect((await publicSearch({ city: 'Lisbon' }, KEYS.guestsOnly)).status).toBe(403);
  });

  it.each([
    ['a city alone, any country', { city: 'lisbon' }],
    ['a country alone', { country: 'Portugal' }],
    ['both', { city: 'LISBON', country: 'pt' }],
    ['a city in another country', { city: 'Lisbon', country: 'US' }],
    ['São Paulo spelled three ways, Brazil by name', { city: ' sao   PAULO', country: 'brazil' }],
    ['Brazil by alpha-3', { country: 'BRA' }],
    ['a country by its English name', { country: 'Kiribati' }],
  ] as [string, { city?: string; country?: string }][])('matches %s as the model does', async (_, q) => {
    const from = '2026-10-01';
    const to = '2026-12-31';
    for (const [f, t] of [[from, to], ['2027-01-01', '2027-03-31'], ['2027-04-01', '2027-06-30']] as const) {
      const reply = await publicSearch({ ...q, from: f, to: t, limit: 100 });
      expect(reply.status).toBe(200);
      expect(reply.body.data.events.map((e) => e.id)).toEqual(model(q.city, q.country, f, t));
    }
  });

  it('never lists a private, draft, unlisted or cancelled event', async () => {
    const reply = await publicSearch({ city: 'Lisbon', from: '2027-05-02', to: '2027-05-02' });
    expect(reply.body.data.events.map((e) => e.id)).toEqual(['evt_city_only', 'evt_lisbon_ohio']);
  });
});

describe('time zones', () => {
  const ids = async (q: Record<string, string>) => (await publicSearch(q)).body.data.events.map((e) => e.id);

  it('lists 00:30 local on a DST change day on that local day, not its UTC day', async () => {
    // Autumn: 00:30 WEST on 2026-10-25 is 23:30Z on the 24th.
    expect(await ids({ city: 'Lisbon', from: '2026-10-25', to: '2026-10-25' })).toEqual(['evt_lis_dst_autumn']);
    expect(await ids({ city: 'Lisbon', from: '2026-10-24', to: '2026-10-24' })).toEqual([]);
    // Spring: 00:30 WET on 2027-03-28, the night the clocks skip 01:00-02:00.
    expect(await ids({ country: 'PT', from: '2027-03-28', to: '2027-03-28' })).toEqual(['evt_lis_dst_spring']);
    expect(await ids({ country: 'PT', from: '2027-03-27', to: '2027-03-27' })).toEqual([]);
  });

  it('reads Kiritimati (+14) and Pago Pago (−11) on their own dates', async () => {
    expect(await ids({ country: 'KI', from: '2027-01-11', to: '2027-01-11' })).toEqual(['evt_kiritimati']);
    expect(await ids({ country: 'KI', from: '2027-01-10', to: '2027-01-10' })).toEqual([]);
    expect(await ids({ city: 'pago pago', from: '2027-01-09', to: '2027-01-09' })).toEqual(['evt_pago']);
    expect(await ids({ city: 'pago pago', from: '2027-01-10', to: '2027-01-10' })).toEqual([]);
  });

  it("includes a window's first and last local second and nothing on either side", async () => {
    const got = await ids({ city: 'Lisbon', country: 'PT', from: '2027-05-01', to: '2027-05-03' });
    expect(got).toEqual(['evt_lis_first', 'evt_lis_last']);
    expect(await ids({ city: 'Lisbon', country: 'PT', from: '2027-04-30', to: '2027-04-30' })).toEqual(['evt_lis_before']);
    expect(await ids({ city: 'Lisbon', country: 'PT', from: '2027-05-04', to: '2027-05-04' })).toEqual(['evt_lis_after']);
  });

  it('lists a multi-day event once, at its start', async () => {
    expect(await ids({ city: 'Lisbon', from: '2027-02-01', to: '2027-02-01' })).toEqual(['evt_festival']);
    expect(await ids({ city: 'Lisbon', from: '2027-02-02', to: '2027-02-05' })).toEqual([]);
    expect((await ids({ city: 'Lisbon', from: '2027-01-25', to: '2027-02-10' })).filter((id) => id === 'evt_festival')).toHaveLength(1);
  });

  it('orders by local start date-time, then id, whatever the UTC order', async () => {
    // 19:00 local in São Paulo twice (tie: by id), then 22:00 local.
    expect(await ids({ country: 'BR', from: '2027-02-10', to: '2027-02-10' })).toEqual(['evt_sp_a', 'evt_sp_b', 'evt_sp_c']);
  });
});

describe('paging', () => {
  it.each([1, 2, 3, 7])('follows cursors of limit %i to exactly the model, page by page', async (limit) => {
    for (const q of [{ city: 'Amsterdam' }, { country: 'NL', city: 'amsterdam' }, { country: 'PT' }] as { city?: string; country?: string }[]) {
      const full = { ...q, from: '2026-08-01', to: '2026-10-31', limit };
      const pages = await allPages(publicSearch, full);
      const expected = model(q.city, q.country, full.from, full.to);
      expect(pages.flat()).toEqual(expected);
      expect(pages.slice(0, -1).every((p) => p.length === limit)).toBe(true);
      expect((await allPages(embedSearch, full)).flat()).toEqual(expected);
    }
  });

  it('defaults: from today (UTC), to 30 days on, limit 20', async () => {
    const reply = await publicSearch({ city: 'Amsterdam' });
    expect(reply.body.data.events.map((e) => e.id)).toEqual(model('Amsterdam', undefined, '2026-11-21', '2026-12-21'));
    expect(reply.body.data.pagination.limit).toBe(20);
  });

  it('goes on with the window a cursor carries, the next day too', async () => {
    const first = await publicSearch({ city: 'Amsterdam', limit: 2 });
    const cursor = first.body.data.pagination.next_cursor!;
    now += 86_400_000;
    try {
      const pages = await allPages(publicSearch, { city: 'Amsterdam', limit: 2, cursor });
      expect([...first.body.data.events.map((e) => e.id), ...pages.flat()]).toEqual(model('Amsterdam', undefined, '2026-11-21', '2026-12-21'));
      // Stating the window the cursor carries is the same query.
      expect((await publicSearch({ city: 'Amsterdam', from: '2026-11-21', to: '2026-12-21', limit: 2, cursor })).status).toBe(200);
    } finally {
      now -= 86_400_000;
    }
  });
});

describe('bad input', () => {
  const expectFields = async (q: Record<string, string | number | undefined>, fields: [string, string][]) => {
    for (const search of [publicSearch, embedSearch]) {
      const reply = await search(q);
      expect(reply.status).toBe(400);
      expect(reply.body.success).toBe(false);
      expect(reply.body.errors).toEqual(fields.map(([field, message]) => ({ field, message })));
      expect(reply.body.message).toBe(fields[0]![1]);
    }
  };

  it('names a missing place as city', () => expectFields({ from: '2027-01-01' }, [['city', SEARCH_MESSAGES.noPlace]]));
  it('refuses an empty or over-long city', async () => {
    await expectFields({ city: '   ' }, [['city', SEARCH_MESSAGES.cityEmpty]]);
    await expectFields({ city: '' }, [['city', SEARCH_MESSAGES.cityEmpty]]);
    await expectFields({ city: 'x'.repeat(PLACE_MAX_LENGTH + 1) }, [['city', SEARCH_MESSAGES.cityTooLong]]);
    expect((await publicSearch({ city: 'x'.repeat(PLACE_MAX_LENGTH) })).status).toBe(200);
  });
  it('answers a two-letter country no one has as its spelling, as the data side keeps it (issue 59, d3), and refuses a blank one', async () => {
    for (const country of ['XX', 'zz']) {
      const reply = await publicSearch({ country, city: 'Lisbon' });
      expect({ status: reply.status, events: reply.body.data.events }).toEqual({ status: 200, events: [] });
    }
    await expectFields({ country: ' ' }, [['country', SEARCH_MESSAGES.countryEmpty]]);
  });
  it.each(['2027-02-30', '2027-1-01', '27-01-01', '2027-01-01T00:00:00Z', 'today', '2027-13-01', ''])('refuses the date %j', async (date) => {
    await expectFields({ city: 'Lisbon', from: date }, [['from', SEARCH_MESSAGES.invalidDate]]);
    await expectFields({ city: 'Lisbon', from: '2027-01-01', to: date }, [['to', SEARCH_MESSAGES.invalidDate]]);
  });
  it('refuses to before from, and a window over 92 days', async () => {
    await expectFields({ city: 'Lisbon', from: '2027-01-02', to: '2027-01-01' }, [['to', SEARCH_MESSAGES.toBeforeFrom]]);
    await expectFields({ city: 'Lisbon', from: '2027-01-01', to: '2027-04-04' }, [['to', SEARCH_MESSAGES.windowTooLong]]);
    expect((await publicSearch({ city: 'Lisbon', from: '2027-01-01', to: '2027-04-03' })).status).toBe(200);
    expect((await publicSearch({ city: 'Lisbon', from: '2027-01-01', to: '2027-01-01' })).status).toBe(200);
  });
  it.each(['0', '101', '-1', '1.5', 'ten'])('refuses the limit %s', async (limit) => {
    const reply = await publicSearch({ city: 'Lisbon', limit });
    expect(reply.status).toBe(400);
    expect(reply.body.errors).toEqual([{ field: 'limit', message: /^\d+$|^-\d+$/.test(limit) ? MESSAGES.limitRange : MESSAGES.limitNotInteger }]);
  });
  it('names every failing field at once', () =>
    expectFields({ country: ' ', city: '', from: '2027-02-30', to: 'x', limit: 0, cursor: 'nope' }, [
      ['city', SEARCH_MESSAGES.cityEmpty],
      ['country', SEARCH_MESSAGES.countryEmpty],
      ['from', SEARCH_MESSAGES.invalidDate],
      ['to', SEARCH_MESSAGES.invalidDate],
      ['limit', MESSAGES.limitRange],
      ['cursor', SEARCH_CURSOR_INVALID],
    ]));

  it('refuses a cursor that is edited, of another query, or of a feed', async () => {
    const q = { city: 'Amsterdam', from: '2026-08-01', to: '2026-10-31', limit: 2 };
    const cursor = (await publicSearch(q)).body.data.pagination.next_cursor!;
    const [version, keyId, payload, mac] = cursor.split('.');
    const edited = [
      `${version}.${keyId}.${payload}.${mac!.slice(0, -1)}${mac!.endsWith('A') ? 'B' : 'A'}`,
      `${version}.${keyId}.${Buffer.from(JSON.stringify([null, 'amsterdam', '2026-08-01', '2026-10-31', '2026-09-30T20:00:00#evt_x'])).toString('base64url')}.${mac}`,
      'f3.abcdefgh.W10.AAAAAAAAAAAAAAAAAAAAAA',
      `${cursor}x`,
    ];
    for (const bad of edited) await expectFields({ ...q, cursor: bad }, [['cursor', SEARCH_CURSOR_INVALID]]);
    for (const other of [{ ...q, city: 'Berlin' }, { ...q, country: 'NL' }, { ...q, from: '2026-08-02' }, { ...q, to: '2026-10-30' }]) {
      await expectFields({ ...other, cursor }, [['cursor', SEARCH_CURSOR_INVALID]]);
    }
    // Signed under another key: the same 400.
    const foreign = signToken(SEARCH_CURSOR_VERSION, [null, 'amsterdam', '2026-08-01', '2026-10-31', '2026-09-30T20:00:00#evt_x'], Buffer.from('another-key'));
    await expectFields({ ...q, cursor: foreign }, [['cursor', SEARCH_CURSOR_INVALID]]);
    // Signed under the server's key, it opens (the tests' key: test/support/feed-keys.ts).
    const genuine = signToken(SEARCH_CURSOR_VERSION, [null, 'amsterdam', '2026-08-01', '2026-10-31', '2026-09-10T20:00:00#evt_series_02'], TEST_CURSOR_KEY);
    expect((await publicSearch({ ...q, cursor: genuine })).body.data.events.map((e) => e.id)).toEqual(['evt_series_03', 'evt_series_04']);
  });
});

describe('GET /api/embed/v1/events', () => {
  it('answers Embed objects with CORS and caching, no key', async () => {
    const reply = await embedSearch({ city: 'Lisbon', country: 'PT', from: '2027-05-01', to: '2027-05-03' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    expect(reply.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    expect(reply.headers.get('etag')).toBeTruthy();
    expect(reply.body.data.events.map((e) => e.id)).toEqual(['evt_lis_first', 'evt_lis_last']);
    expect(reply.body.data.events[0]).toEqual({
      id: 'evt_lis_first',
      title: 'Place evt_lis_first',
      description: null,
      cover: null,
      start_date: '2027-04-30T23:00:00.000Z',
      end_date: null,
      timezone: 'Europe/Lisbon',
      location: { name: 'Venue of evt_lis_first', city: 'Lisbon', country: 'PT' },
      url: 'https://events.example.com/e/evt_lis_first',
      creator: { username: 'carol_k', image: expect.any(String), verified: expect.any(Boolean) },
      status: 'upcoming',
    });
  });

  it('answers 304 to its own ETag, and its errors with CORS', async () => {
    const q = { city: 'Lisbon', from: '2027-05-01', to: '2027-05-03' };
    const first = await embedSearch(q);
    const again = await get(`${server.embedBaseUrl}/events?${query(q)}`, { 'if-none-match': first.headers.get('etag')! });
    expect(again.status).toBe(304);
    const bad = await embedSearch({});
    expect(bad.status).toBe(400);
    expect(bad.headers.get('access-control-allow-origin')).toBe('*');
  });
});
