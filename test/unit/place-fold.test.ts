/**
 * The place fold's rules (lambdas/core/place-fold.ts), each stated against an
 * authority that is not the fold: Unicode's case mappings, the Unicode
 * Collation Algorithm's root order (ICU's, through Intl.Collator) for what an
 * accent is, and the scripts whose marks are letters. The gazetteer's
 * properties are in place-gazetteer.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FOLD_DEPARTURES, foldPlaceName, LATIN_LETTERS } from '../../lambdas/core/place-fold.js';

/** The root collation at its first level: equal when two strings differ at most in accents and case. */
const root = new Intl.Collator('und', { sensitivity: 'base' });
const caseFold = (s: string) => s.toLowerCase().toUpperCase().toLowerCase();

describe('LATIN_LETTERS is what the root collation says', () => {
  it('every Latin letter without a decomposition that the collation equates with plain letters is in the table, mapped to them, and nothing else is', () => {
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const plain = [...letters, ...[...letters].flatMap((a) => [...letters].map((b) => a + b))];
    const derived: Record<string, string> = {};
    for (let cp = 0x80; cp <= 0xffff; cp++) {
      const ch = String.fromCodePoint(cp);
      if (!/^\p{Script=Latin}$/u.test(ch) || !/\p{L}/u.test(ch) || ch.normalize('NFKD') !== ch || caseFold(ch) !== ch) continue;
      const match = plain.find((p) => root.compare(ch, p) === 0);
      if (match) derived[ch] = match;
    }
    expect(LATIN_LETTERS).toEqual(derived);
  });

  it('its departures are letters the collation keeps apart (þ is "th" by Icelandic romanisation)', () => {
    expect(Object.entries(FOLD_DEPARTURES).filter(([letter, plain]) => root.compare(letter, plain) === 0)).toEqual([]);
    expect(Object.keys(FOLD_DEPARTURES).filter((l) => l in LATIN_LETTERS)).toEqual([]);
  });
});

describe('a true case fold', () => {
  it.each([
    ['Gießen', 'GIESSEN', 'giessen'],
    ['Balıkesir', 'BALIKESIR', 'balikesir'],
    ['İstanbul', 'ISTANBUL', 'istanbul'],
    ['ΑΘΗΝΑΣ', 'αθηνασ', 'αθηνασ'],
    ['Ὀδησσός', 'ΟΔΗΣΣΟΣ', 'οδησσοσ'],
    ['ﬂorence', 'FLORENCE', 'florence'],
  ])('%j and %j fold to %j', (a, b, folded) => {
    expect([foldPlaceName(a), foldPlaceName(b)]).toEqual([folded, folded]);
  });

  it('a name, its upper case and its lower case are one key, in every script (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (s) => {
        const key = foldPlaceName(s);
        expect(foldPlaceName(s.toUpperCase())).toBe(key);
        expect(foldPlaceName(s.toLowerCase())).toBe(key);
        expect(foldPlaceName(key)).toBe(key);
        expect(foldPlaceName(s.normalize('NFD'))).toBe(key);
        expect(foldPlaceName(s.normalize('NFC'))).toBe(key);
      }),
      { numRuns: 2_000 },
    );
  });

  it('never leaves a capital ASCII letter (a hashed key part starts with one: lambdas/core/place.ts boundedPart)', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (s) => expect(/[A-Z]/.test(foldPlaceName(s))).toBe(false)));
  });
});

describe('accents dropped, letters kept', () => {
  it.each([
    ['Wrocław', 'wroclaw'],
    ['Łódź', 'lodz'],
    ['Białystok', 'bialystok'],
    ['Tromsø', 'tromso'],
    ['Đà Nẵng', 'da nang'],
    ['Æbeltoft', 'aebeltoft'],
    ['Þórshöfn', 'thorshofn'],
    ['Garðabær', 'gardabaer'],
    ['São Paulo', 'sao paulo'],
    ['Αθήνα', 'αθηνα'],
    ['Ёлкино', 'елкино'],
    ['Ra’s al Khaymah', 'ras al khaymah'],
    ['Saint-Étienne', 'saint etienne'],
    ['St. Gallen', 'st gallen'],
    ["Hawaiʻi", 'hawaii'],
  ])('%j → %j', (raw, folded) => {
    expect(foldPlaceName(raw)).toBe(folded);
  });

  it.each([
    ['पटना', 'पाटन'],
    ['नागौर', 'नगर'],
    ['পাটনা', 'পটনা'],
    ['மதுரை', 'மதரை'],
    ['เชียงใหม่', 'เชยงใหม'],
    ['つくば', 'つくは'],
    ['ガ', 'カ'],
    ['Мий', 'Мии'],
  ])('%j and %j stay two names (their marks are letters)', (a, b) => {
    expect(foldPlaceName(a)).not.toBe(foldPlaceName(b));
  });

  it('keeps the marks of every script but Latin, Greek and Cyrillic: a name made of one of their letters and a mark keeps the mark (property)', () => {
    const brahmic = fc.constantFrom('क', 'ন', 'த', 'ก', 'か', 'ಕ', 'ക', 'ක', 'ཀ', 'က');
    const sign = fc.constantFrom('\u093e', '\u09be', '\u0bbe', '\u0e34', '\u3099', '\u0cbe', '\u0d3e', '\u0dcf', '\u0f72', '\u102c');
    fc.assert(
      fc.property(brahmic, sign, (base, mark) => {
        const name = `${base}${mark}`.normalize('NFC');
        expect(foldPlaceName(name)).not.toBe(foldPlaceName(base));
      }),
    );
  });

  it('in Latin, Greek and Cyrillic, a letter and the same letter with any accents are one key where the root collation says so (property)', () => {
    // Not U+0345, Greek's iota subscript: its capital is the letter Ι, so the case fold makes it ι (ᾳ is ΑΙ).
    const accents = fc.array(fc.integer({ min: 0x300, max: 0x36f }).filter((cp) => cp !== 0x345), { minLength: 1, maxLength: 3 });
    const base = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZαβγδεηιοσυωАБВГДЕЖЗИКЛМНОПРСТУ');
    fc.assert(
      fc.property(base, accents, (letter, marks) => {
        const accented = `${letter}${String.fromCodePoint(...marks)}`.normalize('NFC');
        if (root.compare(accented, letter) !== 0) return;
        expect(foldPlaceName(accented)).toBe(foldPlaceName(letter));
      }),
    );
  });
});
