/**
 * Changes feeds (PRODUCT P16): where they live in the table and how the write
 * side appends to them (docs/data-model.md, "Changes feeds").
 *
 * A feed entry says only "member M of scope S may have changed": scope,
 * position, member id, never content. The feed route reads each member's
 * current item when it answers, so it shows what the read routes show then,
 * and a hidden or deleted member is `removed` whatever happened in between.
 *
 * One partition per scope, `FEED#{scope}`:
 * - entries `P#{position}` (12 digits), positions dense from 1: an entry is
 *   written at (the highest position) + 1, `IF attribute_not_exists`, so an
 *   entry exists only where every lower position was written before it. A
 *   reader that has passed position p never meets a later entry at or below p.
 * - one pointer per member appended since the load, `M#{memberId}`: `pos`,
 *   its newest position, set before that entry is written. A reader skips an
 *   entry below its member's pointer (a newer one follows), so each member
 *   shows once per pass. (A loaded entry has no pointer until its member's
 *   next append: nothing is above it to skip it for.)
 * A member is appended only to scopes that the version written or the one it
 * replaced shows it in (derivation.ts), so `removed` appears only in a scope
 * that showed the id: the replaced version was there, on the read routes.
 * An entry its member has superseded expires (TTL); a member's newest entry
 * never does, so the highest position never goes away and the scope's
 * members are all there for a start from no cursor.
 */
import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { INDEXES, PK, SK, TTL_ATTRIBUTE } from './table.js';
import type { Item, Key, TableIO } from './table-io.js';
import type { Clock } from '../core/clock.js';
import { feedScopes } from '../core/feed-cursor.js';
import { sameContent } from './item-content.js';

export const FEED_PARTITION_PREFIX = 'FEED#';
export const FEED_ENTRY_PREFIX = 'P#';
export const FEED_MEMBER_PREFIX = 'M#';
/**
 * The attribute of a derived item that holds its feed note (derivation.ts):
 * the scopes its writes were appended to. Owed only while a source item that
 * derived it is still `pending`; a settle of such an item appends them again.
 */
export const FEED_NOTE = 'feed_note';
/** A superseded entry is kept a day (no reader needs it: its member's newer entry follows). */
const SUPERSEDED_TTL_SECONDS = 86_400;
const POSITION_DIGITS = 12;

export { feedScopes };

export const feedPartition = (scope: string): string => `${FEED_PARTITION_PREFIX}${scope}`;
export const entrySortKey = (position: number): string => `${FEED_ENTRY_PREFIX}${String(position).padStart(POSITION_DIGITS, '0')}`;
export const memberKey = (scope: string, memberId: string): Key => ({ [PK]: feedPartition(scope), [SK]: `${FEED_MEMBER_PREFIX}${memberId}` });
export const positionOf = (entry: Item): number => Number(String(entry[SK]).slice(FEED_ENTRY_PREFIX.length));

/** Shown on a read route: in the event index (both event items and RSVP items). */
export const isShown = (item: Item | undefined): boolean => !!item && item.type !== 'TOMBSTONE' && item[INDEXES.event.partitionKey] !== undefined;

/**
 * The scopes a derived item shows its member in: an event item in the
 * catalogue and its host's feed, an RSVP item in its event's guest feed;
 * none while it is not shown.
 */
export function scopesShowing(item: Item | undefined): string[] {
  if (!isShown(item)) return [];
  const sk = String(item![SK]);
  if (sk === 'EVENT') return [feedScopes.catalogue(), feedScopes.host(String((item!.creator as { id: string }).id))];
  if (sk.startsWith('RSVP#')) return [feedScopes.guests(String(item!.event_id))];
  return [];
}

/** What a feed shows of an item; guest counts are not part of a public event. */
const VIEW_IGNORES = new Set(['guest_counts', 'revealing', FEED_NOTE]);
const view = (item: Item): Item => Object.fromEntries(Object.entries(item).filter(([k]) => !VIEW_IGNORES.has(k)));

/**
 * The scopes a write from `have` to `want` must be appended to: every scope
 * either version shows the member in, unless both show the same thing there
 * (a guest-count change of an event is no change to its feeds).
 */
