/**
 * The pure half of a derivation (derivation.ts): from a unit's items as read
 * and its target items, what to write and how (a hide, a plain write, a
 * reveal); and from items read before the derivation's number (possibly
 * stale), what it will probably do, so that its first wave can already mark
 * the items it will reveal and take the recount tickets it will need
 * (docs/data-model.md, "A change in waves"). A prediction only saves round
 * trips: one that turns out wrong costs calls, never correctness, because the
 * derivation checks every item against what it reads after its number.
 */
import { FEED_NOTE } from '../feeds/feed.js';
import type { Item, Key } from '../table/table-io.js';
import { DERIVED_SORT_KEYS, INDEXES, PK, SK } from '../table/table.js';
import { sameTallyKey, tallyKeyOf, type TallyKey } from '../table/tally.js';
import { sameContent } from '../table/item-content.js';

export type Kind = 'hide' | 'plain' | 'reveal';

const INDEX_ATTRIBUTES = Object.values(INDEXES).flatMap((i) => [i.partitionKey, i.sortKey]);

/** Reveal when the item gets an index key it did not have; hide when it loses one it had. */
export function kindOf(have: Item | undefined, want: Item): Kind {
  if (want.type !== 'TOMBSTONE' && INDEX_ATTRIBUTES.some((a) => want[a] !== undefined && want[a] !== have?.[a])) return 'reveal';
  if (want.type === 'TOMBSTONE' || INDEX_ATTRIBUTES.some((a) => have?.[a] !== undefined && want[a] !== have[a])) return 'hide';
  return 'plain';
}

/** One item a derivation writes: what it wants there, what it read there, and how. */
export interface PlannedWrite {
  key: Key;
  want: Item;
  have: Item | undefined;
  kind: Kind;
}

/**
 * What to write: every item of the unit whose content differs from its
 * target. Where nothing is wanted, a tombstone goes over a live item, and
 * over a mark (a reveal's first step: whoever left it, it is voided).
 */
export function planWrites(own: readonly Key[], existing: ReadonlyMap<string, Item>, targets: readonly Item[]): PlannedWrite[] {
  const bySk = new Map(targets.map((t) => [String(t[SK]), t]));
  const writes: PlannedWrite[] = [];
  for (const key of own) {
    const sk = key[SK]!;
    const have = existing.get(sk);
    const want = bySk.get(sk) ?? (have && (have.type !== 'TOMBSTONE' || have.revealing !== undefined) ? { [PK]: key[PK], [SK]: sk, type: 'TOMBSTONE' } : undefined);
    if (!want || (have && sameContent(have, want))) continue;
    writes.push({ key, want, have, kind: kindOf(withoutMark(have), want) });
  }
  return writes;
}

/**
 * What a derivation will probably write, from the unit's items as they were
 * (`before`: read earlier, or derived from the sources before the change)
 * and as they will be (`after`): the items it will reveal (to mark before
 * its read), the tally entries it will move (to take their summaries'
 * tickets before its read), and whether it will change its count entry.
 */
export interface Expectation {
  reveals: Key[];
  moves: { from: TallyKey | null; to: TallyKey | null }[];
  countChanges: boolean;
}

export const NOTHING_EXPECTED: Expectation = { reveals: [], moves: [], countChanges: false };

export function expectation(own: readonly Key[], before: ReadonlyMap<string, Item | undefined>, after: readonly Item[]): Expectation {
  const existing = new Map([...before].flatMap(([sk, item]) => (item ? [[sk, item] as const] : [])));
  const out: Expectation = { reveals: [], moves: [], countChanges: false };
  for (const w of planWrites(own, existing, after)) {
    if (w.kind === 'reveal') out.reveals.push(w.key);
    const sk = String(w.key[SK]);
    if (isListedKey(sk)) {
      const from = tallyKeyOf(w.have);
      const to = tallyKeyOf(w.want);
      if (!sameTallyKey(from, to)) out.moves.push({ from, to });
    }
    if (sk.startsWith('COUNT#')) out.countChanges = true;
  }
  return out;
}

/** Derived items a changes feed shows (RSVP items), written like listed items so a feed note is never overwritten unfinished. */
export function isFedKey(sk: string): boolean {
  return sk.startsWith(DERIVED_SORT_KEYS.rsvpPrefix);
}

/** Derived items that may be listed in user-events-index, and so carry a tally entry. */
export function isListedKey(sk: string): boolean {
  return sk === DERIVED_SORT_KEYS.event || sk.startsWith(DERIVED_SORT_KEYS.profilePrefix);
}

/** Whether this item carries the mark this derivation placed (its token). */
export const markedWith = (item: Item | undefined, token: string): boolean => item?.revealing === token;

/** The item without a reveal's mark: what it shows. */
export function withoutMark(item: Item | undefined): Item | undefined {
  if (!item || item.revealing === undefined) return item;
  const { revealing: _mark, ...rest } = item;
  return rest;
}

export const noteOf = (item: Item | undefined): string[] => (Array.isArray(item?.[FEED_NOTE]) ? (item[FEED_NOTE] as string[]) : []);

export function withoutNote(item: Item): Item {
  const { [FEED_NOTE]: _note, ...rest } = item;
  return rest;
}

export const keyOf = (item: Item): Key => ({ [PK]: String(item[PK]), [SK]: String(item[SK]) });
