/**
 * The rule of an event's guest shard record (lambdas/store/changes/shard-record.ts), checked on a table's items:
 * every guest shard partition that holds any item is marked in its event's record. The walks query only the marked
 * shards, so an item in an unmarked shard is one a fan-out or a deletion's cascade would miss.
 */
import { markedShards } from '../../lambdas/store/changes/shard-record.js';
import { keys } from '../../lambdas/store/table/table.js';

type Item = Record<string, unknown>;

/** A guest shard's partition (table.ts, guestShardPartition): its event's id and its number. */
const GUEST_SHARD_PARTITION = /^EVENT#(.+)#G(\d+)$/;

/** The event whose guest shard this partition is, or undefined for any other partition. */
export function eventOfGuestShard(pk: string): string | undefined {
  return GUEST_SHARD_PARTITION.exec(pk)?.[1];
}

/** The guest shard partitions holding items that their event's record does not mark, each with one item found there (none: the rule holds). */
export function unmarkedShards(items: readonly Item[]): string[] {
  const records = new Map(items.filter((i) => i.type === 'GUEST_SHARDS').map((i) => [String(i.pk), i]));
  const found = new Map<string, string>();
  for (const item of items) {
    const pk = String(item.pk);
    const shard = GUEST_SHARD_PARTITION.exec(pk);
    if (!shard || found.has(pk)) continue;
    if (!markedShards(records.get(keys.guestShards(shard[1]!).pk)).includes(Number(shard[2]))) found.set(pk, `${pk} holds ${String(item.sk)} but is not marked in its event's record`);
  }
  return [...found.values()];
}
