/**
 * Write side: schedules of three changes that broke a rule of
 * docs/data-model.md ("Guest counts") and that the default exploration does
 * not generate (found by `SCHEDULES_DEPTH=deep`, which runs every shape of
 * every triple). Each runs through the exploration's own Explorer, so it is
 * checked exactly as the exploration checks it: privacy at every observation
 * point, nothing owed at the end, and the final table equal to a fresh load
 * of some order of the changes.
 *
 * G1 (2026-11-26): an event moved to a user whose RSVP was stored while the
 * old host was already deleted. The RSVP's derivation found no live creator
 * and wrote no count entry; the move's fan-out then derived the new host's
 * unit as the creator's, which wrote the host's count entry (bucket 24) but
 * recounted only the other guests' buckets: the yes count stayed 1 for good
 * (a fresh load of any order says 2). The rule now: every derivation of a
 * guest unit is followed, in the same call, by a recount of its bucket
 * (Deriver.deriveGuests), whoever asks for it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Change } from '../../lambdas/core/changes.js';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { Explorer, type Scenario } from '../support/schedules.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore();
let explorer: Explorer;
beforeAll(() => {
  explorer = new Explorer(store.endpoint, store.client, fixedClock('2026-11-21T12:00:00.000Z'));
});
afterAll(() => explorer.close());

const user = (id: string, username: string) => ({ id, username, name: `Name of ${username}`, email: `${username}@example.com` });
const gig: SourceEvent = {
  id: 'evt_g',
  creator_id: 'usr_a',
  title: 'Event evt_g',
  start_date: '2026-12-31T23:30:00.000Z',
  timezone: 'UTC',
  status: 'published',
  visibility: 'public',
  created_at: '2026-11-01T00:00:00.000Z',
};
const d0: Dataset = {
  users: [user('usr_a', 'alice'), user('usr_b', 'bob'), user('usr_c', 'carol')],
  events: [gig],
  rsvps: [{ event_id: 'evt_g', user_id: 'usr_c', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' }],
};
const moveGigToBob: Change = { type: 'event.upserted', version: 1, event: { ...gig, creator_id: 'usr_b' } };
const deleteAlice: Change = { type: 'user.deleted', version: 1, user_id: 'usr_a' };
const bobGoesToGig: Change = { type: 'rsvp.upserted', version: 1, rsvp: { event_id: 'evt_g', user_id: 'usr_b', status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' } };
const moveDeleteRsvp: Scenario = { name: 'move, creator deletion, RSVP of the new host', d0, changes: [moveGigToBob, deleteAlice, bobGoesToGig] };

describe('guest counts under three changes', () => {
  it('G1 lost count: the new host\'s yes is counted when the move derives the host\'s unit (deletion paused after its tombstone, RSVP, move, deletion resumes)', async () => {
    // The deletion's second call is its tombstone: alice is deleted, her cascade not yet run, when bob's RSVP arrives.
    await expect(explorer.run(moveDeleteRsvp, { paused: { change: 1, pauseAfter: 2 }, during: [{ change: 2 }, { change: 0 }], after: [] })).resolves.toBeDefined();
  });

  it('G1 without a pause: the deletion dies after its tombstone and is redelivered after the RSVP and the move', async () => {
    // The same state by a crash: nothing derived for alice's deletion until its redelivery, the last delivery.
    await expect(explorer.run(moveDeleteRsvp, { during: [{ change: 1, crashAfter: 1 }, { change: 2 }, { change: 0 }, { change: 1 }], after: [] })).resolves.toBeDefined();
  });
});
