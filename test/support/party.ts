/**
 * The one-event fixture of the write side's cost and partition tests: a
 * public, published party and its host, on a fixed clock before the party.
 */
import { fixedClock } from '../../lambdas/core/clock.js';
import type { SourceEvent } from '../../lambdas/core/dataset.js';

export const clock = fixedClock('2026-11-21T12:00:00.000Z');
export const host = { id: 'usr_host', username: 'host' };
export const party = {
  id: 'evt_party',
  creator_id: host.id,
  title: 'Party',
  start_date: '2027-01-01T20:00:00.000Z',
  timezone: 'UTC',
  status: 'published' as const,
  visibility: 'public' as const,
  created_at: '2026-11-01T00:00:00.000Z',
} satisfies SourceEvent;
