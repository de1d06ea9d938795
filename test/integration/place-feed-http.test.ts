/**
 * A place's changes feed over real HTTP (PRODUCT P17, "Follow a place"), on
 * the local server serving from this file's store (dynalite, or DynamoDB
 * Local in the second store's project): followers of a city, a country and
 * both, in other spellings than the data's, see an event enter when it
 * becomes public there, leave (`removed`, bare) when it moves away, goes
 * private or is deleted, and each replica equals what the event route shows
 * of the place's events. A cursor older than 30 days is a 410; a tampered
 * one, one of another place or of another feed is a 400 naming `cursor`;
 * bad places are 400s naming their field, none reaching DynamoDB beyond the
 * authorizer.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Change } from '../../lambdas/core/changes.js';
import type { SourceEvent } from '../../lambdas/core/dataset.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { CURSOR_LIFETIME_SECONDS, everyShardAt, feedScopes } from '../../lambdas/core/feed-cursor.js';
import { placeName } from '../../lambdas/core/place.js';
import { PLACE_MAX_LENGTH } from '../../lambdas/core/search-params.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { signed } from '../support/feed-keys.js';
import { KEYS, NOW } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { startLoopbackStore } from '../support/store.js';

type Change_ = { id: string; change: 'upserted' | 'removed'; event?: Record<string, unknown> };
type Page = { data: { changes: Change_[]; next_cursor: string; has_more: boolean } };
type Failure = { message: string; errors?: { field: string; message: string }[] };

let store: Awaited<ReturnType<typeof startLoopbackStore>>;
let server: TestServer;
let applier: ChangeApplier;
const key = { 'x-events-api-key': KEYS.both };
const call = <T = Page>(path: string) => get<T>(`${server.publicBaseUrl}${path}`, key);
const nowSeconds = Date.parse(NOW) / 1000;

beforeAll(async () => {
  store = await startLoopbackStore();
  server = await startTestServer({ storeEndpoint: store.endpoint });
  applier = new ChangeApplier(store.client, server.tableName, { clock: fixedClock(NOW) });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await store?.close();
});

const gig = (location: SourceEvent['location'], extra: Partial<SourceEvent> = {}): SourceEvent => ({
  id: 'evt_pf_gig',
  creator_id: 'usr_alice',
  title: 'Fado night',
  description: null,
  cover: null,
  location,
  start_date: '2026-10-01T20:00:00.000Z',
  end_date: null,
  timezone: 'Europe/Lisbon',
  status: 'published',
  visibility: 'public',
  cost: null,
  created_at: '2026-09-01T00:00:00.000Z',
  ...extra,
});
let version = 0;
const upsert = (e: SourceEvent): Promise<unknown> => applier.apply({ type: 'event.upserted', version: ++version, event: e } as Change);

/** A follower of one place: applies its pages in order (upsert = store, removed = drop), keeping its cursor. */
class Follower {
  readonly replica = new Map<string, Record<string, unknown>>();
  cursor = '';
  constructor(readonly query: string) {}
  /** Reads to has_more: false; answers the changes read. */
  async read(limit = 2): Promise<Change_[]> {
    const changes: Change_[] = [];
    for (let more = true, pages = 0; more; pages++) {
      if (pages > 50) throw new Error(`${this.query}: no end after 50 pages`);
      const page = await call(`/changes/places/events?${this.query}&limit=${limit}${this.cursor ? `&cursor=${encodeURIComponent(this.cursor)}` : ''}`);
      expect({ query: this.query, status: page.status }).toEqual({ query: this.query, status: 200 });
      for (const c of page.body.data.changes) {
        if (c.change === 'removed') {
          expect(Object.keys(c).sort()).toEqual(['change', 'id']);
          this.replica.delete(c.id);
        } else this.replica.set(c.id, c.event!);
        changes.push(c);
      }
      this.cursor = page.body.data.next_cursor;
      more = page.body.data.has_more;
    }
    return changes;
  }
  /** Each member as the event route shows it now. */
  async expectShownByEventRoute(): Promise<void> {
    for (const [id, event] of this.replica) expect((await call<{ data: unknown }>(`/events/${id}`)).body.data).toEqual(event);
  }
}

const ids = (changes: Change_[], kind: Change_['change']) => changes.filter((c) => c.change === kind).map((c) => c.id);

