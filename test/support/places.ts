/**
 * Discovery's fixtures (PRODUCT P17): a dataset whose events sit at the
 * edges of local time (a DST change, UTC+14 and UTC−11, a window's first and
 * last local second, a multi-day event), spelled several ways, and the
 * model of a search: what the route must answer, computed from the records
 * alone (published + public with a live creator, placeMatches, the local
 * start date in the event's own zone), never from the table.
 */
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { fnv1a } from '../../lambdas/store/table/table.js';
import { isPubliclyVisible } from '../../lambdas/store/changes/derive.js';
import { localDateTime } from '../../lambdas/core/local-time.js';
import { placeMatches, placeOf, type PlaceKey } from '../../lambdas/core/place.js';
import { demoDataset } from './fixtures.js';

/** A published, public event of usr_carol's at a place (`over` changes any field). */
export const placeEvent = (id: string, start: string, timezone: string, city: string | null, country: string | null, over: Partial<SourceEvent> = {}): SourceEvent => ({
  id,
  creator_id: 'usr_carol',
  title: `Place ${id}`,
  description: null,
  cover: null,
  location: { name: `Venue of ${id}`, city, country },
  start_date: start,
  end_date: null,
  timezone,
  status: 'published',
  visibility: 'public',
  cost: null,
  created_at: '2026-01-01T00:00:00.000Z',
  ...over,
});
const at = placeEvent;

/**
 * The edge events (UTC instants; the local reading in each comment):
 * - Lisbon, autumn DST change 2026-10-25 (02:00 WEST → 01:00 WET): 00:30
 *   local on the change day is 23:30Z the day before; spring change
 *   2027-03-28 (01:00 → 02:00): 00:30 local is 00:30Z.
 * - Kiritimati (UTC+14): 2027-01-10T12:00Z is 02:00 on the 11th there.
 * - Pago Pago (UTC−11): 2027-01-10T05:00Z is 18:00 on the 9th there.
 * - Lisbon window edges for 2027-05-01..2027-05-03: the first and last
 *   local second inside, and the second on either side outside.
 * - A multi-day festival 2027-02-01 .. 2027-02-05 (listed at its start only).
 * - São Paulo spelled three ways, Brazil by code, name and alpha-3.
 * - Ties: two events at one local instant, ordered by id.
 * - Hidden ones that must never show: private, draft, unlisted, cancelled.
 */
export const PLACE_EVENTS: SourceEvent[] = [
  at('evt_lis_dst_autumn', '2026-10-24T23:30:00.000Z', 'Europe/Lisbon', 'Lisbon', 'PT'),
  at('evt_lis_dst_spring', '2027-03-28T00:30:00.000Z', 'Europe/Lisbon', 'lisbon', 'Portugal'),
  at('evt_kiritimati', '2027-01-10T12:00:00.000Z', 'Pacific/Kiritimati', 'Kiritimati', 'Kiribati'),
  at('evt_pago', '2027-01-10T05:00:00.000Z', 'Pacific/Pago_Pago', 'Pago Pago', 'AS'),
  // Lisbon in May is WEST (UTC+1).
  at('evt_lis_before', '2027-04-30T22:59:59.000Z', 'Europe/Lisbon', 'Lisbon', 'PT'),
  at('evt_lis_first', '2027-04-30T23:00:00.000Z', 'Europe/Lisbon', 'Lisbon', 'PT'),
  at('evt_lis_last', '2027-05-03T22:59:59.000Z', 'Europe/Lisbon', 'LISBON', 'pt'),
  at('evt_lis_after', '2027-05-03T23:00:00.000Z', 'Europe/Lisbon', 'Lisbon', 'PT'),
  at('evt_festival', '2027-02-01T10:00:00.000Z', 'Europe/Lisbon', 'Lisbon', 'PT', { end_date: '2027-02-05T22:00:00.000Z' }),
  at('evt_sp_a', '2027-02-10T22:00:00.000Z', 'America/Sao_Paulo', 'São Paulo', 'BR'),
  at('evt_sp_b', '2027-02-10T22:00:00.000Z', 'America/Sao_Paulo', 'sao paulo', 'Brazil'),
  at('evt_sp_c', '2027-02-11T01:00:00.000Z', 'America/Sao_Paulo', ' SAO  PAULO ', 'BRA'),
  at('evt_lis_private', '2027-05-02T12:00:00.000Z', 'Europe/Lisbon', 'Lisbon', 'PT', { visibility: 'private' }),
  at('evt_lis_draft', '2027-05-02T12:00:00.000Z', 'Europe/Lisbon', 'Lisbon', 'PT', { status: 'draft' }),
  at('evt_lis_unlisted', '2027-05-02T12:00:00.000Z', 'Europe/Lisbon', 'Lisbon', 'PT', { visibility: 'unlisted' }),
  at('evt_lis_cancelled', '2027-05-02T12:00:00.000Z', 'Europe/Lisbon', 'Lisbon', 'PT', { status: 'cancelled' }),
  at('evt_country_only', '2027-05-02T09:00:00.000Z', 'Europe/Lisbon', null, 'PT'),
  at('evt_city_only', '2027-05-02T10:00:00.000Z', 'Europe/Lisbon', 'Lisbon', null),
  at('evt_lisbon_ohio', '2027-05-02T16:00:00.000Z', 'America/New_York', 'Lisbon', 'US'),
];

