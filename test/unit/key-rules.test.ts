/**
 * The key rules as pure functions (lambdas/core/key-rules.ts), against any
 * sequence of slot changes (fast-check): the limit and the daily creates are
 * never exceeded by creates, whatever order their clocks read (the day
 * counted only moves forward, and a user's deletion keeps the day's count),
 * every change is idempotent by key id (what a retried write relies on), a
 * closed user's earlier reads are refused and a newer one's are not; and key names with control or bidirectional
 * formatting characters are refused, naming the character.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DAILY_REQUESTS_PER_USER, MAX_ACTIVE_KEYS, MAX_CREATES_PER_DAY, STALE_CREATE_MS, adopt, checkKeyName, close, release, reserve, staleHolders, utcDay, type Slots } from '../../lambdas/core/key-rules.js';
import { DAILY_QUOTA } from '../../lambdas/core/rate-limit.js';

const T0 = Date.parse('2026-11-21T00:00:00.000Z');
type Change = { kind: 'reserve'; key: number; hours: number; userVersion: number } | { kind: 'release'; key: number } | { kind: 'close'; version: number } | { kind: 'adopt'; keys: number[] };
const change: fc.Arbitrary<Change> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('reserve' as const), key: fc.integer({ min: 0, max: 30 }), hours: fc.integer({ min: 0, max: 60 }), userVersion: fc.integer({ min: 0, max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), key: fc.integer({ min: 0, max: 30 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('close' as const), version: fc.integer({ min: 0, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('adopt' as const), keys: fc.array(fc.integer({ min: 31, max: 40 }), { maxLength: 3 }) }) },
);
const keyId = (n: number) => `key_${String(n).padStart(4, '0')}`;

describe('slots', () => {
  it('creates never pass the limit or the daily creates; each change is idempotent; a closed user is refused to readers from before', () => {
    fc.assert(
      fc.property(fc.array(change, { maxLength: 60 }), (changes) => {
        let s: Slots = { holders: {} };
        const createdOn = new Map<string, number>();
        /** The latest day any create read: the day a create counts against (hours go back and forth, as clocks of concurrent functions do). */
        let latestDay = '';
        for (const c of changes) {
          const before = s;
          if (c.kind === 'reserve') {
            const at = new Date(T0 + c.hours * 3_600_000);
            const counted = utcDay(at) > latestDay ? utcDay(at) : latestDay;
            const r = reserve(s, keyId(c.key), at, c.userVersion);
            if ('slots' in r) {
              expect(Object.keys(s.holders).length).toBeLessThan(MAX_ACTIVE_KEYS);
              expect(s.closedVersion === undefined || c.userVersion > s.closedVersion).toBe(true);
              expect(r.slots.day).toBe(counted);
              latestDay = counted;
              createdOn.set(counted, (createdOn.get(counted) ?? 0) + 1);
              // Idempotent: the same reservation again changes nothing.
              expect(reserve(r.slots, keyId(c.key), at, c.userVersion)).toEqual({ already: true });
              s = r.slots;
            } else if ('refused' in r && r.refused === 'USER_GONE') {
              expect(c.userVersion).toBeLessThanOrEqual(s.closedVersion!);
            } else if ('refused' in r && r.refused === 'CREATE_LIMIT') {
              expect(createdOn.get(counted)).toBe(MAX_CREATES_PER_DAY);
            } else if ('refused' in r) {
              expect(Object.keys(s.holders).length).toBeGreaterThanOrEqual(MAX_ACTIVE_KEYS);
            } else {
              expect(keyId(c.key) in s.holders).toBe(true);
            }
          } else if (c.kind === 'release') {
            const next = release(s, keyId(c.key));
            expect(next === null).toBe(!(keyId(c.key) in s.holders));
            if (next) {
              expect(release(next, keyId(c.key))).toBeNull();
              s = next;
            }
          } else if (c.kind === 'close') {
            const next = close(s, c.version);
            if (next) {
              expect(close(next, c.version)).toBeNull();
              // The day's count outlives the deletion: the same user id re-created that day goes on from it.
              expect({ day: next.day, created: next.created }).toEqual({ day: s.day, created: s.created });
              s = next;
            }
          } else {
            const next = adopt(s, c.keys.map(keyId), new Date(T0));
            if (next) {
              expect(adopt(next, c.keys.map(keyId), new Date(T0))).toBeNull();
              s = next;
            }
          }
          for (const n of createdOn.values()) expect(n).toBeLessThanOrEqual(MAX_CREATES_PER_DAY);
          // The stored day never moves back, and a day's count never goes down.
          if (before.day !== undefined) {
            expect(s.day !== undefined && s.day >= before.day).toBe(true);
            if (s.day === before.day) expect(s.created!).toBeGreaterThanOrEqual(before.created!);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('states the bound a user can reach in a day: the keys active at midnight and the day\'s creates, each at the daily quota', () => {
    expect(DAILY_REQUESTS_PER_USER).toBe((MAX_ACTIVE_KEYS + MAX_CREATES_PER_DAY) * DAILY_QUOTA);
    expect(DAILY_REQUESTS_PER_USER).toBe(20_000);
  });

  it('counts a slot as stale only once its create is presumed dead', () => {
    const s: Slots = { holders: { key_old: new Date(T0).toISOString(), key_new: new Date(T0 + STALE_CREATE_MS - 1).toISOString() } };
    expect(staleHolders(s, new Date(T0 + STALE_CREATE_MS))).toEqual(['key_old']);
  });
});

describe('key names', () => {
  const forbidden = fc.constantFrom(...[0x00, 0x07, 0x09, 0x0a, 0x0d, 0x1b, 0x7f, 0x85, 0x9f, 0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069].map((c) => String.fromCodePoint(c)));
  const plain = fc.string({ unit: 'grapheme', maxLength: 40 }).filter((t) => !/[\p{Cc}\p{Cs}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u.test(t));

  it('refuses any name holding a control or bidirectional formatting character, naming it and its place', () => {
    fc.assert(
      fc.property(plain, forbidden, plain, (before, bad, after) => {
        const name = `x${before}${bad}${after}x`;
        const checked = checkKeyName(name);
        expect(checked.ok).toBe(false);
        if (!checked.ok) expect(checked.message).toContain(`U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
      }),
    );
  });

  it('accepts any other name of 1-100 characters once trimmed, trimmed', () => {
    fc.assert(
      fc.property(plain, (name) => {
        const checked = checkKeyName(name);
        const trimmed = name.trim();
        expect(checked).toEqual(trimmed.length >= 1 && trimmed.length <= 100 ? { ok: true, name: trimmed } : { ok: false, message: 'name must be 1-100 characters' });
      }),
    );
  });
});