describe("a place's changes feed over HTTP (PRODUCT P17)", () => {
  it('from no cursor: the place\'s public events, past ones included, each once as upserts, in any spelling of the place', async () => {
    const spellings = ['city=amsterdam', 'city=%20AMSTERDAM%20', 'country=NL', 'country=netherlands', 'city=Amsterdam&country=nl'];
    const sets: string[][] = [];
    for (const query of spellings) {
      const f = new Follower(query);
      const changes = await f.read(3);
      expect(changes.every((c) => c.change === 'upserted')).toBe(true);
      expect(new Set(ids(changes, 'upserted')).size).toBe(changes.length);
      sets.push([...f.replica.keys()].sort());
      await f.expectShownByEventRoute();
    }
    expect(sets[0]!.length).toBeGreaterThan(2);
    for (const s of sets) expect(s).toEqual(sets[0]);
    // Private and draft events of the place never appear.
    expect(sets[0]).not.toContain('evt_secret03');
  });

  it('enters when it becomes public there, leaves when it moves away, goes private or is deleted', async () => {
    const coimbra = new Follower('city=Coimbra');
    const portugal = new Follower('country=Portugal');
    const coimbraPt = new Follower('city=%20COIMBRA&country=pt');
    const porto = new Follower('city=porto');
    const spain = new Follower('country=ES');
    const all = [coimbra, portugal, coimbraPt, porto, spain];
    // The demo's events already there (Portugal holds the demo's Lisbon market): the baseline each follower keeps.
    for (const f of all) await f.read();
    const baseline = new Map(all.map((f) => [f.query, [...f.replica.keys()].sort()]));
    expect([...baseline].filter(([, members]) => members.length > 0).map(([query]) => query)).toEqual(['country=Portugal']);
    expect(baseline.get('country=Portugal')).not.toContain('evt_pf_gig');

    // Private first: never public there, so never in its feed.
    await upsert(gig({ name: 'Tasca', city: 'Coimbra', country: 'PT' }, { visibility: 'private' }));
    for (const f of all) expect(await f.read()).toEqual([]);

    await upsert(gig({ name: 'Tasca', city: 'Coimbra', country: 'PT' }));
    for (const f of [coimbra, portugal, coimbraPt]) expect(ids(await f.read(), 'upserted')).toEqual(['evt_pf_gig']);
    for (const f of [porto, spain]) expect(await f.read()).toEqual([]);
    await coimbra.expectShownByEventRoute();

    // Moves to Porto, spelled otherwise: out of Coimbra, still in Portugal (an upsert with the new content), into Porto.
    await upsert(gig({ name: 'Casa', city: ' PORTO ', country: 'portugal' }));
    expect(await coimbra.read()).toEqual([{ id: 'evt_pf_gig', change: 'removed' }]);
    expect(await coimbraPt.read()).toEqual([{ id: 'evt_pf_gig', change: 'removed' }]);
    expect(ids(await portugal.read(), 'upserted')).toEqual(['evt_pf_gig']);
    expect(ids(await porto.read(), 'upserted')).toEqual(['evt_pf_gig']);
    expect(await spain.read()).toEqual([]);
    await portugal.expectShownByEventRoute();

    // Its country goes (a city alone): out of Portugal, still in Porto.
    await upsert(gig({ name: 'Casa', city: 'Porto', country: null }));
    expect(await portugal.read()).toEqual([{ id: 'evt_pf_gig', change: 'removed' }]);
    expect(ids(await porto.read(), 'upserted')).toEqual(['evt_pf_gig']);

    // Goes private: removed where it was; back public in Spain; unpublished; public again; deleted.
    await upsert(gig({ name: 'Casa', city: 'Porto', country: null }, { visibility: 'private' }));
    expect(await porto.read()).toEqual([{ id: 'evt_pf_gig', change: 'removed' }]);
    await upsert(gig({ name: 'Bar', city: null, country: 'Spain' }));
    expect(ids(await spain.read(), 'upserted')).toEqual(['evt_pf_gig']);
    await upsert(gig({ name: 'Bar', city: null, country: 'Spain' }, { status: 'draft' }));
    expect(await spain.read()).toEqual([{ id: 'evt_pf_gig', change: 'removed' }]);
    await upsert(gig({ name: 'Bar', city: null, country: 'ES' }));
    expect(ids(await spain.read(), 'upserted')).toEqual(['evt_pf_gig']);
    await applier.apply({ type: 'event.deleted', version: ++version, event_id: 'evt_pf_gig' } as Change);
    expect(await spain.read()).toEqual([{ id: 'evt_pf_gig', change: 'removed' }]);

    // Every follower holds what the place shows now (its baseline again), and a follower from no cursor agrees.
    for (const f of all) {
      expect({ query: f.query, members: [...f.replica.keys()].sort() }).toEqual({ query: f.query, members: baseline.get(f.query) });
      const fresh = new Follower(f.query);
      await fresh.read();
      expect({ query: f.query, members: [...fresh.replica.keys()].sort() }).toEqual({ query: f.query, members: baseline.get(f.query) });
    }
  });

  it('a cursor older than 30 days is a 410; one just younger still works', async () => {
    const scope = feedScopes.place(placeName({ city: 'coimbra' }));
    const at = (asOf: number) => encodeURIComponent(signed({ scope, mode: 'entries', position: everyShardAt(0), after: '', asOf }));
    const expired = await call<Failure>(`/changes/places/events?city=Coimbra&cursor=${at(nowSeconds - CURSOR_LIFETIME_SECONDS - 1)}`);
    expect({ status: expired.status, message: expired.body.message }).toEqual({ status: 410, message: 'Cursor expired: start again without a cursor.' });
    expect((await call(`/changes/places/events?city=Coimbra&cursor=${at(nowSeconds - CURSOR_LIFETIME_SECONDS + 60)}`)).status).toBe(200);
  });

  it('a tampered cursor, one of another place or of another feed, and a bad place are 400s naming the field, with no read past the authorizer', async () => {
    const coimbra = (await call('/changes/places/events?city=Coimbra&limit=1')).body.data.next_cursor;
    const catalogue = (await call('/changes/events?limit=1')).body.data.next_cursor;
    const [version_, keyId, payload, mac] = coimbra.split('.') as [string, string, string, string];
    const flipped = `${version_}.${keyId}.${payload.slice(0, -1)}${payload.endsWith('A') ? 'B' : 'A'}.${mac}`;
    const c = encodeURIComponent;
    const cases: [string, string[]][] = [
      [`/changes/places/events?city=Coimbra&cursor=${c(flipped)}`, ['cursor']],
      [`/changes/places/events?city=Porto&cursor=${c(coimbra)}`, ['cursor']],
      // The same city with a country is another place query, so another feed.
      [`/changes/places/events?city=Coimbra&country=PT&cursor=${c(coimbra)}`, ['cursor']],
      [`/changes/places/events?city=Coimbra&cursor=${c(catalogue)}`, ['cursor']],
      [`/changes/events?cursor=${c(coimbra)}`, ['cursor']],
      ['/changes/places/events', ['city']],
      ['/changes/places/events?limit=5', ['city']],
      ['/changes/places/events?city=', ['city']],
      ['/changes/places/events?city=%20%20', ['city']],
      [`/changes/places/events?city=${'a'.repeat(PLACE_MAX_LENGTH + 1)}`, ['city']],
      ['/changes/places/events?country=', ['country']],
      [`/changes/places/events?country=${'n'.repeat(PLACE_MAX_LENGTH + 1)}`, ['country']],
      ['/changes/places/events?city=&country=%20', ['city', 'country']],
      ['/changes/places/events?city=Coimbra&limit=0', ['limit']],
    ];
    for (const [path, fields] of cases) {
      server.calls.splice(0);
      const reply = await call<Failure>(path);
      expect({ path, status: reply.status, fields: reply.body.errors?.map((e) => e.field).sort() }).toEqual({ path, status: 400, fields });
      expect({ path, calls: server.calls }).toEqual({ path, calls: ['GetItemCommand', 'GetItemCommand'] }); // the authorizer's: the key's item, then its user's
    }
    // A city of the longest a query sends is fine (its scope is named by its hash), and so is a country the standard does
    // not know, by name or by two letters (matched by its spelling, as the data side keeps it: issue 59, d3).
    expect((await call(`/changes/places/events?city=${'a'.repeat(PLACE_MAX_LENGTH)}`)).status).toBe(200);
    expect((await call('/changes/places/events?country=Atlantis')).status).toBe(200);
    expect((await call('/changes/places/events?country=ZZ')).status).toBe(200);
    // A parameter the route does not read is ignored, as on every route (main's one rule, issue 61).
    expect((await call('/changes/places/events?city=Coimbra&from=2026-01-01')).status).toBe(200);
  });
});
