/**
 * The project's time-zone database (lambdas/core/tz-database.ts over
 * tz-data.generated.ts): the table is what moment-timezone's pinned IANA
 * release gives (`npm run places:tz`), the lookup agrees with
 * moment-timezone itself in every zone and link from 1970 to 2037, repeats
 * the last 28 years after that as the runtime's own rules do, and judges a
 * zone name the same way on every runtime (issue 59, d10: the runtimes'
 * half is test/integration/d10-tzdata-runtime-drift.test.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isKnownZone, offsetMinutesAt, TZ_VERSION } from '../../lambdas/core/tz-database.js';
import { TZ_LINKS, TZ_ZONES } from '../../lambdas/core/tz-data.generated.js';
import { localDateTime } from '../../lambdas/core/local-time.js';
import { isIanaTimeZone } from '../../lambdas/core/dataset.js';
import { tzDataModule } from '../../local/tz-data.js';
import { ROOT } from '../support/process.js';

const require = createRequire(import.meta.url);
const moment = require('moment-timezone') as { tz: { zone(name: string): { utcOffset(ms: number): number } | null; names(): string[]; dataVersion: string } };

const NAMES = [...TZ_ZONES.split('\n').map((l) => l.slice(0, l.indexOf('|'))), ...TZ_LINKS.split('\n').map((l) => l.split('|')[1]!)];

describe('the time-zone table', () => {
  it('is what moment-timezone gives (run `npm run places:tz` after updating it)', () => {
    expect(readFileSync(`${ROOT}/lambdas/core/tz-data.generated.ts`, 'utf8')).toBe(tzDataModule());
    expect(TZ_VERSION).toBe(moment.tz.dataVersion);
  });

  it('has every zone and link moment-timezone has', () => {
    expect(NAMES.filter((n) => !isKnownZone(n))).toEqual([]);
    expect(moment.tz.names().filter((n) => !isKnownZone(n))).toEqual([]);
  });
});

describe('offsets', () => {
  it('equal moment-timezone\'s in every zone and link, 1970 to 2037 (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...NAMES), fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2037, 11, 31) }), (zone, instant) => {
        expect([zone, instant, offsetMinutesAt(instant, zone)]).toEqual([zone, instant, -moment.tz.zone(zone)!.utcOffset(instant)]);
      }),
      { numRuns: 20_000 },
    );
  });

  it('equal moment-timezone\'s on either side of every transition of the zones the review found (Vancouver, Calgary, Casablanca, Chisinau)', () => {
    for (const zone of ['America/Vancouver', 'America/Edmonton', 'Africa/Casablanca', 'Africa/El_Aaiun', 'Europe/Chisinau']) {
      for (let t = Date.UTC(2024, 0, 1); t < Date.UTC(2030, 0, 1); t += 3_600_000) expect([zone, t, offsetMinutesAt(t, zone)]).toEqual([zone, t, -moment.tz.zone(zone)!.utcOffset(t)]);
    }
  });

  it('after 2037 repeat the zone\'s rules, as the runtime\'s own ICU computes them (zones whose rules no release since has changed)', () => {
    const fmt = (zone: string) => new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    const icu = (instant: number, zone: string) => {
      const p = Object.fromEntries(fmt(zone).formatToParts(new Date(instant)).map((x) => [x.type, x.value]));
      return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
    };
    fc.assert(
      fc.property(
        fc.constantFrom('Europe/Lisbon', 'Europe/Berlin', 'America/New_York', 'America/Chicago', 'Australia/Sydney', 'Pacific/Auckland', 'Asia/Tokyo', 'Asia/Kolkata'),
        fc.integer({ min: Date.UTC(2038, 0, 1), max: Date.UTC(2099, 11, 31) }),
        (zone, instant) => {
          const at = Math.floor(instant / 1000) * 1000;
          expect([zone, at, localDateTime(at, zone)]).toEqual([zone, at, icu(at, zone)]);
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('a zone that no longer changes its clocks keeps its last offset after 2037', () => {
    // Brazil left daylight time in 2019; Istanbul has been UTC+3 since 2016.
    expect([offsetMinutesAt(Date.UTC(2050, 0, 15), 'America/Sao_Paulo'), offsetMinutesAt(Date.UTC(2050, 6, 15), 'Europe/Istanbul')]).toEqual([-180, 180]);
  });
});

describe('zone names', () => {
  it('any letter case of a name is the zone, as Intl takes it', () => {
    expect([isKnownZone('europe/lisbon'), isKnownZone('EUROPE/LISBON'), offsetMinutesAt(Date.UTC(2027, 6, 1), 'europe/lisbon')]).toEqual([true, true, 60]);
  });

  it('an offset is no zone, on every runtime: "+05:30" reads as UTC (Node 20 said so, Node 22.23 and 24 made it a zone)', () => {
    for (const name of ['+05:30', '-08:00', '+0530', 'UTC+1', 'Nowhere/Zone', '']) expect([name, isKnownZone(name), isIanaTimeZone(name)]).toEqual([name, false, false]);
    expect(localDateTime(Date.parse('2027-01-10T20:00:00.000Z'), '+05:30')).toBe('2027-01-10T20:00:00');
  });
});
