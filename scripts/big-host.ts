/**
 * A generated host with many public events (a venue or a weekly series), for
 * the tests and the benchmark that prove a request costs what its answer holds.
 * Events start every `spacingHours` hours around `now`, so about half are past.
 */
import type { Dataset, SourceEvent } from '../lambdas/core/dataset.js';

export function bigHostDataset(opts: { username: string; events: number; now: string; spacingHours?: number; descriptionBytes?: number }): Dataset {
  const spacing = (opts.spacingHours ?? 12) * 3_600_000;
  const now = Date.parse(opts.now);
  const first = now - Math.floor(opts.events / 2) * spacing;
  const userId = `usr_${opts.username.replace(/[^a-z0-9]/gi, '')}`;
  const description = 'x'.repeat(opts.descriptionBytes ?? 200);
  const events: SourceEvent[] = Array.from({ length: opts.events }, (_, i) => ({
    id: `evt_${opts.username.replace(/[^a-z0-9]/gi, '')}${String(i).padStart(6, '0')}`,
    creator_id: userId,
    title: `Night ${i}`,
    description,
    cover: null,
    location: { name: 'The Hall', city: 'Berlin', country: 'DE' },
    start_date: new Date(first + i * spacing).toISOString(),
    end_date: null,
    timezone: 'Europe/Berlin',
    status: 'published',
    visibility: 'public',
    cost: null,
    // Created in an order unlike start order, so created-ordered lists are really re-ordered.
    created_at: new Date(Date.parse('2020-01-01T00:00:00.000Z') + ((i * 7919) % opts.events) * 60_000).toISOString(),
  }));
  return {
    users: [{ id: userId, username: opts.username, name: 'Big Host', image: null, verification_status: 'verified' }],
    events,
    rsvps: [],
  };
}
