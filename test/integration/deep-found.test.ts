/**
 * Three schedules the deep exploration of the user pairs found
 * (`SCHEDULES_DEPTH=deep`, schedules-pairs-users.exhaustive.test.ts), kept
 * as fixed schedules at the default depth. Their pause and fault positions
 * count calls of today's write side: the deep run, which tries every
 * position, is what holds the class; these hold the two cases between deep
 * runs. (Moved when the walks began reading the event's guest shard record:
 * the RSVP's first write is now its shard's mark, one write and one call
 * before the rest; the deletion's walks Query 2 shards of the gig and 1 of
 * the talk where they Queried 8 each, after one read of the record an event. Each still
 * fails with its fix taken out.)
 *
 * - rename vs RSVP, `1~13 paused after 19 [0] resumed`: the RSVP's reveal of
 *   the guest's item landed but its response was lost; the retry was refused,
 *   and before the delivery read the item again the rename derived it anew
 *   (content changed: an entry in the guest feed) without joining the guest
 *   to the feed's member list, because the version it replaced showed the
 *   guest there; that version's own join was still owed (its feed note) and
 *   was never written: a start from no cursor left the guest out for good
 *   (version-writes.ts, `finish`: a scope the replaced version still owed is
 *   written as the new version shows it).
 * - deletion vs late older upsert, `1 paused after 63 [1†20] resumed then 1 0`:
 *   the creator's deletion delivered twice at once; one copy died between a
 *   guest's count entry and its bucket's count, the other then found the
 *   entry as wanted, wrote nothing and so did not recount, and cleared the
 *   source's `pending`: the event's guest count kept the deleted guest for
 *   good (derivation.ts: a guest derivation that finds an entry recounts its
 *   bucket).
 * - guest deletion vs RSVP, `1↺†13 then 0 1` (a deep-only scenario; found
 *   once crashes were explored with a wave's calls landing last sent first):
 *   the RSVP's derivation died with its bucket's count landed (the entry
 *   counted in) and the entry itself not; the guest's deletion then
 *   tombstoned the RSVP source it found pending, which took away the settle
 *   that would have recounted, and derived the guest finding no entry, so
 *   nothing recounted: the event's guest count kept the guest for good
 *   (settle.ts: whoever tombstones a source found pending derives its guest
 *   as the recovering settle, recounting the bucket). The same with the
 *   event deleted instead of the guest (`event deletion vs RSVP`, the same
 *   schedule): the deletion's cascade tombstoned the pending RSVP and its
 *   fan-out found no entry.
 */
import { afterAll, beforeAll, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { catalogScenario, userPairs } from '../support/schedule-catalog.js';
import { directClient } from '../support/direct-dynalite.js';
import { startInProcessDynalite } from '../support/in-process-dynalite.js';
import { Explorer } from '../support/schedules.js';

let explorer: Explorer;
let close: () => Promise<void>;
beforeAll(async () => {
  const store = await startInProcessDynalite();
  const client = directClient(store.call);
  explorer = new Explorer(store, client, fixedClock('2026-11-21T12:00:00.000Z'), true, 'direct');
  close = async () => (explorer.close(), client.destroy(), store.close());
});
afterAll(async () => close?.());

const scenario = (name: string) => {
  const s = userPairs.find((p) => p.name === name);
  if (!s) throw new Error(`no scenario ${name} in the catalog`);
  return s;
};

// Explorer.run throws, naming the schedule, when privacy or the end state fails.
it('rename vs RSVP: the RSVP\'s lost response, then the rename during its pause: the guest stays in its feed\'s member list', async () => {
  await explorer.run(scenario('rename vs RSVP'), { paused: { change: 1, loseAfter: 13, pauseAfter: 19 }, during: [{ change: 0 }], after: [] });
});

it('deletion vs late older upsert: a duplicate dying between a guest\'s count entry and its count: the count is right at the end', async () => {
  await explorer.run(scenario('deletion vs late older upsert'), { paused: { change: 1, pauseAfter: 63 }, during: [{ change: 1, crashAfter: 20 }], after: [{ change: 1 }, { change: 0 }] });
});

it('guest deletion vs RSVP: the RSVP dying with its count landed and its entry not, then the guest deleted: the count is right at the end', async () => {
  await explorer.run(catalogScenario('guest deletion vs RSVP'), { during: [{ change: 1, crashAfter: 13, lifo: true }], after: [{ change: 0 }, { change: 1 }] });
});

it('event deletion vs RSVP: the RSVP dying with its count landed and its entry not, then the event deleted: no count is left', async () => {
  await explorer.run(catalogScenario('event deletion vs RSVP'), { during: [{ change: 1, crashAfter: 13, lifo: true }], after: [{ change: 0 }, { change: 1 }] });
});
