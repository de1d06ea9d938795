/**
 * Tallies: exact list totals without reading the list (docs/data-model.md,
 * "Totals").
 *
 * Every item listed in user-events-index (a public event in its host's HOSTED
 * list, a profile entry in a member's PROFILE list) has one tally entry in the
 * list's tally partition, sorted by start date. Summaries count the entries of
 * a day, the days of a month and the months of a year, each level in a
 * partition of its own (summaryPartition) with its recount tickets in
 * another (ticketKey), so that no partition takes more than about one write
 * per change of the list (docs/data-model.md). The number of events
 * that start before an instant x is then
 *
 *   Σ years before x's year + Σ months of that year before x's month
 *   + Σ days of that month before x's day + the entries of x's day before x,
 *
 * which reads every year summary (a few dozen tiny items at most), at most 11
 * month and 30 day summaries and one day of entries: the same whatever the
 * host's history. A window [lo, hi) holds prefix(hi) − prefix(lo).
 *
 * This file is the key arithmetic, pure and unit-tested; the repository reads
 * with it and tally-recount.ts writes with it.
 */
import type { DerivedItem, TableItem } from './items.js';
import { INDEXES, PK, SK } from './table.js';

const TALLY_PREFIX = 'TALLY#';
export const TALLY_SUMMARY_TYPE = 'TALLY_SUMMARY';
/** A summary's recount ticket (ticketKey): it only grows, as a guest count bucket's does. */
export const TALLY_TICKET_TYPE = 'TALLY_TICKET';
const TALLY_ENTRY_PREFIX = 'E#';

export interface TallyKey {
  pk: string;
  sk: string;
}

/** The tally partition of a list (its entries), named after its user-events-index partition. */
export function tallyPartition(listPartition: string): string {
  return `${TALLY_PREFIX}${listPartition}`;
}

/**
 * The partition of a list's summaries of one level, beside its entries':
 * TALLY#D#USER#ann#HOSTED. Each level's writes meet a partition of their
 * own (and its tickets another: ticketKey), so one list's burst of changes
 * splits its tally writes seven ways (docs/data-model.md, "Partitions under
 * the change path"); a read of a
 * total still sends one Query a level. No entry partition starts with a
 * level's letter: list partitions start with USER#.
 */
export function summaryPartition(tallyPk: string, level: Level): string {
  return `${TALLY_PREFIX}${level}#${tallyPk.slice(TALLY_PREFIX.length)}`;
}

/**
 * Where a summary's recount tickets are taken (tally-recount.ts): an item of
 * its own in a partition of its own, TALLY#DT#USER#ann#HOSTED, so that a
 * recount's two writes (its ticket, then its count) meet two partitions.
 */
export function ticketKey(summary: TallyKey): TallyKey {
  const level = summary.pk.slice(TALLY_PREFIX.length, TALLY_PREFIX.length + 1);
  return { pk: `${TALLY_PREFIX}${level}T#${summary.pk.slice(TALLY_PREFIX.length + 2)}`, sk: summary.sk };
}

/** The entries' partition of a summary partition. */
function entriesPartition(summaryPk: string): string {
  return `${TALLY_PREFIX}${summaryPk.slice(TALLY_PREFIX.length + 2)}`;
}

/**
 * The tally entry an item stands for, or null when the item is in no list.
 * The member's id makes it unique even while two users briefly share a
 * username (out-of-order renames), so two items never share an entry.
 */
export function tallyKeyOf(item: Record<string, unknown> | undefined): TallyKey | null {
  if (!item) return null;
  const listPartition = item[INDEXES.userEvents.partitionKey];
  const listSortKey = item[INDEXES.userEvents.sortKey];
  if (typeof listPartition !== 'string' || typeof listSortKey !== 'string') return null;
  const member = item.type === 'PROFILE_ENTRY' ? item.member_id : (item.creator as { id?: unknown } | undefined)?.id;
  if (typeof member !== 'string') return null;
  return { pk: tallyPartition(listPartition), sk: `${TALLY_ENTRY_PREFIX}${listSortKey}#${member}` };
}

export const sameTallyKey = (a: TallyKey | null | undefined, b: TallyKey | null | undefined): boolean =>
  a && b ? a.pk === b.pk && a.sk === b.sk : !a && !b;

export function tallyEntry(key: TallyKey, eventId: string): TableItem {
  return { [PK]: key.pk, [SK]: key.sk, type: 'TALLY_ENTRY', event_id: eventId };
}

// --- buckets ----------------------------------------------------------------

/** Summary levels, finest first: a day counts entries, a month days, a year months. */
export const LEVELS = ['D', 'M', 'Y'] as const;
export type Level = (typeof LEVELS)[number];
/** Characters of an ISO datetime that name a level's bucket: 2026-11-23 | 2026-11 | 2026. */
const BUCKET_LENGTH: Record<Level, number> = { D: 10, M: 7, Y: 4 };
/** Sorts after every character that follows a bucket's name in a child key. */
const HIGH = '~';

