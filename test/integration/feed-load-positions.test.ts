/**
 * A load never numbers a feed entry at or below one that exists (R5: a plain
 * `data:load` into a table holding only tombstones was allowed, and wrote
 * each feed's entries from position 1 again, under cursors that had passed
 * those positions: a following consumer never saw the loaded events).
 * - `data:load` refuses such a table, and names what it found: the
 *   tombstones and the feeds as well as live users and events;
 * - the loader itself, asked anyway, appends after each existing feed's
 *   last position, as a change would, so a consumer following the feed from
 *   before sees every loaded event.
 */
import { describe, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { feedRun, shardOf } from '../../lambdas/store/feeds/feed.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { describeHistory, tableHistory } from '../../local/resync.js';
import { CatalogueReplica, NOW, dataset, event, feedItems, publicTitles, user } from '../support/feed-review.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore({ inProcess: true, direct: true });
const clock = fixedClock(NOW.toISOString());

describe('a load into a table with a history (R5)', () => {
  it('is refused with the tombstones and feeds counted, and the loader appends after the feeds it finds', async () => {
    const ann = user('usr_ann', 'ann');
    const table = await store.loaded('r5', dataset([ann], [event('evt_a', ann.id, 'A'), event('evt_b', ann.id, 'B')]));
    const repo = new DynamoRepository(store.client, table);
    const follower = new CatalogueReplica(repo);
    await follower.drain();
    await new ChangeApplier(store.client, table, { clock }).apply({ type: 'user.deleted', version: 2, user_id: ann.id });
    await follower.drain();
    expect(follower.titles()).toEqual({});

    // Nothing live is left, yet the table has a history.
    const history = await tableHistory(store.client, table);
    expect(history.entities).toBe(0);
    expect(history.tombstones).toBeGreaterThan(0);
    expect(history.feeds).toBe(2);
    expect(describeHistory(history)).toMatch(/^0 users or events, \d+ tombstones, 2 changes feeds$/);

    // The last position of the head shard evt_c's entries go to (0 while it has none).
    const lastOf = async () => {
      const head = (await feedItems(store.client, table, 'EVENTS')).map((i) => feedRun(i)).find((run) => run?.head && run.shard === shardOf('evt_c'));
      return head ? head.lo + head.members.length - 1 : 0;
    };
    const lastBefore = await lastOf();
    const bob = user('usr_bob', 'bob');
    await writeDataset(store.client, table, dataset([bob], [event('evt_c', bob.id, 'C')]), { clock });
    expect(await lastOf()).toBeGreaterThan(lastBefore);
    await follower.drain();
    expect(follower.titles()).toEqual(await publicTitles(store.client, table));
    expect(follower.titles()).toEqual({ evt_c: 'C' });
    const fresh = new CatalogueReplica(repo);
    await fresh.drain();
    expect(fresh.titles()).toEqual({ evt_c: 'C' });
  });

  it('an empty table has no history: the load writes each feed from position 1', async () => {
    const name = store.nextTable('empty');
    await ensureTable(store.client, name);
    expect(describeHistory(await tableHistory(store.client, name))).toBeNull();
    const ann = user('usr_ann', 'ann');
    await writeDataset(store.client, name, dataset([ann], [event('evt_a', ann.id, 'A'), event('evt_b', ann.id, 'B')]), { clock });
    const items = await feedItems(store.client, name, 'EVENTS');
    // The load appends as a change does: where an entry sits (a chunk or the head's tail) is the append path's
    // business; its position is the rule. In each head shard, its members from position 1 in the dataset's order,
    // and nothing else.
    const positions = new Map<string, string>();
    for (const item of items) {
      const run = feedRun(item);
      run?.members.forEach((member, i) => positions.set(`${run.shard}:${run.lo + i}`, member));
    }
    const expected = new Map<string, string>();
    for (const id of ['evt_a', 'evt_b']) expected.set(`${shardOf(id)}:${[...expected.keys()].filter((k) => k.startsWith(`${shardOf(id)}:`)).length + 1}`, id);
    expect(new Map([...positions].sort())).toEqual(new Map([...expected].sort()));
    expect(items.filter((i) => String(i.sk).startsWith('M#')).map((i) => i.sk)).toEqual(['M#evt_a', 'M#evt_b']);
  });
});
