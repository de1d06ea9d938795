/**
 * Changes feeds (PRODUCT P16): where they live in the table (docs/data-model.md,
 * "Changes feeds"). The write side (feed-append.ts, feed-flush.ts), which
 * scopes an item owes (feed-scopes.ts) and the read side (feed-entries.ts,
 * feed-reads.ts) all build on these keys and bounds.
 *
 * An entry says only "member M of scope S may have changed": position and
 * member id, never content. The feed route reads each member's current item
 * when it answers, so it shows what the read routes show then, and a hidden
 * or deleted member is `removed` whatever happened in between.
 *
 * One partition per scope, `FEED#{scope}`, its entries in FEED_SHARDS head
 * shards: a member's entries always go to the same shard (shardOf, a hash of
 * its id), and each shard is an independent log with its own positions 1, 2,
 * … The shards are there for the head's size: an entry stays in a head from
 * its append until its chunk is written and the head trimmed (two more round
 * trips), so N appenders back to back keep about 2·N entries in one head
 * (Little's law), over 1 KB (2 write units an append) with 16 appenders and
 * long ids; H shards share them, about 2·N/H entries a head.
 * - heads `H#{shard}`: `base` and `tail`, the shard's newest entries
 *   (positions base, base + 1, …). An append is one UpdateItem, `list_append`
 *   onto the tail: DynamoDB applies the updates of one item one at a time,
 *   so each append takes the shard's next positions with no read before it.
 *   Positions are dense and never reused: a head never expires.
 * - chunks `C#{last position}#{shard}`: runs of a shard's older entries
 *   (`lo`, `members`), keyed position first so that one Query from the
 *   lowest position a cursor still needs reads every shard's chunks after it
 *   and then the heads. The append whose tail crosses a multiple of the
 *   flush size copies the tail into a chunk, then removes those entries from
 *   the tail (conditional on `base`, so only once). A crash between leaves
 *   them in both places, the same entries at the same positions. A chunk
 *   expires 31 days after it is written: entries are kept at least 30 days
 *   (feed-cursor.ts, `asOf`).
 * - members `M#{member}`: the scope's current members, for a start from no
 *   cursor (which reads them, not the entries: it costs the members there
 *   are now, not the history). A member joins (`gen`: the version that
 *   showed it) before the entry that announces it, so a start that read the
 *   scope's position before its members either lists it or meets that entry
 *   later. One that leaves is deleted. Both are conditional on `gen`, so a
 *   late leave of an older version cannot remove a newer join; a late join
 *   of an older version can list a member that is not shown (a start skips
 *   it), until the member's next change in the scope.
 * A member is appended only to scopes that the version written or the one it
 * replaced shows it in (derivation.ts), so `removed` appears only in a scope
 * that showed the id: the replaced version was there, on the read routes.
 */
import { PK, SK } from '../table/table.js';
import type { Item, Key } from '../table/table-io.js';
import { createHash } from 'node:crypto';
import { FEED_SHARDS, everyShardAt, feedScopes } from '../../core/feed-cursor.js';

export const FEED_PARTITION_PREFIX = 'FEED#';
/** A head shard's sort key is `H#{shard}`; `H` alone is the single head of the layout before the shards, read by nothing. */
export const FEED_HEAD_PREFIX = 'H#';
/** Above every head's sort key and below the members': the end of an entries read's range. */
export const FEED_HEADS_END = 'H#~';
export const FEED_CHUNK_PREFIX = 'C#';
export const FEED_MEMBER_PREFIX = 'M#';
/**
 * A scope's member list lives beside its feed, not in it: `FEED#M#{scope}`
 * (no scope's name starts with `M#`). A change that makes a member join or
 * leave writes its member item and appends its entry; in one partition that
 * was two writes there per change (a stream of new events in one place: about
 * 860 write units a second at the ingest's 430 changes a second, over the
 * 800 the change path keeps under a partition's 1,000). Apart, each takes
 * one (docs/data-model.md, "Partitions under the change path"). Still under
 * `FEED#*`, the feed roles' leading keys.
 */
export const FEED_MEMBERS_PARTITION_PREFIX = `${FEED_PARTITION_PREFIX}M#`;
/**
 * The attribute of a derived item that holds its feed note (derivation.ts):
 * the scopes its writes are appended to. Owed only while a source item that
 * derived it is still `pending`; a settle of such an item appends them again.
 */
export const FEED_NOTE = 'feed_note';
/** Chunks are kept a day longer than a cursor lives, for the clocks of the functions that write and read them. */
export const CHUNK_TTL_SECONDS = 31 * 86_400;
/**
 * The tail is copied into a chunk each time its size crosses a multiple of
 * this many bytes: appends stay within one write unit (1 KB) with room for
 * those that land while a flush runs (about 2 round trips of a shard's
 * appenders: with FEED_SHARDS heads, 16 appenders leave about 4 in a head).
 * Each flush bills 2 units (its chunk and its trim), shared by the appends
 * between two: at 560 bytes, 9 of the longest ids (1.22 units an append)
 * rather than 7 at 480 (1.29), which 16 appenders of the longest ids took
 * past 1.3 (scripts/bench-head.ts).
 */