export function scopesToAppend(have: Item | undefined, want: Item): string[] {
  const before = scopesShowing(have);
  const after = scopesShowing(want);
  if (have && before.length && after.length && sameContent(view(have), view(want))) return [];
  return [...new Set([...before, ...after])];
}

/** The member id of a derived item in its feeds. */
export function feedMemberOf(item: Item): string {
  const sk = String(item[SK]);
  return sk === 'EVENT' ? String(item.event_id ?? String(item[PK]).slice('EVENT#'.length)) : sk.slice(sk.indexOf('#') + 1);
}

/** The item whose current state a feed shows for a member. */
export function memberItemKey(scope: string, memberId: string): Key {
  if (scope.startsWith('GUESTS#')) return { [PK]: `EVENT#${scope.slice('GUESTS#'.length)}`, [SK]: `RSVP#${memberId}` };
  return { [PK]: `EVENT#${memberId}`, [SK]: 'EVENT' };
}

/** The write side's appends (one derivation's feed note at a time). */
export class FeedAppender {
  constructor(
    private readonly io: TableIO,
    private readonly clock: Clock,
  ) {}

  /**
   * Appends "member may have changed" to a scope: the pointer is moved to
   * the next position, then the entry is written there (retrying at a
   * higher one when another append took it), then the member's previous entry
   * expires. A crash anywhere leaves the derived item's note, and whoever
   * derives the unit next appends again (derivation.ts).
   */
  async append(scope: string, memberId: string): Promise<void> {
    const pointerKey = memberKey(scope, memberId);
    const pointer = await this.io.get(pointerKey);
    const previous = typeof pointer?.pos === 'number' ? pointer.pos : undefined;
    const pk = feedPartition(scope);
    for (;;) {
      const position = (await this.lastPosition(pk)) + 1;
      // Pointer first: a reader that meets the older entry while this one is on its way skips it, and meets this one later.
      await this.io.updateIf(pointerKey, 'SET #type = :type, pos = :pos', 'attribute_not_exists(pos) OR pos < :pos', { ':type': 'FEED_MEMBER', ':pos': position }, { '#type': 'type' });
      const entry: Item = { [PK]: pk, [SK]: entrySortKey(position), type: 'FEED_ENTRY', member: memberId, written_at: this.clock().toISOString(), writer: randomUUID() };
      if (await this.io.putIf(entry, 'attribute_not_exists(#pk)')) break;
      // A lost response's retry: this append's own entry stands.
      const there = await this.io.get({ [PK]: pk, [SK]: entrySortKey(position) });
      if (there?.writer === entry.writer) break;
    }
    if (previous !== undefined) {
      const expires = Math.floor(this.clock().getTime() / 1000) + SUPERSEDED_TTL_SECONDS;
      await this.io.updateIf({ [PK]: pk, [SK]: entrySortKey(previous) }, 'SET #ttl = :expires', 'attribute_exists(#pk) AND #member = :member', { ':expires': expires, ':member': memberId }, { '#ttl': TTL_ATTRIBUTE, '#member': 'member' });
    }
  }

  /** The scope's highest position (0 when it has none): one consistent Query, one item. */
  private async lastPosition(pk: string): Promise<number> {
    const out = await this.io.client.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': pk, ':prefix': FEED_ENTRY_PREFIX },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const last = out.Items?.[0];
    return last ? positionOf(last) : 0;
  }
}

/**
 * A full load's feeds: an entry per shown member of every scope, positions
 * from 1 in the order given, no pointers (a table loaded from a dataset starts
 * its feeds with its current contents, at one small item per member).
 */
export function loadedFeedItems(derived: readonly Item[]): Item[] {
  const next = new Map<string, number>();
  const items: Item[] = [];
  for (const item of derived) {
    for (const scope of scopesShowing(item)) {
      const position = (next.get(scope) ?? 0) + 1;
      next.set(scope, position);
      const member = feedMemberOf(item);
      items.push({ [PK]: feedPartition(scope), [SK]: entrySortKey(position), type: 'FEED_ENTRY', member, written_at: '1970-01-01T00:00:00.000Z' });
    }
  }
  return items;
}
