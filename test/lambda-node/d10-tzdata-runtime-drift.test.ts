/**
 * Review of discovery (PRODUCT P17), local start dates: "`from`, `to` …
 * compared with each event's local start date in its own time zone", and
 * P14's "the full load and every change derive the same items".
 *
 * The place index's sort key is the event's local start date-time, computed
 * once, when the event item is written, by the writing runtime's own ICU
 * time-zone data (lambdas/core/local-time.ts, through Intl), and never again
 * until the event itself changes. Two runtimes write it: the change path on
 * Lambda's Node 24 (lib/route-function.ts, NODEJS_24_X) and the full load
 * and resync on the operator's Node (docs/deploy.md: 22, "20.19 or later
 * works"; package.json engines >= 20.19). Their time-zone data differ, and
 * each changes under the project when its runtime is patched:
 * - British Columbia and Alberta keep UTC−7 from 2026-11-01 in tzdata 2026a+
 *   (Node 24.21 / 22.23: 2026c) but not in 2025c (Node 20.20): an event in
 *   Vancouver at 2026-12-01T07:30Z is indexed on 2026-12-01 (00:30) by the
 *   change path and on 2026-11-30 (23:30) by a load on Node 20, so
 *   `city=Vancouver&from=2026-12-01&to=2026-12-01` lists it or not depending
 *   on which path wrote it last; a resync from such a machine rewrites every
 *   such event back. Casablanca, El Aaiun and Chisinau differ too.
 * - "+05:30", which the contract lets through as a zone (it is only a
 *   warning), is no time zone to Node 20 (UTC is used) but a valid one to
 *   Node 22.23/24 (isIanaTimeZone asks Intl, which accepts offsets there).
 * After a runtime update brings new rules, events written before it keep the
 * old local start in the index, and nothing derives them again.
 *
 * Needs the Lambda runtime's Node: LAMBDA_NODE, or node24 on PATH (the npm
 * package `node@24` installs one: `npm install node@24` in a scratch folder).
 *
 * Adopted (issue 59, d10) in test/lambda-node/, jest's "lambda-node" project
 * (`npm run lambda-node` installs the binary; test/support/lambda-node.js).
 * The derivation now reads the project's own time-zone database
 * (lambdas/core/tz-database.ts), so both runtimes agree.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { placeIndexKeys } from '../../lambdas/store/changes/derive.js';
import { ROOT } from '../support/process.js';

// Set by jest.config.js from test/support/lambda-node.js (LAMBDA_NODE, or `npm run lambda-node`); this project runs only
// where it is found (CI requires it).
const LAMBDA_NODE = process.env.LAMBDA_NODE ?? 'node24';

const CASES = [
  { event_id: 'evt_vancouver', location: { name: 'Commodore', city: 'Vancouver', country: 'CA' }, start_date: '2026-12-01T07:30:00.000Z', timezone: 'America/Vancouver' },
  { event_id: 'evt_calgary', location: { name: 'Palace', city: 'Calgary', country: 'CA' }, start_date: '2027-01-15T06:30:00.000Z', timezone: 'America/Edmonton' },
  { event_id: 'evt_casablanca', location: { name: 'Studio', city: 'Casablanca', country: 'MA' }, start_date: '2026-09-20T23:30:00.000Z', timezone: 'Africa/Casablanca' },
  { event_id: 'evt_offset', location: { name: 'Hall', city: 'Pune', country: 'IN' }, start_date: '2027-01-10T20:00:00.000Z', timezone: '+05:30' },
];

/** The place index keys the Lambda runtime's derivation gives the same records. */
function lambdaKeys(): Record<string, string>[] {
  const script = `import { placeIndexKeys } from './lambdas/store/changes/derive.ts';
process.stdout.write(JSON.stringify(${JSON.stringify(CASES)}.map((c) => placeIndexKeys(c))));`;
  return JSON.parse(execFileSync(LAMBDA_NODE, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' })) as Record<string, string>[];
}

describe('one record, one place index entry, whichever runtime derives it', () => {
  it(`the load on this Node (${process.version}, tz ${process.versions.tz}) and the change path on Lambda's Node agree on the local start`, () => {
    const lambdaVersion = execFileSync(LAMBDA_NODE, ['-p', 'process.version + " tz " + process.versions.tz'], { encoding: 'utf8' }).trim();
    const here = CASES.map((c) => placeIndexKeys(c).gsi7sk);
    const there = lambdaKeys().map((k) => k.gsi7sk);
    const differ = CASES.map((c, i) => ({ event: c.event_id, zone: c.timezone, load: here[i], lambda: there[i] })).filter((d) => d.load !== d.lambda);
    expect({ lambdaVersion, differ }).toEqual({ lambdaVersion, differ: [] });
  });
});
