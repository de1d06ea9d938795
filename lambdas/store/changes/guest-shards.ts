/**
 * An event-wide walk of its guests' items (an event's fan-out to its guests,
 * a deletion's cascade over its RSVPs): the guests' items are spread over the
 * event's guest shards (table.ts, guestShard), and the event's record marks
 * the shards that may hold any (shard-record.ts). The walk reads the record
 * (consistent), then queries the marked shards at once, each consistently:
 * a one-guest event costs one read and one Query, not GUEST_SHARDS Queries.
 *
 * Why reading the record first misses nothing a Query of every shard would
 * find (the caller has written the state it fans out before it walks): a
 * shard unmarked when the record is read held no item then (its mark lands
 * before its first item), so whatever the walk does not see there was
 * written after the record's read, as if that shard's Query had run at the
 * moment of the read and found it empty. A Query of a shard may always run
 * before an item lands in it, and the walks already cope with that (fan-out.ts,
 * settle.ts: the guest's own derivation reads the event's state after taking
 * its number). Marks are never removed, so a marked shard is queried as before.
 */
import { guestShard, guestShardPartition, keys } from '../table/table.js';
import type { Item, TableIO } from '../table/table-io.js';
import { each } from '../table/waves.js';
import { markedShards } from './shard-record.js';

/** The event's guest shard record as a walk read it (undefined: absent, no guest items). */
export interface RecordRead {
  record: Item | undefined;
}

export interface GuestShardsWalk extends RecordRead {
  /** The items found, in shard order then sort-key order. */
  items: Item[];
}

/**
 * Every item of the event's marked guest shards whose sort key is `prefix`
 * then a user id, in shard order then sort-key order; with `afterUser`, only
 * those after that user's item in the same order (a walk resumed from its
 * saved progress: shards before that user's shard are not read). `read`: the
 * record as the caller read it after the state it fans out was written (a
 * deletion's second walk takes its first's), else it is read here.
 */
export async function queryGuestShards(io: TableIO, eventId: string, prefix: string, afterUser?: string, read?: RecordRead): Promise<GuestShardsWalk> {
  const from = afterUser === undefined ? 0 : guestShard(afterUser);
  const record = read ? read.record : await io.get(keys.guestShards(eventId));
  const shards = markedShards(record).filter((shard) => shard >= from);
  const parts = await each(shards, (shard) =>
    io.queryAll({ pk: guestShardPartition(eventId, shard), prefix, after: shard === from && afterUser !== undefined ? `${prefix}${afterUser}` : undefined }),
  );
  return { items: parts.flat(), record };
}
