/**
 * The rule of an event's guest shard record (lambdas/store/changes/shard-record.ts), checked on a table's items:
 * every guest shard partition that holds any item is marked in its event's record. The walks query only the marked
 * shards, so an item in an unmarked shard is one a fan-out or a deletion's cascade would miss.
 */
import { markedShards } from '../../lambdas/store/changes/shard-record.js';
import { guestShardOfPartition, keys } from '../../lambdas/store/table/table.js';

type Item = Record<string, unknown>;

/** The event whose guest shard this partition is, or undefined for any other partition. */
export function eventOfGuestShard(pk: string): string | undefined {
  return guestShardOfPartition(pk)?.eventId;
}

/** The guest shard partitions holding items that their event's record does not mark, each with one item found there (none: the rule holds). */
export function unmarkedShards(items: readonly Item[]): string[] {
  const records = new Map(items.filter((i) => i.type === 'GUEST_SHARDS').map((i) => [String(i.pk), i]));
  const found = new Map<string, string>();
  for (const item of items) {
    const pk = String(item.pk);
    const at = guestShardOfPartition(pk);
    if (!at || found.has(pk)) continue;
    if (!markedShards(records.get(keys.guestShards(at.eventId).pk)).includes(at.shard)) found.set(pk, `${pk} holds ${String(item.sk)} but is not marked in its event's record`);
  }
  return [...found.values()];
}
