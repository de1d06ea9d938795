/**
 * One real esbuild bundle of a route, as `cdk deploy` builds it: local esbuild,
 * no Docker, ESM, minified, source map, AWS SDK and Powertools left external
 * (the runtime and AWS's Powertools layer provide them); and every handler
 * bundled with the same externals, whose esbuild metafile shows no Powertools
 * source inside.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { build } from 'esbuild';
import { AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER, routes } from '../../lambdas/routes.js';
import { BUNDLE_EXTERNALS, ESM_REQUIRE_BANNER, RouteFunction } from '../../lib/route-function.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const POWERTOOLS_SOURCE = /node_modules\/@aws-lambda-powertools\//;

describe('Lambda bundling', () => {
  it('bundles a route handler into a small ESM file with a source map and no AWS SDK inside', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'pe-bundle-'));
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundle');
    new RouteFunction(stack, 'GetEvent', { handlerFile: 'get-event', description: 'test', environment: {}, logRetention: RetentionDays.ONE_DAY, retainLogs: false });
    const assembly = app.synth();
    const assetDir = readFileSync(join(outdir, 'Bundle.assets.json'), 'utf8');
    const path = Object.values(JSON.parse(assetDir).files as Record<string, { source: { path: string } }>)
      .map((f) => join(assembly.directory, f.source.path))
      .find((p) => existsSync(join(p, 'index.mjs')));
    expect(path).toBeDefined();
    const code = readFileSync(join(path!, 'index.mjs'), 'utf8');
    expect(existsSync(join(path!, 'index.mjs.map'))).toBe(true);
    expect(code).toMatch(/export\{[^}]*as handler\}/);
    expect(code).toMatch(/from"@aws-sdk\/lib-dynamodb"|from"@aws-sdk\/client-dynamodb"/);
    // Powertools is imported from the layer at run time, not carried in the bundle.
    expect(code).toMatch(/from"@aws-lambda-powertools\/logger"/);
    expect(code).toMatch(/from"@aws-lambda-powertools\/metrics"/);
    const sources = (JSON.parse(readFileSync(join(path!, 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources;
    expect(sources.some((s) => s.includes('lambdas/handlers/get-event.ts'))).toBe(true);
    expect(sources.filter((s) => POWERTOOLS_SOURCE.test(s))).toEqual([]);
    expect(code.length).toBeLessThan(150 * 1024);
  });

  it('leaves Powertools out of every handler bundle: the metafile has no Powertools input, only imports of it', async () => {
    // One bundle per function's handler file (both OpenAPI routes share one).
    const handlers = [...new Set<string>(routes.map((r) => r.handler)), AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER];
    const entries = [...handlers.map((h) => `lambdas/handlers/${h}.ts`), 'lambdas/ingest/handler.ts'];
    const { metafile } = await build({
      entryPoints: entries.map((e) => join(ROOT, e)),
      outdir: mkdtempSync(join(tmpdir(), 'pe-meta-')),
      bundle: true,
      platform: 'node',
      target: 'node24',
      format: 'esm',
      minify: true,
      external: BUNDLE_EXTERNALS,
      banner: { js: ESM_REQUIRE_BANNER },
      metafile: true,
      write: false,
      logLevel: 'error',
    });
    expect(Object.keys(metafile.inputs).filter((i) => POWERTOOLS_SOURCE.test(i))).toEqual([]);
    const outputs = Object.values(metafile.outputs).filter((o) => o.entryPoint);
    expect(outputs).toHaveLength(entries.length);
    for (const output of outputs) {
      const external = output.imports.filter((i) => i.external).map((i) => i.path);
      // Every handler logs through Powertools, imported from outside the bundle.
      expect(external).toContain('@aws-lambda-powertools/logger/middleware');
      expect(Object.keys(output.inputs).filter((i) => POWERTOOLS_SOURCE.test(i))).toEqual([]);
    }
    const ingest = outputs.find((o) => o.entryPoint === 'lambdas/ingest/handler.ts');
    expect(ingest?.imports.filter((i) => i.external).map((i) => i.path)).toContain('@aws-lambda-powertools/batch');
  });
});