const startOfEntry = (entrySk: string): string => entrySk.slice(TALLY_ENTRY_PREFIX.length);

function summarySortKey(level: Level, iso: string): string {
  return `${level}#${iso.slice(0, BUCKET_LENGTH[level])}`;
}

/** Where a summary's children are: the partition and sort-key range (inclusive) of its entries, days or months. */
export function childRange(summary: TallyKey): { pk: string; from: string; to: string; entries: boolean } {
  const [level, bucket] = summary.sk.split('#') as [Level, string];
  const list = entriesPartition(summary.pk);
  if (level === 'D') return { pk: list, from: `${TALLY_ENTRY_PREFIX}${bucket}`, to: `${TALLY_ENTRY_PREFIX}${bucket}${HIGH}`, entries: true };
  const child = level === 'M' ? 'D' : 'M';
  return { pk: summaryPartition(list, child), from: `${child}#${bucket}-`, to: `${child}#${bucket}-${HIGH}`, entries: false };
}

/** The summaries an entry counts in, finest first. */
export function summariesOf(entry: TallyKey): TallyKey[] {
  const start = startOfEntry(entry.sk);
  return LEVELS.map((level) => ({ pk: summaryPartition(entry.pk, level), sk: summarySortKey(level, start) }));
}

/** Full load: the summaries of a set of entries, with their counts. */
export function summaryItems(entries: readonly TallyKey[]): TableItem[] {
  const counts = new Map<string, { key: TallyKey; count: number }>();
  for (const entry of entries) {
    for (const key of summariesOf(entry)) {
      const id = `${key.pk}\u0000${key.sk}`;
      const c = counts.get(id) ?? { key, count: 0 };
      c.count++;
      counts.set(id, c);
    }
  }
  return [...counts.values()].map(({ key, count }) => ({ [PK]: key.pk, [SK]: key.sk, type: TALLY_SUMMARY_TYPE, count }));
}

/** Full load: every derived item's tally entry, and their summaries. */
export function tallyItems(derived: readonly TableItem[]): TableItem[] {
  const entries: TallyKey[] = [];
  const items: TableItem[] = [];
  for (const item of derived) {
    const key = tallyKeyOf(item as unknown as Record<string, unknown>);
    if (!key) continue;
    entries.push(key);
    items.push(tallyEntry(key, String((item as { event_id?: unknown }).event_id)));
  }
  return [...items, ...summaryItems(entries)];
}

// --- reading ----------------------------------------------------------------

/** An inclusive sort-key range; `exclude` is its upper end when that must not count. */
export interface SortKeyRange {
  from: string;
  to: string;
  exclude?: string;
}

/**
 * What to read for "entries starting before `x`", apart from the year
 * summaries (read once per request): the months of x's year before its
 * month, the days of its month before its day, its day's entries before x.
 */
export function prefixRanges(x: string): { year: string; months: SortKeyRange; days: SortKeyRange; entries: SortKeyRange } {
  const month = summarySortKey('M', x);
  const day = summarySortKey('D', x);
  return {
    year: summarySortKey('Y', x),
    months: { from: `M#${x.slice(0, 4)}-`, to: month, exclude: month },
    days: { from: `D#${x.slice(0, 7)}-`, to: day, exclude: day },
    // No entry key equals `E#${x}`: every one continues with `#id`.
    entries: { from: `${TALLY_ENTRY_PREFIX}${x.slice(0, 10)}`, to: `${TALLY_ENTRY_PREFIX}${x}` },
  };
}

export const YEAR_RANGE: SortKeyRange = { from: 'Y#', to: `Y#${HIGH}` };

/** Σ of the year summaries before `x`'s year (all of them when x is undefined). */
export function yearsBefore(years: readonly { sk: string; count?: number }[], x: string | undefined): number {
  const limit = x === undefined ? undefined : summarySortKey('Y', x);
  return years.filter((y) => limit === undefined || y.sk < limit).reduce((n, y) => n + (y.count ?? 0), 0);
}

/** The first instant whose ISO form has five digits of year: no start is at or after it. */
const YEAR_10000 = Date.UTC(10000, 0, 1);

/** The half-open start window [lo, hi) of an inclusive `from`/`to` and an exclusive `before` (ISO strings). */
export function halfOpen(window: { from?: string; to?: string; before?: string }): { lo?: string; hi?: string } {
  // A `to` in the last millisecond of year 9999 bounds nothing: no start is later, and to + 1 ms has no 4-digit year.
  const afterTo = window.to !== undefined && Date.parse(window.to) + 1 < YEAR_10000 ? new Date(Date.parse(window.to) + 1).toISOString() : undefined;
  const his = [afterTo, window.before].filter(
    (h): h is string => h !== undefined,
  );
  return { lo: window.from, hi: his.length ? his.reduce((a, b) => (a < b ? a : b)) : undefined };
}
