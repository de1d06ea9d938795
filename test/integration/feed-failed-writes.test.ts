/**
 * A change whose write fails without landing (a throttle that outlived the
 * SDK's retries, a network error, a Lambda timeout), then DynamoDB's TTL,
 * then the redelivery: every write of every change of the catalogue's
 * kinds, one at a time, on both stores. The review found this class through
 * one case (R1: an append whose entry Put failed after the member's pointer
 * moved; the redelivery then expired the member's newest entry, which TTL
 * deleted, so a fresh start missed the member and a later append reused a
 * position behind a follower's cursor). The rule held here for each write k:
 *
 * - after the failure, whatever TTL may delete 29 days on (time passes
 *   before the redelivery: every tombstone past its expiry, no feed chunk,
 *   which lives 31 days) is deleted, then the change is redelivered, and TTL
 *   runs again;
 * - a consumer that followed every feed (the catalogue, each host's, each
 *   event's guests) from before, and one starting from no cursor, both hold
 *   exactly what the read routes show, then and after a later change of
 *   another event (a position passed is never written again), and the one
 *   following was never asked to start again (no 410 within 30 days);
 * - every member a feed shows is on its member list (what a start reads).
 *
 * FAULT_POINTS=first-of-each-kind (the DynamoDB Local project's share, as
 * test/support/fault-points.ts says) fails the first write of each kind and
 * the last instead of every write; `FAULT_POINTS=every npm run jest --
 * test/integration/feed-failed-writes.test.ts --selectProjects dynamodb-local`
 * runs them all there.
 *
 * A fault that lasts too: each partition the change writes, in turn, is
 * throttled (every call to it fails as a throttle the SDK's retries did not
 * outlast) for three deliveries with TTL between them, while a follower
 * reads on; then the window ends and the next delivery applies. The same
 * rule holds after, and no feed head grew past HEAD_MAX_BYTES (feed.ts).
 *
 * It also settles what the review suspected of a tombstone's feed note
 * expiring while its source is still pending (with the 14 days such a
 * tombstone had): here TTL deletes everything past its expiry before the
 * redelivery, and a deleted RSVP or event whose entries had not been
 * written is still announced `removed`, because a tombstone owing entries
 * has no expiry until they are written.
 */
import { describe, expect, it } from '@jest/globals';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import type { Dataset } from '../../lambdas/core/dataset.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { feedMemberOf, memberKey, scopesShowing } from '../../lambdas/store/feeds/feed.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { FAULT_POINTS, callKind, faultPoints, faultPointsLine } from '../support/fault-points.js';
import { FeedConsumer, expectReplicasMatch, scopesOf } from '../support/feed-consumer.js';
import { NOW, dataset, event, user } from '../support/feed-review.js';
import { scanAll } from '../support/read-model.js';
import { unmarkedShards } from '../support/shard-marks.js';
import { useFileStore } from '../support/store.js';
import { sweepExpired, withinRetention } from '../support/ttl.js';
import { ThrottleWindow, partitionOf, toPartition } from '../support/throttle-window.js';
import { HEAD_MAX_BYTES } from '../../lambdas/store/feeds/feed.js';
import { itemSize } from '../../scripts/write-billing.js';

const store = useFileStore({ inProcess: true, direct: true });
const clock = fixedClock(NOW.toISOString());
const WRITES = /Put|Update|Delete|BatchWrite/;

const ann = user('usr_ann', 'ann');
const bob = user('usr_bob', 'bob');
const d0: Dataset = {
  ...dataset([ann, bob], [event('evt_a', ann.id, 'A v1'), event('evt_b', bob.id, 'B v1')]),
  rsvps: [{ event_id: 'evt_a', user_id: bob.id, status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' }],
};
const scenarios: [string, Change][] = [
  ['a title edit', { type: 'event.upserted', version: 2, event: event('evt_a', ann.id, 'A v2') }],
  ['a hide', { type: 'event.upserted', version: 2, event: event('evt_a', ann.id, 'A v1', { visibility: 'private' }) }],
  ['an event deletion', { type: 'event.deleted', version: 2, event_id: 'evt_a' }],
  ['an RSVP deletion', { type: 'rsvp.deleted', version: 2, event_id: 'evt_a', user_id: bob.id }],
  ['a rename of the host', { type: 'user.upserted', version: 2, user: { ...ann, username: 'annie' } }],
];
const later: Change = { type: 'event.upserted', version: 2, event: event('evt_b', bob.id, 'B v2') };

/** A client on the store whose write number `failAt` throws without reaching it; counts the writes it sends, their kinds and partitions. */
function failingClient(failAt: number) {
  const client = store.newClient();
  const seen = { writes: 0, kinds: [] as string[], partitions: new Set<string>() };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      if (!WRITES.test(command)) return next(args);
      const input = (args as { input: Record<string, unknown> }).input;
      seen.kinds.push(callKind(command, input));
      const partition = partitionOf(input);
      if (partition) seen.partitions.add(partition);
      if (++seen.writes === failAt) throw Object.assign(new Error('Rate exceeded (simulated)'), { name: 'ThrottlingException' });
      return next(args);
    },
    { step: 'initialize', name: 'failWrite' },
  );
  return { client, seen };
}

/** A consumer of every feed of the table: its users' hosts and its events' guests. */
const consumerOf = (table: string) => new FeedConsumer(new DynamoRepository(store.client, table), scopesOf(store.client, table, new Set([ann.id, bob.id]), ['evt_a', 'evt_b']));

