/**
 * An event-wide walk of its guests' items (an event's fan-out to its guests,
 * a deletion's cascade over its RSVPs): the guests' items are spread over the
 * event's guest shards (table.ts, guestShard), so the walk queries every shard
 * at once, one round trip, each consistently, as one partition's Query was.
 */
import { GUEST_SHARDS, guestShard, guestShardPartition } from '../table/table.js';
import type { Item, TableIO } from '../table/table-io.js';
import { each } from '../table/waves.js';

/**
 * Every item of the event's guest shards whose sort key is `prefix` then a
 * user id, in shard order then sort-key order; with `afterUser`, only those
 * after that user's item in the same order (a walk resumed from its saved
 * progress: shards before that user's shard are not read).
 */
export async function queryGuestShards(io: TableIO, eventId: string, prefix: string, afterUser?: string): Promise<Item[]> {
  const from = afterUser === undefined ? 0 : guestShard(afterUser);
  const shards = Array.from({ length: GUEST_SHARDS - from }, (_, i) => from + i);
  const parts = await each(shards, (shard) =>
    io.queryAll({ pk: guestShardPartition(eventId, shard), prefix, after: shard === from && afterUser !== undefined ? `${prefix}${afterUser}` : undefined }),
  );
  return parts.flat();
}
