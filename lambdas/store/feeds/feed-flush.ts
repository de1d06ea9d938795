/**
 * A head's flush: its tail copied into a chunk, then those entries removed
 * from the head, conditional on `base`, so only once. A crash between leaves
 * them in both places, the same entries at the same positions, which a read
 * takes as one (feed-entries.ts).
 */
import { PK, SK, TTL_ATTRIBUTE } from '../table/table.js';
import type { TableIO } from '../table/table-io.js';
import type { Clock } from '../../core/clock.js';
import { CHUNK_TTL_SECONDS, HEAD_NAMES, chunkSortKey, feedPartition, headKey } from './feed-layout.js';

/** Copies the tail as read (at most `maxChunkEntries` of it) into a chunk, then removes those entries from the head (only if no flush did since). */
export async function flushTail(io: TableIO, clock: Clock, scope: string, shard: number, base: number, tail: readonly string[], maxChunkEntries: number): Promise<void> {
  const moved = tail.slice(0, maxChunkEntries);
  const last = base + moved.length - 1;
  await io.put({ [PK]: feedPartition(scope), [SK]: chunkSortKey(last, shard), type: 'FEED_CHUNK', lo: base, members: moved, [TTL_ATTRIBUTE]: chunkExpiry(clock) });
  // Highest index first: DynamoDB reads every index of one REMOVE against the list as it was, dynalite removes them
  // one after another; from the end both remove the same elements (test/integration/store-differences.test.ts).
  const removes = moved.map((_, i) => `#tail[${moved.length - 1 - i}]`).join(', ');
  await io.updateIf(headKey(scope, shard), `REMOVE ${removes} SET #base = :next`, '#base = :base', { ':next': last + 1, ':base': base }, HEAD_NAMES);
}

/** A chunk written now expires CHUNK_TTL_SECONDS later. */
function chunkExpiry(clock: Clock): number {
  return Math.floor(clock().getTime() / 1000) + CHUNK_TTL_SECONDS;
}
