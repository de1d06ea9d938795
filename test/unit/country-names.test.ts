/**
 * Countries (lambdas/core/place.ts countryKey, over the table
 * lambdas/core/country-names.generated.ts): one mapping for the dataset's
 * values and a query's, from i18n-iso-countries and countries-list
 * (local/country-names.ts). The table is what the libraries give now
 * (`npm run places:countries` rewrites it), and every code and name the
 * libraries know reaches its country, in any case and accent spelling.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { countries as countriesList } from 'countries-list';
import { AMBIGUOUS_COUNTRIES, boundedPart, countryKey, knownAlpha2 } from '../../lambdas/core/place.js';
import { assignedCodes, countryNames, countryNamesModule } from '../../local/country-names.js';
import { ROOT } from '../support/process.js';

const require = createRequire(import.meta.url);
const english = require('i18n-iso-countries/langs/en.json') as { countries: Record<string, string | string[]> };

describe('the country table', () => {
  it('is what the libraries give (run `npm run places:countries` after updating them or the fold)', () => {
    expect(readFileSync(`${ROOT}/lambdas/core/country-names.generated.ts`, 'utf8')).toBe(countryNamesModule());
  });

  it('leaves out only the names two countries share, and says which', () => {
    const shared = [...countryNames()].filter(([, codes]) => codes.size > 1).map(([name]) => name);
    expect(AMBIGUOUS_COUNTRIES).toEqual(shared.sort());
    for (const name of AMBIGUOUS_COUNTRIES) expect(countryKey(name)).toBe(`~${name}`);
  });
});

describe('every code and name the libraries know reaches its country', () => {
  const codes = assignedCodes();
  it('every assigned alpha-2 and alpha-3 code, in any case', () => {
    for (const [a2, a3] of codes) {
      expect([a2, a2.toLowerCase(), a3, a3.toLowerCase(), ` ${a3} `].map(countryKey)).toEqual([a2, a2, a2, a2, a2]);
      expect(knownAlpha2(a2.toLowerCase())).toBe(a2);
    }
    expect(codes.length).toBeGreaterThanOrEqual(249);
  });

  it('every English name and alias of i18n-iso-countries, every name, native name and alias of countries-list, but the shared ones (property: in every case, with accents or without)', () => {
    const named: [string, string][] = [
      ...Object.entries(english.countries).flatMap(([code, v]) => [v].flat().map((name) => [name, code] as [string, string])),
      ...Object.entries(countriesList).flatMap(([code, c]) => [c.name, c.native, ...((c as { alias?: string[] }).alias ?? [])].map((name) => [name, code] as [string, string])),
    ].filter(([name, code]) => codes.some(([a2]) => a2 === code) && !AMBIGUOUS_COUNTRIES.includes(countryKey(name)!.slice(1)) && countryKey(name)!.startsWith('~') === false);
    expect(named.length).toBeGreaterThan(700);
    fc.assert(
      fc.property(fc.constantFrom(...named), fc.constantFrom('as is', 'upper', 'lower', 'plain'), ([name, code], how) => {
        const spelt = how === 'upper' ? name.toUpperCase() : how === 'lower' ? name.toLowerCase() : how === 'plain' ? name.normalize('NFD').replace(/[\u0300-\u036f]/gu, '') : name;
        expect([spelt, countryKey(spelt)]).toEqual([spelt, code]);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('the spellings the review found missing (issue 59, d3)', () => {
  it.each([
    ['UK', 'GB'],
    ['uk', 'GB'],
    ['EL', 'GR'],
    ['Syria', 'SY'],
    ['Laos', 'LA'],
    ['Moldova', 'MD'],
    ['Vatican', 'VA'],
    ['Viet Nam', 'VN'],
    ['Cabo Verde', 'CV'],
    ['the Bahamas', 'BS'],
    ['The Gambia', 'GM'],
    ['Deutschland', 'DE'],
    ['Brasil', 'BR'],
    ['España', 'ES'],
    ['ESPANA', 'ES'],
    ['Türkiye', 'TR'],
    ['Holland', 'NL'],
    ['日本', 'JP'],
    ['Россия', 'RU'],
  ])('%j → %s', (raw, code) => {
    expect(countryKey(raw)).toBe(code);
  });

  it('England, Scotland, Wales and Northern Ireland are in GB (ISO 3166-1 has no code of their own)', () => {
    expect(['England', 'SCOTLAND', 'wales', 'Northern Ireland'].map(countryKey)).toEqual(['GB', 'GB', 'GB', 'GB']);
  });

  it('a value no country is known by is its folded spelling, two letters too (the query side refuses nothing the data side keeps)', () => {
    expect(['Narnia', ' NARNIA ', 'XX', 'zz', 'Congo'].map(countryKey)).toEqual(['~narnia', '~narnia', '~xx', '~zz', '~congo']);
  });

  it('a spelling too long for a key part is named by its hash, the same from every spelling of it', () => {
    const long = 'Ünited Republic of Somewhere '.repeat(8);
    expect(countryKey(long)).toBe(boundedPart(`~${'united republic of somewhere '.repeat(8).trim()}`));
    expect(countryKey(long)).toMatch(/^H=[A-Za-z0-9_-]{43}$/);
    expect(countryKey(long.toUpperCase())).toBe(countryKey(long));
  });
});
