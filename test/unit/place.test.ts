import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { cityKey, countryKey, foldPlaceName, placeMatches, placeName, placeOf, placeQueriesOf } from '../../lambdas/core/place.js';
import { localDate, localDateTime, localStartWithOffset } from '../../lambdas/core/local-time.js';

describe('a city is one city whatever its case, accents and spacing', () => {
  it.each([['São Paulo'], ['sao paulo'], [' SAO  PAULO '], ['SÃO\tPAULO']])('%j', (raw) => {
    expect(cityKey(raw)).toBe('sao paulo');
  });
  it('has no key when it is null or blank', () => {
    expect(cityKey(null)).toBeUndefined();
    expect(cityKey(undefined)).toBeUndefined();
    expect(cityKey(' \t ')).toBeUndefined();
  });
  it('folds idempotently, and case and spacing never change the key (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        const once = foldPlaceName(s);
        expect(foldPlaceName(once)).toBe(once);
        expect(foldPlaceName(`  ${s.toUpperCase()}  `)).toBe(foldPlaceName(s.toUpperCase()));
      }),
    );
  });
});

describe('a country is its ISO 3166-1 alpha-2 code, mapped by i18n-iso-countries', () => {
  it.each([
    ['PT', 'PT'],
    ['pt', 'PT'],
    ['Portugal', 'PT'],
    ['PRT', 'PT'],
    ['United States', 'US'],
    ['USA', 'US'],
    ['United Kingdom', 'GB'],
    ["Cote d'Ivoire", 'CI'],
    ["Côte d'Ivoire", 'CI'],
  ])('%j → %s', (raw, code) => {
    expect(countryKey(raw)).toBe(code);
  });
  it('keeps a value the library does not know as its folded spelling, which no code equals', () => {
    expect(countryKey('Narnia')).toBe('~narnia');
    expect(countryKey(' NARNIA ')).toBe('~narnia');
    expect(countryKey('XX')).toBe('~xx');
  });
});

describe('place keys', () => {
  it('an event with a city and a country answers three queries; separators in a name are escaped', () => {
    const place = placeOf({ city: 'Lis#bon*', country: 'portugal' });
    expect(placeQueriesOf(place).map(placeName)).toEqual(['PT#lis%23bon%2A', 'PT#*', '*#lis%23bon%2A']);
    expect(placeOf({ city: null, country: null })).toEqual({ country: undefined, city: undefined });
    expect(placeQueriesOf(placeOf(null))).toEqual([]);
  });
  it('an event answers exactly the queries placeQueriesOf names (property)', () => {
    const part = fc.option(fc.constantFrom('PT', 'US', '~x'), { nil: undefined });
    const city = fc.option(fc.constantFrom('lisbon', 'porto', 'a#b', '*'), { nil: undefined });
    fc.assert(
      fc.property(part, city, part, city, (c1, t1, c2, t2) => {
        const place = { country: c1, city: t1 };
        const query = { country: c2, city: t2 };
        const named = placeQueriesOf(place).map(placeName);
        expect(placeMatches(place, query)).toBe(named.includes(placeName(query)));
      }),
    );
  });
});

describe('local start dates', () => {
  it('reads the wall clock of the event’s zone, across the date line both ways', () => {
    const instant = Date.parse('2027-01-01T10:30:00Z');
    expect(localDateTime(instant, 'Pacific/Kiritimati')).toBe('2027-01-02T00:30:00');
    expect(localDateTime(instant, 'Pacific/Pago_Pago')).toBe('2026-12-31T23:30:00');
    expect(localDate(instant, 'UTC')).toBe('2027-01-01');
  });
  it('is right at 00:30 on a DST change day, and counts an unknown zone as UTC', () => {
    // Lisbon moves from UTC+0 to UTC+1 at 01:00 on 2027-03-28.
    expect(localDateTime(Date.parse('2027-03-28T00:30:00Z'), 'Europe/Lisbon')).toBe('2027-03-28T00:30:00');
    // New York leaves daylight time at 02:00 on 2027-11-07: 00:30 local is 04:30 UTC.
    expect(localDateTime(Date.parse('2027-11-07T04:30:00Z'), 'America/New_York')).toBe('2027-11-07T00:30:00');
    expect(localDateTime(0, 'Nowhere/Zone')).toBe('1970-01-01T00:00:00');
  });
});

describe('a local start with its offset (what the MCP adapter tells an assistant)', () => {
  it.each([
    ['2027-01-10T14:30:00.000Z', 'Asia/Kolkata', '2027-01-10T20:00:00+05:30'],
    ['2027-01-10T14:30:00.000Z', 'America/New_York', '2027-01-10T09:30:00-05:00'],
    ['2027-07-10T14:30:00.000Z', 'Europe/Lisbon', '2027-07-10T15:30:00+01:00'],
    ['2027-01-10T14:30:00.000Z', 'Asia/Kathmandu', '2027-01-10T20:15:00+05:45'],
    ['0050-06-01T12:00:00.000Z', 'UTC', '0050-06-01T12:00:00+00:00'],
    ['2027-01-10T14:30:00.000Z', 'Nowhere/Zone', '2027-01-10T14:30:00+00:00'],
  ])('%s in %s is %s', (iso, zone, local) => {
    expect(localStartWithOffset(Date.parse(iso), zone)).toBe(local);
  });
});