/** The demo data plus PLACE_EVENTS. */
export function placesDataset(): Dataset {
  const demo = demoDataset();
  return { ...demo, events: [...demo.events, ...PLACE_EVENTS] };
}

/** A search as the model takes it: place keys (lambdas/core/place.ts) and an inclusive window of local dates. */
export interface ModelQuery {
  place: PlaceKey;
  from: string;
  to: string;
}

/** The ids a search must answer, in order: the model of PRODUCT P17 over the source records. */
export function expectedIds(dataset: Pick<Dataset, 'events' | 'users'>, q: ModelQuery): string[] {
  const live = new Set(dataset.users.map((u) => u.id));
  return dataset.events
    .filter((e) => isPubliclyVisible(e) && live.has(e.creator_id) && placeMatches(placeOf(e.location), q.place))
    .map((e) => ({ id: e.id, local: localDateTime(Date.parse(e.start_date), e.timezone) }))
    .filter((e) => e.local.slice(0, 10) >= q.from && e.local.slice(0, 10) <= q.to)
    .sort((a, b) => (a.local < b.local ? -1 : a.local > b.local ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((e) => e.id);
}

/** Places a generated event may be at: one city spelled several ways, a city of two countries, parts missing, the date line's edges. */
const PLACE_POOL: ({ city: string | null; country: string | null } | null)[] = [
  { city: 'Lisbon', country: 'PT' },
  { city: 'lisbon ', country: 'Portugal' },
  { city: 'LISBON', country: null },
  { city: null, country: 'pt' },
  { city: 'Lisbon', country: 'US' },
  { city: 'São Paulo', country: 'BR' },
  { city: 'sao  paulo', country: 'Brazil' },
  { city: 'Kiritimati', country: 'KI' },
  { city: 'Pago Pago', country: 'American Samoa' },
  { city: 'Atlantis', country: 'Atlantis' },
  null,
];
const ZONES = ['Europe/Lisbon', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/Sao_Paulo', 'UTC', 'America/Chicago'];

/** The place queries the properties ask (keys, as the route resolves them). */
export const QUERY_POOL: PlaceKey[] = [
  { city: 'lisbon' },
  { country: 'PT' },
  { country: 'PT', city: 'lisbon' },
  { country: 'US', city: 'lisbon' },
  { country: 'US' },
  { city: 'sao paulo' },
  { country: 'BR', city: 'sao paulo' },
  { country: 'KI' },
  { city: 'pago pago' },
  { country: '~atlantis' },
  { city: 'atlantis' },
];

/**
 * The same history with each event record put at a place and in a time zone
 * chosen by a hash of the record (and six in ten made public), so that an
 * edit of an event (a new title, start, visibility) moves it between places
 * and zones as a web product's edits would. The same record always lands at the same place:
 * the fold of the delivered changes is still the source's state.
 */
export function withPlaces<H extends { d0: Dataset; made: readonly Change[]; delivered: readonly Change[] }>(h: H): H {
  const placed = (e: SourceEvent): SourceEvent => {
    const hash = fnv1a(JSON.stringify(e));
    const location = PLACE_POOL[hash % PLACE_POOL.length]!;
    // Most records public (the generator's mix hides three in four), so that moves between places are common; the rest keep the mix.
    const shown = (hash >>> 16) % 10 < 6 ? { status: 'published' as const, visibility: 'public' as const } : {};
    return { ...e, ...shown, location: location ? { name: `Venue ${hash % 7}`, ...location } : null, timezone: ZONES[(hash >>> 8) % ZONES.length]! };
  };
  const changes = new Map<Change, Change>();
  const mapChange = (c: Change): Change => {
    let out = changes.get(c);
    if (!out) {
      out = c.type === 'event.upserted' ? { ...c, event: placed(c.event) } : c;
      changes.set(c, out);
    }
    return out;
  };
  return { ...h, d0: { ...h.d0, events: h.d0.events.map(placed) }, made: h.made.map(mapChange), delivered: h.delivered.map(mapChange) };
}
