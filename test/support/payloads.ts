/** Event payloads as the store holds them, for the pure mapping and rendering tests. */
import type { EventPayload } from '../../lambdas/store/table/items.js';

/** A published, public event of `Ann` starting 2027-01-15T01:00Z (evening of the 14th in Chicago); `over` replaces any field. */
export function eventPayload(over: Partial<EventPayload> = {}): EventPayload {
  return {
    event_id: 'evt_a',
    title: 'A',
    description: null,
    cover: null,
    location: null,
    start_date: '2027-01-15T01:00:00.000Z',
    end_date: '2027-01-15T04:00:00.000Z',
    timezone: 'America/Chicago',
    status: 'published',
    visibility: 'public',
    cost: null,
    created_at: '2026-01-01T00:00:00.000Z',
    links: { spotify_url: null, wavlake_url: null },
    contributions: { cashapp: null, venmo: null, paypal: null, btc_lightning: null },
    creator: { id: 'usr_a', username: 'Ann', image: null, verification_status: null },
    ...over,
  };
}
