/**
 * The guest shard records the full load and the resync write (lambdas/store/changes/shard-record.ts): a loaded
 * table marks exactly the shards its items are in, and a resync marks every shard the table or the file has
 * anything in, never unmarks one, and gives a table written before the records its records from what it holds.
 */
import { describe, expect, it } from '@jest/globals';
import { validateDataset, type Dataset } from '../../lambdas/core/dataset.js';
import { markedShards } from '../../lambdas/store/changes/shard-record.js';
import { datasetToItems } from '../../lambdas/store/changes/writer.js';
import { guestShard, guestShardOfPartition, keys } from '../../lambdas/store/table/table.js';
import { planResync } from '../../local/resync.js';
import { demoDataset } from '../support/fixtures.js';
import { unmarkedShards } from '../support/shard-marks.js';

type Item = Record<string, unknown>;

const dataset: Dataset = (() => {
  const r = validateDataset(demoDataset());
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.dataset;
})();
const loaded = datasetToItems(dataset).items as unknown as Item[];
const recordOf = (items: readonly Item[], eventId: string) => items.find((i) => i.pk === keys.guestShards(eventId).pk && i.sk === keys.guestShards(eventId).sk);
/** The shards an event's items are in. */
const occupied = (items: readonly Item[], eventId: string) => [...new Set(items.flatMap((i) => (guestShardOfPartition(String(i.pk))?.eventId === eventId ? [guestShardOfPartition(String(i.pk))!.shard] : [])))].sort();

describe('the full load', () => {
  it('marks exactly the shards each event has items in, and nothing for an event with none', () => {
    expect(unmarkedShards(loaded)).toEqual([]);
    for (const event of dataset.events) expect({ event: event.id, marked: markedShards(recordOf(loaded, event.id)) }).toEqual({ event: event.id, marked: occupied(loaded, event.id) });
    expect(dataset.events.filter((e) => occupied(loaded, e.id).length > 1).length).toBeGreaterThan(0);
  });
});

describe('the resync', () => {
  const event = dataset.events.find((e) => occupied(loaded, e.id).length > 0)!;
  const free = [0, 1, 2, 3, 4, 5, 6, 7].find((s) => !occupied(loaded, event.id).includes(s))!;
  const former = (() => {
    for (let i = 0; ; i++) if (guestShard(`usr_former${i}`) === free) return `usr_former${i}`;
  })();

  it('gives a table written before the records its records, from the table and the file', () => {
    // A former guest's counter the file does not derive (a resync leaves counters), in a shard the file leaves empty.
    const current = [...loaded.filter((i) => i.type !== 'GUEST_SHARDS'), { ...keys.guestSeq(event.id, former), type: 'DERIVATION_SEQ', seq: 3 }];
    const plan = planResync(current, dataset);
    const records = plan.puts.filter((i) => i.type === 'GUEST_SHARDS');
    expect(markedShards(recordOf(records, event.id))).toEqual([...occupied(loaded, event.id), free].sort());
    expect(unmarkedShards([...current, ...records])).toEqual([]);
  });

  it('never unmarks a shard, and rewrites no record that already marks everything', () => {
    const overMarked = loaded.map((i) => (i === recordOf(loaded, event.id) ? { ...i, [`g${free}`]: true } : i));
    const plan = planResync(overMarked, dataset);
    expect(plan.puts.filter((i) => i.type === 'GUEST_SHARDS')).toEqual([]);
    expect(plan.deletes.filter((k) => k.sk === keys.guestShards(event.id).sk)).toEqual([]);
    // A file without the event: its record stays (its shards still hold the RSVP sources' tombstones and counters).
    const without = planResync(loaded, { ...dataset, events: dataset.events.filter((e) => e.id !== event.id), rsvps: (dataset.rsvps ?? []).filter((r) => r.event_id !== event.id) });
    expect(without.deletes.filter((k) => k.pk === keys.guestShards(event.id).pk && k.sk === keys.guestShards(event.id).sk)).toEqual([]);
    expect(without.puts.filter((i) => i.type === 'GUEST_SHARDS')).toEqual([]);
  });
});