export const TAIL_FLUSH_BYTES = 560;
/** At most this many entries go into one chunk (the trim's REMOVE lists each). */
export const MAX_CHUNK_ENTRIES = 200;
/**
 * Members a bulk writer (the loader, a resync's notes) appends in one call:
 * half a chunk, so the flush each such append sets off moves the whole tail
 * and a tail left long by a crash between an append and its flush drains.
 * Fewer, larger writes than a change's appends: about 0.12 billed units an
 * entry against 0.19 in appends of 16 (the head, the chunk and the trim each
 * about 4 KB).
 */
export const BULK_APPEND = 100;
/**
 * The most entries a head's tail holds (each shard's): one flush (a chunk of
 * MAX_CHUNK_ENTRIES) empties a full tail, and with the contract's longest
 * ids (68 characters) the head stays under HEAD_MAX_BYTES whatever fails.
 */
export const MAX_TAIL_ENTRIES = MAX_CHUNK_ENTRIES;
/** The contract's longest id (docs/dataset-format.md), which bounds an entry's size. */
export const MAX_MEMBER_ID_LENGTH = 68;
/**
 * The head's largest size in bytes, by construction: its keys and attributes
 * with the longest scope (an event's guest feed of the longest event id) and
 * a full tail of the longest ids. Held by test/integration/feed-head-bound.test.ts.
 */
export const HEAD_MAX_BYTES = headBytes(`GUESTS#${'e'.repeat(MAX_MEMBER_ID_LENGTH)}`, MAX_TAIL_ENTRIES, MAX_MEMBER_ID_LENGTH, FEED_SHARDS - 1);
/** Digits of a chunk key's position: fixed width, so that key order is position order. */
export const POSITION_DIGITS = 12;
/** `base` is one of DynamoDB's reserved words. */
export const HEAD_NAMES = { '#tail': 'tail', '#base': 'base' };

export { FEED_SHARDS, everyShardAt, feedScopes };

/**
 * The head shard of a member's entries in any scope, of `shards`: stable, so
 * one member's entries stay in order in one log and a retry goes where its
 * first try went.
 */
export const shardOf = (member: string, shards = FEED_SHARDS): number => (shards === 1 ? 0 : createHash('sha256').update(member).digest().readUInt32BE(0) % shards);

export const feedPartition = (scope: string): string => `${FEED_PARTITION_PREFIX}${scope}`;
export const headKey = (scope: string, shard: number): Key => ({ [PK]: feedPartition(scope), [SK]: headSortKey(shard) });
export const chunkSortKey = (last: number, shard: number): string => `${FEED_CHUNK_PREFIX}${String(last).padStart(POSITION_DIGITS, '0')}#${shard}`;
/** The first chunk key that may hold a position at or after `position`, whatever its shard. */
export const chunkRangeStart = (position: number): string => `${FEED_CHUNK_PREFIX}${String(position).padStart(POSITION_DIGITS, '0')}`;
export const feedMembersPartition = (scope: string): string => `${FEED_MEMBERS_PARTITION_PREFIX}${scope}`;
export const memberKey = (scope: string, memberId: string): Key => ({ [PK]: feedMembersPartition(scope), [SK]: `${FEED_MEMBER_PREFIX}${memberId}` });

/** The bytes DynamoDB counts for a list of strings (3, and per element 1 plus its UTF-8 length). */
export const listBytes = (members: readonly string[]): number => 3 + members.reduce((n, m) => n + 1 + Buffer.byteLength(m), 0);

/** A function, not a const: HEAD_MAX_BYTES needs it while the module loads. */
export function headSortKey(shard: number): string {
  return `${FEED_HEAD_PREFIX}${shard}`;
}

/** The bytes of head `shard` of this scope holding `entries` ids of `idLength` ASCII characters (`base` at its widest). */
export function headBytes(scope: string, entries: number, idLength: number, shard = 0): number {
  const keyBytes = PK.length + Buffer.byteLength(`${FEED_PARTITION_PREFIX}${scope}`) + SK.length + headSortKey(shard).length;
  const attributes = 'type'.length + 'FEED_HEAD'.length + 'base'.length + 21 + 'tail'.length;
  return keyBytes + attributes + 3 + entries * (1 + idLength);
}

/** A feed item's shard and run of entries, or undefined for an item of no shard (the layout before the shards, members). */
export function feedRun(item: Item, shards = FEED_SHARDS): { shard: number; head: boolean; lo: number; members: string[] } | undefined {
  const sk = String(item[SK]);
  const head = sk.startsWith(FEED_HEAD_PREFIX);
  if (!head && !sk.startsWith(FEED_CHUNK_PREFIX)) return undefined;
  const tag = head ? sk.slice(FEED_HEAD_PREFIX.length) : sk.slice(FEED_CHUNK_PREFIX.length + POSITION_DIGITS + 1);
  if (!head && sk[FEED_CHUNK_PREFIX.length + POSITION_DIGITS] !== '#') return undefined;
  const shard = /^[0-9]+$/.test(tag) ? Number(tag) : -1;
  if (shard < 0 || shard >= shards) return undefined;
  return { shard, head, lo: Number(head ? item.base : item.lo), members: ((head ? item.tail : item.members) ?? []) as string[] };
}
