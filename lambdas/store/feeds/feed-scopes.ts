/**
 * Which feeds a derived item owes an entry (docs/data-model.md, "Changes
 * feeds"): the scopes each version shows its member in, what a write from one
 * version to the next must append, and the members a bulk writer appends.
 */
import { INDEXES, PK, SK, keys } from '../table/table.js';
import type { Item, Key } from '../table/table-io.js';
import { sameContent } from '../table/item-content.js';
import { placeName, placeOf, placeQueriesOf } from '../../core/place.js';
import { FEED_NOTE, FEED_SHARDS, feedScopes, shardOf } from './feed-layout.js';

/** Shown on a read route: in the event index (both event items and RSVP items). */
export const isShown = (item: Item | undefined): boolean => !!item && item.type !== 'TOMBSTONE' && item[INDEXES.event.partitionKey] !== undefined;

/**
 * The scopes a derived item shows its member in: an event item in the
 * catalogue, its host's feed and the feed of each place query it answers
 * (city and country, country alone, city alone: lambdas/core/place.ts, the
 * discovery index's rule), an RSVP item in its event's guest feed; none
 * while it is not shown. An event that moves is then appended to its old
 * places (a removal there) and its new ones.
 */
export function scopesShowing(item: Item | undefined): string[] {
  if (!isShown(item)) return [];
  const sk = String(item![SK]);
  if (sk === 'EVENT') {
    const places = placeQueriesOf(placeOf(item!.location as Parameters<typeof placeOf>[0])).map((q) => feedScopes.place(placeName(q)));
    return [feedScopes.catalogue(), feedScopes.host(String((item!.creator as { id: string }).id)), ...places];
  }
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
  if (scope.startsWith('GUESTS#')) return keys.rsvp(scope.slice('GUESTS#'.length), memberId);
  return keys.event(memberId);
}

/**
 * What a full load appends: for every scope, the members the derived items
 * show there, in the order given (the loader joins them, then appends them
 * as changes do: local/loader.ts).
 */
export function loadedMembers(derived: readonly Item[]): Map<string, string[]> {
  const byScope = new Map<string, string[]>();
  for (const item of derived) for (const scope of scopesShowing(item)) byScope.set(scope, [...(byScope.get(scope) ?? []), feedMemberOf(item)]);
  return byScope;
}

/**
 * Members grouped by their shard (shardOf), each group in the order given:
 * what one append writes to each head, and how bulk writers (the loader, a
 * resync) cut their appends so that each is one head's.
 */
export function groupByShard(members: readonly string[], shards = FEED_SHARDS): Map<number, string[]> {
  const groups = new Map<number, string[]>();
  for (const member of members) {
    const shard = shardOf(member, shards);
    groups.set(shard, [...(groups.get(shard) ?? []), member]);
  }
  return groups;
}
