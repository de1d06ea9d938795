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
import { ChangeApplier } from '../../lambdas/store/applier.js';
import { DynamoRepository } from '../../lambdas/store/repository.js';
import { ensureTable } from '../../local/dynalite.js';
import { writeDataset } from '../../local/loader.js';
import { describeHistory, tableHistory } from '../../local/resync.js';
import { CatalogueReplica, NOW, dataset, event, feedItems, publicTitles, user } from '../support/feed-review.js';
import { useFileStore } from '../support/store.js';

const store = useFileStore();
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

    const lastBefore = Number((await feedItems(store.client, table, 'EVENTS')).find((i) => i.sk === 'H')!.base) - 1;
    const bob = user('usr_bob', 'bob');
    await writeDataset(store.client, table, dataset([bob], [event('evt_c', bob.id, 'C')]), { clock });
    const head = (await feedItems(store.client, table, 'EVENTS')).find((i) => i.sk === 'H')!;
    expect(Number(head.base) + (head.tail as unknown[]).length - 1).toBeGreaterThan(lastBefore);
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
    // business; its position is the rule. Positions 1 and 2, in the dataset's order, and nothing else.
    const positions = new Map<number, string>();
    for (const item of items) {
      const sk = String(item.sk);
      if (sk !== 'H' && !sk.startsWith('C#')) continue;
      const lo = Number(sk === 'H' ? item.base : item.lo);
      ((sk === 'H' ? item.tail : item.members) as string[]).forEach((member, i) => positions.set(lo + i, member));
    }
    expect([...positions].sort(([a], [b]) => a - b)).toEqual([[1, 'evt_a'], [2, 'evt_b']]);
    expect(items.filter((i) => String(i.sk).startsWith('M#')).map((i) => i.sk)).toEqual(['M#evt_a', 'M#evt_b']);
  });
});