async function expectFeedsMatch(table: string, follower: FeedConsumer, where: string): Promise<void> {
  await follower.drain();
  const live = (await scopesOf(store.client, table, new Set([ann.id, bob.id]), [])()).users;
  await expectReplicasMatch(store.client, table, follower, live);
  const fresh = consumerOf(table);
  await fresh.drain();
  await expectReplicasMatch(store.client, table, fresh, live);
  // A start reads the member lists: every member a feed shows is on its list.
  const items = await scanAll(store.client, table);
  // And every guest shard holding an item is marked in its event's record (shard-marks.ts).
  expect({ where, unmarked: unmarkedShards(items) }).toEqual({ where, unmarked: [] });
  const listed = new Set(items.filter((i) => i.type === 'FEED_MEMBER').map((i) => `${String(i.pk)} ${String(i.sk)}`));
  for (const item of items) {
    for (const scope of scopesShowing(item)) {
      const key = memberKey(scope, feedMemberOf(item));
      expect({ where, listed: listed.has(`${key.pk} ${key.sk}`), member: `${key.pk} ${key.sk}` }).toEqual({ where, listed: true, member: `${key.pk} ${key.sk}` });
    }
  }
}

describe('a write that fails without landing, TTL, then the redelivery: the feeds still follow the read routes', () => {
  it.each(scenarios)('%s, failing at each of its writes', async (name, change) => {
    // How many writes the change makes when nothing fails.
    const probe = failingClient(0);
    await new ChangeApplier(probe.client, await store.loaded('probe', d0), { clock, fanOutConcurrency: 1 }).apply(change);
    probe.client.destroy();
    expect(probe.seen.writes).toBeGreaterThan(1);
    const failed = faultPoints(probe.seen.kinds);
    process.stdout.write(faultPointsLine(name, 'writes', probe.seen.kinds, failed));

    for (const k of failed) {
      const where = `${name}, write ${k} of ${probe.seen.writes} failed`;
      const table = await store.loaded('failed', d0);
      const follower = consumerOf(table);
      await follower.drain();
      const failing = failingClient(k);
      await expect(new ChangeApplier(failing.client, table, { clock, fanOutConcurrency: 1 }).apply(change)).rejects.toThrow('Rate exceeded');
      failing.client.destroy();
      expect({ where, unmarked: unmarkedShards(await scanAll(store.client, table)) }).toEqual({ where, unmarked: [] });
      await sweepExpired(store.client, table, withinRetention(NOW));
      await new ChangeApplier(store.client, table, { clock }).apply(change);
      await sweepExpired(store.client, table, withinRetention(NOW));
      await expectFeedsMatch(table, follower, where);
      // A later change of another event: the follower, whose cursor is past every position written so far, sees it.
      await new ChangeApplier(store.client, table, { clock }).apply(later);
      await sweepExpired(store.client, table, withinRetention(NOW));
      await expectFeedsMatch(table, follower, `${where}, then a later change`);
      expect({ where, later: follower.replicas.get('catalogue')?.get('evt_b')?.title, restarts: follower.restarts }).toEqual({ where, later: 'B v2', restarts: 0 });
    }
  }, 300_000);

  it.each(scenarios)('%s, with each partition it writes throttled for three deliveries (a fault that lasts), TTL between them, then the window ends', async (name, change) => {
    const probe = failingClient(0);
    await new ChangeApplier(probe.client, await store.loaded('probe', d0), { clock, fanOutConcurrency: 1 }).apply(change);
    probe.client.destroy();
    // The second store's share (FAULT_POINTS=first-of-each-kind): the first partition of each kind (FEED, EVENT, USER…).
    const written = [...probe.seen.partitions].sort();
    const partitions = FAULT_POINTS === 'every' ? written : written.filter((p, i) => written.findIndex((q) => q.split('#')[0] === p.split('#')[0]) === i);
    process.stdout.write(`${name}: ${partitions.length} partitions written, each throttled in turn\n`);
    for (const partition of partitions) {
      const where = `${name}, ${partition} throttled`;
      const table = await store.loaded('throttled', d0);
      const follower = consumerOf(table);
      await follower.drain();
      const window = new ThrottleWindow(toPartition(partition));
      window.open();
      const client = window.attach(store.newClient());
      // Delivered while the window lasts, again and again (SQS's redeliveries), time passing between them.
      // A delivery may also get through: what is left of the change may not need the partition (its writes there landed).
      for (let delivery = 0; delivery < 3; delivery++) {
        await new ChangeApplier(client, table, { clock, fanOutConcurrency: 1 }).apply(change).catch((error: unknown) => expect(ThrottleWindow.isThrottle(error)).toBe(true));
        expect({ where, delivery, unmarked: unmarkedShards(await scanAll(store.client, table)) }).toEqual({ where, delivery, unmarked: [] });
        await sweepExpired(store.client, table, withinRetention(NOW));
        await follower.drain();
      }
      expect(window.failed).toBeGreaterThan(0);
      window.close();
      // The first delivery after the window applies.
      await new ChangeApplier(client, table, { clock }).apply(change);
      client.destroy();
      await sweepExpired(store.client, table, withinRetention(NOW));
      await expectFeedsMatch(table, follower, where);
      await new ChangeApplier(store.client, table, { clock }).apply(later);
      await expectFeedsMatch(table, follower, `${where}, then a later change`);
      expect({ where, later: follower.replicas.get('catalogue')?.get('evt_b')?.title, restarts: follower.restarts }).toEqual({ where, later: 'B v2', restarts: 0 });
      // Nothing grew past its bound: every feed head within HEAD_MAX_BYTES.
      for (const item of await scanAll(store.client, table)) if (item.type === 'FEED_HEAD') expect(itemSize(item)).toBeLessThanOrEqual(HEAD_MAX_BYTES);
    }
  }, 300_000);
});
