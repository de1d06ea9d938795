/**
 * docs/performance.md's exact tables are what the code measures now: each
 * route's DynamoDB calls, round trips, operations and read capacity (every
 * route of lambdas/routes.ts, so a route added later fails here until its row
 * is on the page), every function's bundle size, and each change's round
 * trips with the RSVP burst's as DynamoDB sees them, all measured again here
 * as `npm run bench` measures them (the bundles built again: half a second
 * for all). A stale section fails with the fresh table and the command that
 * rewrites it.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { routes } from '../../lambdas/routes.js';
import { bundledFunctions } from '../../scripts/bench-bundles.js';
import { PERFORMANCE_PAGE, exactTables, heldSection, withTables, type HeldTables } from '../../scripts/bench-tables.js';
import { runTs } from '../support/process.js';

const page = () => readFileSync(PERFORMANCE_PAGE, 'utf8');
let fresh: HeldTables;
beforeAll(async () => {
  fresh = await exactTables(mkdtempSync(join(tmpdir(), 'pe-bench-bundles-')));
}, 120_000);

const rowNames = (table: string) => table.split('\n').slice(2).map((line) => line.split(' | ')[0]!.replace(/^\| /, ''));

describe('docs/performance.md: the tables npm run bench measures exactly', () => {
  it.each(['routes', 'bundles', 'roundTrips'] as const)('its %s section is what the code measures now', (name) => {
    const shown = heldSection(page(), name);
    const state = shown === fresh[name] ? 'current' : `stale: run \`npm run bench -- --exact --write\`, or put this between <!-- bench:${name} --> and <!-- /bench:${name} --> in docs/performance.md:\n${fresh[name]}`;
    expect(state).toBe('current');
  });

  it('has a row for every route and the authorizer, and for every function bundle', () => {
    expect(rowNames(fresh.routes)).toEqual([...routes.map((r) => r.id), 'authorizer (each keyed request)']);
    expect(rowNames(fresh.bundles)).toEqual(bundledFunctions().map((f) => f.name));
  });

  it('--write rewrites only the marked sections, and a page without one is refused', () => {
    const before = 'intro\n<!-- bench:routes -->\nold table\n<!-- /bench:routes -->\nmiddle\n<!-- bench:bundles -->\n<!-- /bench:bundles -->\nend\n';
    const { roundTrips: _held, ...two } = fresh;
    expect(withTables(before, two)).toBe(`intro\n<!-- bench:routes -->\n${fresh.routes}\n<!-- /bench:routes -->\nmiddle\n<!-- bench:bundles -->\n${fresh.bundles}\n<!-- /bench:bundles -->\nend\n`);
    expect(withTables(withTables(before, two), two)).toBe(withTables(before, two));
    expect(() => withTables('no markers\n', { routes: fresh.routes })).toThrow(/has no <!-- bench:routes -->/);
  });

  it('npm run bench -- --exact prints the same tables', async () => {
    const { code, stdout, stderr } = await runTs('scripts/bench.ts', ['--exact']).done;
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(fresh.routes);
    expect(stdout).toContain(fresh.bundles);
    expect(stdout).toContain(fresh.roundTrips);
  }, 120_000);
});
