/**
 * Every function's bundle, built as lib/route-function.ts has CDK build it
 * (same externals, banner and target), and its size. The minified size is
 * the same on every machine for a commit (esbuild's output does not depend on
 * the checkout's path), so docs/performance.md's size table is this output
 * (test/integration/performance-tables.test.ts builds them again, half a
 * second for all, and holds it there). Gzipped sizes are not held: zlib's
 * output may differ between Node builds and CPUs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER, routes } from '../lambdas/routes.js';
import { BUNDLE_EXTERNALS, ESM_REQUIRE_BANNER } from '../lib/route-function.js';

const ROOT = new URL('..', import.meta.url).pathname;

/** Each function's bundle name and entry: one per handler file of the routes (the two OpenAPI routes share one), then the others. */
export function bundledFunctions(): Array<{ name: string; entry: string }> {
  return [
    ...[...new Set<string>(routes.map((r) => r.handler)), AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER].map((name) => ({ name, entry: join(ROOT, 'lambdas/handlers', `${name}.ts`) })),
    { name: 'ingest', entry: join(ROOT, 'lambdas/ingest/handler.ts') },
    { name: 'key-admin', entry: join(ROOT, 'lambdas/key-admin/handler.ts') },
    { name: 'webhook-fan-out', entry: join(ROOT, 'lambdas/delivery/fan-out-handler.ts') },
    { name: 'webhook-delivery', entry: join(ROOT, 'lambdas/delivery/delivery-handler.ts') },
  ];
}

/** Bundles `entry` to `outfile` as CDK does, and returns the bundle's bytes. */
export async function bundleFunction(entry: string, outfile: string): Promise<Buffer> {
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    outfile,
    external: BUNDLE_EXTERNALS,
    banner: { js: ESM_REQUIRE_BANNER },
    logLevel: 'error',
  });
  return readFileSync(outfile);
}

export interface BundleSize {
  name: string;
  file: string;
  bytes: number;
}

/** Every function bundled into `outDir`. */
export async function bundleSizes(outDir: string): Promise<BundleSize[]> {
  const sizes: BundleSize[] = [];
  for (const { name, entry } of bundledFunctions()) {
    const file = join(outDir, `${name}.mjs`);
    sizes.push({ name, file, bytes: (await bundleFunction(entry, file)).length });
  }
  return sizes;
}

export function bundleSizeTable(sizes: readonly BundleSize[]): string {
  return ['| Function bundle | KiB (minified) |', '|---|---|', ...sizes.map((s) => `| ${s.name} | ${(s.bytes / 1024).toFixed(1)} |`)].join('\n');
}
