/**
 * The tables of `npm run bench` that are exact (the same in every run of a
 * commit) and docs/performance.md therefore shows between markers:
 * `<!-- bench:NAME -->` … `<!-- /bench:NAME -->`. `npm run bench -- --exact
 * --write` rewrites those sections from a fresh run (seconds);
 * test/integration/performance-tables.test.ts fails, with the fresh table,
 * when a section differs from what the code measures now.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleSizeTable, bundleSizes } from './bench-bundles.js';
import { BENCH_NOW, exactRouteFigures, exactRouteTable } from './bench-routes.js';
import { exactRoundTripTable } from './bench-round-trips.js';
import { fixedClock } from '../lambdas/core/clock.js';

const ROOT = new URL('..', import.meta.url).pathname;
export const PERFORMANCE_PAGE = join(ROOT, 'docs/performance.md');

export type HeldTables = Record<'routes' | 'bundles' | 'roundTrips', string>;

/** The exact tables, measured now (the bundles built into `outDir`). */
export async function exactTables(outDir = join(ROOT, 'cdk.out', 'bench-bundles')): Promise<HeldTables> {
  mkdirSync(outDir, { recursive: true });
  return { routes: exactRouteTable(await exactRouteFigures()), bundles: bundleSizeTable(await bundleSizes(outDir)), roundTrips: await exactRoundTripTable(fixedClock(BENCH_NOW)) };
}

const marker = (name: string) => new RegExp(`(<!-- bench:${name} -->\\n)([\\s\\S]*?)\\n?(<!-- /bench:${name} -->)`);

/** The text between a section's markers, or undefined when the page has no such section. */
export function heldSection(page: string, name: string): string | undefined {
  return marker(name).exec(page)?.[2];
}

/** The page with each section's text replaced; a section the page lacks is an error, not appended somewhere. */
export function withTables(page: string, tables: Partial<HeldTables>): string {
  let out = page;
  for (const [name, table] of Object.entries(tables)) {
    if (heldSection(out, name) === undefined) throw new Error(`docs/performance.md has no <!-- bench:${name} --> … <!-- /bench:${name} --> section`);
    out = out.replace(marker(name), (_m, open: string, _old: string, close: string) => `${open}${table}\n${close}`);
  }
  return out;
}

export function writeTables(tables: HeldTables): void {
  writeFileSync(PERFORMANCE_PAGE, withTables(readFileSync(PERFORMANCE_PAGE, 'utf8'), tables));
}
