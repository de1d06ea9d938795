/**
 * The fold of a place name (PRODUCT P17: "a city matches whatever its
 * spelling of case, accents and spaces"), one rule for the dataset's values
 * and a consumer's query. Part of every place key (index keys, feed scopes):
 * a changed fold re-keys stored places (docs/data-model.md, "Discovery").
 *
 * 1. Compatibility decomposition (NFKD): ligatures, full-width and other
 *    compatibility forms become their plain letters (ﬁ → fi, Ｐ → P).
 * 2. A full case fold: lower case, upper case, lower case again, then final
 *    sigma as sigma. `toLowerCase` alone is no case fold: "Gießen" upper-cased is
 *    "GIESSEN", and "Balıkesir" (dotless ı) is "BALIKESIR"; both fold to the
 *    same key as their own capitals now. "İ" (dotted capital) is i. Greek's
 *    iota subscript is the letter iota, as its capital writes it (ᾳ, ΑΙ: αι).
 * 3. Accents dropped, letters kept: the marks of Unicode's Combining
 *    Diacritical Marks blocks (the accents of Latin, Greek and Cyrillic
 *    letters), except where the Unicode Collation Algorithm's root order makes
 *    the letter a letter of its own (й, the Cyrillic short i: its breve
 *    stays). The marks of other scripts are their letters (Devanagari,
 *    Bengali, Tamil and Thai vowel signs, the kana voicing marks): never
 *    dropped, so पटना (Patna) and पाटन (Patan) stay two cities, as do つくば
 *    and つくは.
 * 4. Latin letters that decomposition does not split (ł ø đ æ œ and the
 *    others of LATIN_LETTERS) become the plain letters the root collation
 *    equates them with: "Łódź" is "lodz", "Tromsø" "tromso", "Đà Nẵng" "da
 *    nang". And þ is "th" (Icelandic's own romanisation; the collation keeps
 *    it a letter).
 * 5. Apostrophes (', ’, ‘, ʼ, ʻ and the other signs spelt with them) and
 *    full stops dropped, hyphens and dashes made spaces, as people type them:
 *    "Ra’s al Khaymah" is "Ras al Khaymah", "Saint-Étienne" "saint etienne",
 *    "St. Gallen" "st gallen"; marks that show nothing (a right-to-left
 *    mark, a zero-width space, a control character) dropped too.
 * 6. Canonical composition (NFC: kana and their voicing marks, Hangul
 *    syllables are whole again), runs of white space one space, trimmed.
 *
 * Pure code and fixed tables: the same key on every runtime, whatever its
 * ICU (test/unit/place-fold.test.ts derives LATIN_LETTERS from the root
 * collation again and holds the fold to a real gazetteer's names,
 * test/unit/place-gazetteer.test.ts).
 */

/**
 * Latin letters without a decomposition, as the case fold leaves them, and
 * the plain letters the Unicode Collation Algorithm's root order equates them
 * with at its first level (the level that ignores accents and case).
 */
export const LATIN_LETTERS: Readonly<Record<string, string>> = {
  æ: 'ae',
  ð: 'd',
  ø: 'o',
  đ: 'd',
  ħ: 'h',
  ł: 'l',
  œ: 'oe',
  ƍ: 'zw',
  ƾ: 'ts',
  ȸ: 'db',
  ȹ: 'qp',
  ʣ: 'dz',
  ʦ: 'ts',
  ʪ: 'ls',
  ʫ: 'lz',
  ᵹ: 'g',
  ᵺ: 'th',
  ỻ: 'll',
  ꜩ: 'tz',
  ꜳ: 'aa',
  ꜵ: 'ao',
  ꜷ: 'au',
  ꜹ: 'av',
  ꜻ: 'av',
  ꜽ: 'ay',
  ꝏ: 'oo',
  ꝛ: 'r',
  ꝡ: 'vy',
  ꝺ: 'd',
  ꝼ: 'f',
  ꞃ: 'r',
  ꞅ: 's',
  ꞇ: 't',
  ꞛ: 'a',
  ꞝ: 'o',
  ꞟ: 'u',
  ꞡ: 'g',
  ꞣ: 'k',
  ꞥ: 'n',
  ꞧ: 'r',
  ꞩ: 's',
  ꟁ: 'a',
  ꟃ: 'w',
  ꟙ: 's',
};

/** Where the fold departs from the root collation, on purpose (above, 4). */
export const FOLD_DEPARTURES: Readonly<Record<string, string>> = { þ: 'th' };

const PLAIN: Readonly<Record<string, string>> = { ...LATIN_LETTERS, ...FOLD_DEPARTURES };
const PLAIN_LETTER = new RegExp(`[${Object.keys(PLAIN).join('')}]`, 'gu');

/** The accents: the Combining Diacritical Marks blocks (and their Extended and Supplement, for Symbols, Half Marks). */
const ACCENT = '\\u0300-\\u036f\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u20d0-\\u20ff\\ufe20-\\ufe2f';
/** Every accent, but the breve (U+0306) of и: й is a letter of its own. */
const ACCENTS = new RegExp(`(?<![\\u0418\\u0438])[${ACCENT}]|(?<=[\\u0418\\u0438])[\\u0300-\\u0305\\u0307-\\u036f\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u20d0-\\u20ff\\ufe20-\\ufe2f]`, 'gu');
/** Apostrophes and the letters spelt with one (modifier letters, the okina, ayin and hamza signs), and full stops. */
const DROPPED = /['’‘ʼʻʽʾʿˈ`´′‛.]/gu;
/** What shows nothing: zero-width space, left-to-right and right-to-left marks, word joiner, byte-order mark, control characters. */
const INVISIBLE = /[\u200b\u200e\u200f\u2060\ufeff]|(?![\t\n\v\f\r])\p{Cc}/gu;
/** Hyphens and dashes (U+2010 to U+2015, the minus sign). */
const AS_SPACE = /[-‐‑‒–—―−]/gu;

/** The folded spelling of a place name: what two spellings of one place share. */
export function foldPlaceName(raw: string): string {
  return raw
    .normalize('NFKD')
    // Lower, upper, lower: ẞ (capital sharp s) lower-cases to ß, which upper-cases to SS.
    .toLowerCase()
    .toUpperCase()
    .toLowerCase()
    .replaceAll('ς', 'σ')
    .normalize('NFKD')
    .replace(ACCENTS, '')
    .replace(PLAIN_LETTER, (letter) => PLAIN[letter]!)
    .replace(DROPPED, '')
    .replace(INVISIBLE, '')
    .replace(AS_SPACE, ' ')
    .normalize('NFC')
    .replace(/\s+/gu, ' ')
    .trim();
}
