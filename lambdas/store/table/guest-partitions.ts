/**
 * An event's guests in shards and count buckets (docs/data-model.md, "An
 * event's guests in shards"): which partition holds a guest's items, and the
 * bucket its count entry is in.
 */
import { fnv1a } from './fnv1a.js';

/**
 * Guest counts are kept per bucket of guests, so that an RSVP recounts one
 * bucket (about guests / 64 tiny entries) and the event sums 64 summaries at
 * most: the same cost on an event of 10 or 10,000 guests.
 */
export const GUEST_COUNT_BUCKETS = 64;

/** A user's count bucket: FNV-1a of the id, two decimal digits (stable across runtimes). */
export function countBucket(userId: string): string {
  return String(fnv1a(userId) % GUEST_COUNT_BUCKETS).padStart(2, '0');
}

/**
 * An event's guest partitions: a guest's items are in shard `countBucket mod
 * GUEST_SHARDS`, so a count bucket's entries are in one partition (one Query
 * recounts it). Eight: a burst at the recommended ingest pace (about 430
 * RSVPs/s, docs/performance.md) writes about 9 items per RSVP over the 8
 * shards, about 480 write units a second per shard on average (550 in the
 * busiest measured), about half of a partition's 1,000; an event-wide walk
 * of its guests (an event's fan-out, a deletion's cascade) is 8 Queries at
 * once, one round trip.
 *
 * Part of every guest item's key: changing it (or countBucket) moves every
 * guest item, and a table written before needs a fresh load.
 */
export const GUEST_SHARDS = 8;

/** The shard that holds a count bucket's entries (every user of the bucket is in it). */
export function shardOfBucket(bucket: string): number {
  return Number(bucket) % GUEST_SHARDS;
}

/** A guest's shard of an event (0 to GUEST_SHARDS - 1). */
export function guestShard(userId: string): number {
  return shardOfBucket(countBucket(userId));
}

/** The partition key of an event's guest shard. */
export function guestShardPartition(eventId: string, shard: number): string {
  return `EVENT#${eventId}#G${shard}`;
}

/** The event and the shard whose guest partition this is (guestShardPartition), or undefined for any other partition. */
export function guestShardOfPartition(pk: string): { eventId: string; shard: number } | undefined {
  const found = /^EVENT#(.+)#G(\d+)$/.exec(pk);
  return found ? { eventId: found[1]!, shard: Number(found[2]) } : undefined;
}

/** The partition of a guest's items in an event. */
export function guestPartitionOf(eventId: string, userId: string): string {
  return guestShardPartition(eventId, guestShard(userId));
}

export const GUEST_SHARDS_SORT_KEY = 'SHARDS';

/** The attribute of an event's guest shards record (keys.guestShards) that marks shard `shard` occupied. */
export function shardMark(shard: number): string {
  return `g${shard}`;
}

/** Every guest shard of an event, in order. */
export function guestShardPartitions(eventId: string): string[] {
  return Array.from({ length: GUEST_SHARDS }, (_, shard) => guestShardPartition(eventId, shard));
}
