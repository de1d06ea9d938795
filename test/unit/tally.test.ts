/**
 * The tally arithmetic (lambdas/store/table/tally.ts), without a table: for any set
 * of start instants, "year counts + the ranges prefixRanges names" counts
 * exactly the starts before x, and halfOpen turns the API's inclusive bounds
 * into the half-open window the counts use.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { childRange, halfOpen, LEVELS, prefixRanges, summariesOf, summaryItems, summaryPartition, tallyKeyOf, tallyPartition, ticketKey, yearsBefore, type SortKeyRange, type TallyKey } from '../../lambdas/store/table/tally.js';

const instant = fc.integer({ min: Date.parse('2019-12-30T00:00:00.000Z'), max: Date.parse('2028-01-02T00:00:00.000Z') }).map((t) => new Date(t).toISOString());
const entryOf = (start: string, i: number): TallyKey => ({ pk: 'TALLY#USER#host#HOSTED', sk: `E#${start}#evt_${i}#usr_h` });
const inRange = (sk: string, r: SortKeyRange) => sk >= r.from && sk <= r.to && sk !== r.exclude;

describe('tally arithmetic', () => {
  it('prefix(x) from summaries and one day of entries = the number of starts before x', () => {
    fc.assert(
      fc.property(fc.array(instant, { maxLength: 60 }), instant, (starts, x) => {
        const entries = starts.map(entryOf);
        const summaries = summaryItems(entries) as unknown as { sk: string; count: number }[];
        const r = prefixRanges(x);
        const sum = (range: SortKeyRange) => summaries.filter((s) => inRange(s.sk, range)).reduce((n, s) => n + s.count, 0);
        const counted =
          yearsBefore(summaries.filter((s) => s.sk.startsWith('Y#')), x) + sum(r.months) + sum(r.days) + entries.filter((e) => inRange(e.sk, r.entries)).length;
        expect(counted).toBe(starts.filter((s) => s < x).length);
        expect(yearsBefore(summaries.filter((s) => s.sk.startsWith('Y#')), undefined)).toBe(starts.length);
      }),
      { numRuns: 500 },
    );
  });

  it('a summary counts exactly its children: a day its entries, a month its days, a year its months', () => {
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 40 }), (starts) => {
        const entries = starts.map(entryOf);
        const summaries = summaryItems(entries) as unknown as { pk: string; sk: string; count: number }[];
        for (const s of summaries) {
          const range = childRange(s);
          const children = range.entries ? entries.map((e) => ({ pk: e.pk, sk: e.sk, count: 1 })) : summaries;
          expect(children.filter((c) => c.pk === range.pk && c.sk >= range.from && c.sk <= range.to).reduce((n, c) => n + c.count, 0)).toBe(s.count);
        }
      }),
    );
  });

  it("a list's entries, each level's summaries and each level's tickets are seven partitions, never another list's", () => {
    // Usernames are lower-cased and made of letters, digits, "_", "-" and "."; the lists are HOSTED and PROFILE.
    const username = fc.stringMatching(/^[a-z0-9_.-]{1,64}$/);
    const list = fc.constantFrom('HOSTED', 'PROFILE');
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(username, list), { minLength: 1, maxLength: 6, selector: ([u, l]) => `${u}#${l}` }), instant, (lists, start) => {
        const owner = new Map<string, string>();
        for (const [u, l] of lists) {
          const entries = tallyPartition(`USER#${u}#${l}`);
          const entry = { pk: entries, sk: `E#${start}#evt_1#usr_1` };
          const summaries = summariesOf(entry);
          const partitions = [entries, ...summaries.map((s) => s.pk), ...summaries.map((s) => ticketKey(s).pk)];
          expect(new Set(partitions).size).toBe(1 + 2 * LEVELS.length);
          for (const p of partitions) {
            expect(owner.get(p) ?? `${u}#${l}`).toBe(`${u}#${l}`);
            owner.set(p, `${u}#${l}`);
          }
          // A summary's children are where its level below is: the entries, or the summaries of the finer level.
          expect(summaries.map((s) => childRange(s).pk)).toEqual([entries, summaryPartition(entries, 'D'), summaryPartition(entries, 'M')]);
        }
      }),
    );
  });

  it('halfOpen: inclusive to and exclusive before become one exclusive upper end', () => {
    expect(halfOpen({})).toEqual({ lo: undefined, hi: undefined });
    expect(halfOpen({ from: '2026-11-21T12:00:00.000Z' })).toEqual({ lo: '2026-11-21T12:00:00.000Z', hi: undefined });
    expect(halfOpen({ to: '2026-12-31T23:59:59.999Z' })).toEqual({ lo: undefined, hi: '2027-01-01T00:00:00.000Z' });
    expect(halfOpen({ to: '2026-12-31T23:59:59.999Z', before: '2026-11-21T12:00:00.000Z' }).hi).toBe('2026-11-21T12:00:00.000Z');
    // The latest `to` a client can send bounds nothing (to + 1 ms would have a five-digit year).
    expect(halfOpen({ from: '2026-11-21T12:00:00.000Z', to: '9999-12-31T23:59:59.999Z' })).toEqual({ lo: '2026-11-21T12:00:00.000Z', hi: undefined });
    expect(halfOpen({ to: '9999-12-31T23:59:59.998Z' }).hi).toBe('9999-12-31T23:59:59.999Z');
  });

  it('only listed items have an entry, and an entry names its member, so two members never share one', () => {
    const listed = { gsi2pk: 'USER#bob#PROFILE', gsi2sk: '2026-12-01T20:00:00.000Z#evt_g', type: 'PROFILE_ENTRY', member_id: 'usr_b' };
    expect(tallyKeyOf(listed)).toEqual({ pk: 'TALLY#USER#bob#PROFILE', sk: 'E#2026-12-01T20:00:00.000Z#evt_g#usr_b' });
    expect(tallyKeyOf({ ...listed, member_id: 'usr_c' })?.sk).not.toBe(tallyKeyOf(listed)?.sk);
    expect(tallyKeyOf({ type: 'EVENT', creator: { id: 'usr_a' } })).toBeNull();
    expect(tallyKeyOf({ type: 'TOMBSTONE' })).toBeNull();
    expect(tallyKeyOf(undefined)).toBeNull();
  });
});
