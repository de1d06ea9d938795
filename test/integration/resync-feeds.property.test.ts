/**
 * `npm run data:load -- FILE --replace` and the changes feeds (PRODUCT P16):
 * a consumer that follows every feed across a replace converges to the read
 * routes like across any change. Random tables (the change-stream
 * generator's first dataset) are replaced by random files (that dataset with
 * the stream folded in), while the consumer reads between the replace's
 * DynamoDB calls; half the replaces die after a random call and are run
 * again, as an operator would. Every change seen is an upsert of what is
 * shown at that moment or a bare `removed`, no id that was never public
 * appears, and once the feeds are read to `has_more: false` each replica
 * equals its scope's read model. A replace that changes nothing appends
 * nothing.
 *
 * RESYNC_FEED_RUNS=100 runs more cases than the default.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { fold } from '../../lambdas/core/fold.js';
import { isPubliclyVisible } from '../../lambdas/store/changes/derive.js';
import { FEED_NOTE } from '../../lambdas/store/feeds/feed.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { executeResync, planResync, scanTable } from '../../local/resync.js';
import { FOLLOWED_PLACES, historyArb } from '../support/change-streams.js';
import { FEED_NOW, FeedConsumer, expectReplicasMatch, placesShowing, scopesOf, withObservedClient, type Fault } from '../support/feed-consumer.js';
import { sweepExpired } from '../support/ttl.js';
import { scanAll } from '../support/read-model.js';
import { useFileStore } from '../support/store.js';
import { unmarkedShards } from '../support/shard-marks.js';

const RUNS = Number(process.env.RESYNC_FEED_RUNS ?? 12);
const TIMEOUT = 60_000 + RUNS * 6_000;
const clock = fixedClock(FEED_NOW.toISOString());
const store = useFileStore();

/** The ids a dataset shows: public events (and in which place feeds), and guests (linked RSVPs) of public events. */
function shownIds(d: Dataset, ever: { events: Set<string>; guests: Set<string>; places: Set<string> }): void {
  const users = new Set(d.users.map((u) => u.id));
  const publicEvents = d.events.filter((e) => isPubliclyVisible(e) && users.has(e.creator_id));
  const shown = new Set(publicEvents.map((e) => e.id));
  for (const id of shown) ever.events.add(id);
  for (const e of publicEvents) for (const place of placesShowing(e.id, e.location)) ever.places.add(place);
  for (const r of d.rsvps ?? []) if (r.user_id && shown.has(r.event_id) && users.has(r.user_id)) ever.guests.add(`${r.event_id}\u0000${r.user_id}`);
}

/** One replace as `data:load --replace` runs it, the consumer reading after every `every`-th call; going wrong as `fault` says. */
async function replace(table: string, file: Dataset, every: number, fault: Fault, consumer: FeedConsumer): Promise<boolean> {
  return withObservedClient(store.endpoint, every, fault, consumer, async (client) => executeResync(client, table, planResync(await scanTable(client, table), file), { clock }));
}

describe('changes feeds across data:load --replace (fast-check, PRODUCT P16)', () => {
  it('a replica followed across a replace (read during it, the replace dying and run again) equals the read routes; removed bare; never-public ids never', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb({ maxSteps: 8 }), fc.nat(80), fc.integer({ min: 2, max: 9 }), fc.constantFrom('none', 'crash', 'fail'), async (h, crashAt, every, wrong) => {
        const file = fold(h.d0, h.delivered).dataset;
        const table = await store.loaded('resync-feed', h.d0);
        const repo = new DynamoRepository(store.client, table);
        const userIds = new Set([...h.d0.users, ...file.users].map((u) => u.id));
        const eventIds = [...new Set([...h.d0.events, ...file.events].map((e) => e.id))];
        const scopes = scopesOf(store.client, table, userIds, eventIds, FOLLOWED_PLACES);
        const consumer = new FeedConsumer(repo, scopes);
        await consumer.drain();

        // The replace dies after a random call, or fails a random write without landing; time passes (TTL deletes what
        // it may), and the operator runs it again.
        if (wrong !== 'none') {
          await replace(table, file, every, wrong === 'crash' ? { crashAfter: crashAt + 1 } : { failAt: crashAt + 1 }, consumer);
          // Its guest shard records went first: wherever it died, every shard holding an item is marked.
          expect(unmarkedShards(await scanAll(store.client, table))).toEqual([]);
          await sweepExpired(store.client, table);
        }
        expect(await replace(table, file, every, {}, consumer)).toBe(true);
        expect(unmarkedShards(await scanAll(store.client, table))).toEqual([]);
        await sweepExpired(store.client, table);
        const ever = { events: new Set<string>(), guests: new Set<string>(), places: new Set<string>() };
        shownIds(h.d0, ever);
        shownIds(file, ever);
        for (const id of consumer.seen.events) expect({ id, everPublic: ever.events.has(id) }).toEqual({ id, everPublic: true });
        for (const id of consumer.seen.guests) expect({ id, everPublic: ever.guests.has(id) }).toEqual({ id, everPublic: true });
        for (const id of consumer.seen.places) expect({ id, everPublicThere: ever.places.has(id) }).toEqual({ id, everPublicThere: true });

        await consumer.drain();
        await expectReplicasMatch(store.client, table, consumer, (await scopes()).users);
        // Nothing owes a feed entry once the replace is done, and the same file again appends nothing.
        for (const item of await scanAll(store.client, table)) expect(item[FEED_NOTE]).toBeUndefined();
        expect(planResync(await scanAll(store.client, table), file).feeds).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});
