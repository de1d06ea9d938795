/**
 * Two schedules the deep exploration of the user pairs found
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
 */
import { afterAll, beforeAll, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { userPairs } from '../support/schedule-catalog.js';
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
