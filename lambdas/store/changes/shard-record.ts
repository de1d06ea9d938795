/**
 * An event's record of its occupied guest shards (keys.guestShards,
 * items.ts GuestShardsItem). The rule every writer keeps: a shard is marked
 * in the record, and the mark has landed, before anything is written in that
 * shard; a mark is never removed. So "an item in guest shard s of event e"
 * implies "s is marked in e's record", at every moment, whoever dies when,
 * and an event-wide walk that reads the record after the state it fans out
 * was written queries only the marked shards (guest-shards.ts; the argument
 * is in docs/data-model.md, "An event's guests in shards").
 *
 * Marking is paid once per shard and event, not per RSVP: a writer first
 * looks at a record it read anyway (an RSVP's change reads it with its
 * sources) and writes the mark only when it is missing.
 */
import { GUEST_SHARDS, guestShard, keys, shardMark } from '../table/table.js';
import type { GuestShardsItem } from '../table/items.js';
import type { Item, TableIO } from '../table/table-io.js';

/** What the caller knows of a guest's shard: marked (read so, or an item of it seen there), or read unmarked. Unknown: read first. */
export type ShardKnown = 'marked' | 'unmarked';

/** The shards a record marks, in order (none for an absent record). */
export function markedShards(record: Item | undefined): number[] {
  return Array.from({ length: GUEST_SHARDS }, (_, shard) => shard).filter((shard) => record?.[shardMark(shard)] === true);
}

/** Whether a record read marks the guest's shard. */
export function marksGuest(record: Item | undefined, userId: string): boolean {
  return record?.[shardMark(guestShard(userId))] === true;
}

/** The record of an event whose guest items are in these shards (the full load's), or nothing when there are none. */
export function shardRecordOf(eventId: string, shards: Iterable<number>): (GuestShardsItem & { pk: string; sk: string })[] {
  const marks = [...new Set(shards)].sort((a, b) => a - b);
  if (!marks.length) return [];
  return [{ ...keys.guestShards(eventId), type: 'GUEST_SHARDS', ...Object.fromEntries(marks.map((s) => [shardMark(s), true])) } as GuestShardsItem & { pk: string; sk: string }];
}

export class ShardRecord {
  constructor(private readonly io: TableIO) {}

  /** The record as it is now (a consistent GetItem). */
  read(eventId: string): Promise<Item | undefined> {
    return this.io.get(keys.guestShards(eventId));
  }

  /** Marks the guest's shard. Idempotent (a SET of a constant), so a retried or repeated mark changes nothing. */
  async mark(eventId: string, userId: string): Promise<void> {
    await this.io.update(keys.guestShards(eventId), 'SET #mark = :true, #type = :type', { ':true': true, ':type': 'GUEST_SHARDS' }, { '#mark': shardMark(guestShard(userId)) });
  }

  /** The guest's shard marked before the caller writes there: nothing when known marked, the mark when read unmarked, else a read first. */
  async ensure(eventId: string, userId: string, known?: ShardKnown): Promise<void> {
    if (known === 'marked') return;
    if (known === undefined && marksGuest(await this.read(eventId), userId)) return;
    await this.mark(eventId, userId);
  }
}
