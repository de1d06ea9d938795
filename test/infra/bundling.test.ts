/**
 * One real esbuild bundle of a route, as `cdk deploy` builds it: local esbuild,
 * no Docker, ESM, minified, source map, the AWS SDK left external (the
 * runtime provides it) and Powertools inside; and every handler bundled with
 * the same externals, whose esbuild metafile shows Powertools' source inside
 * and nothing imported from outside but the AWS SDK and Node's own modules.
 */
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { build } from 'esbuild';
import { AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER, routes } from '../../lambdas/routes.js';
import { BUNDLE_EXTERNALS, ESM_REQUIRE_BANNER, RouteFunction } from '../../lib/route-function.js';
import { CDK_FEATURE_FLAGS } from './support.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const POWERTOOLS_SOURCE = /node_modules\/@aws-lambda-powertools\//;
const NODE_BUILTINS = new Set(builtinModules);

describe('Lambda bundling', () => {
  it('bundles a route handler into a small ESM file with a source map and no AWS SDK inside', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'pe-bundle-'));
    const app = new App({ outdir, context: CDK_FEATURE_FLAGS });
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
    // Powertools is carried in the bundle: no layer, nothing to look up at deploy time.
    expect(code).not.toMatch(/from"@aws-lambda-powertools/);
    const sources = (JSON.parse(readFileSync(join(path!, 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources;
    expect(sources.some((s) => s.includes('lambdas/handlers/get-event.ts'))).toBe(true);
    expect(sources.some((s) => POWERTOOLS_SOURCE.test(s))).toBe(true);
    expect(code.length).toBeLessThan(200 * 1024);
  });

  it('bundles Powertools into every handler: the metafile has Powertools inputs, and no import but the AWS SDK and Node', async () => {
    // One bundle per function's handler file (both OpenAPI routes share one).
    const handlers = [...new Set<string>(routes.map((r) => r.handler)), AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER];
    const entries = [...handlers.map((h) => `lambdas/handlers/${h}.ts`), 'lambdas/ingest/handler.ts', 'lambdas/key-admin/handler.ts', 'lambdas/delivery/fan-out-handler.ts', 'lambdas/delivery/delivery-handler.ts'];
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
    const outputs = Object.values(metafile.outputs).filter((o) => o.entryPoint);
    expect(outputs).toHaveLength(entries.length);
    for (const output of outputs) {
      const external = output.imports.filter((i) => i.external).map((i) => i.path);
      expect(external.filter((p) => !p.startsWith('@aws-sdk/') && !p.startsWith('node:') && !NODE_BUILTINS.has(p))).toEqual([]);
      // Every handler logs through Powertools, carried inside the bundle.
      expect(Object.keys(output.inputs).some((i) => i.includes('node_modules/@aws-lambda-powertools/logger/'))).toBe(true);
    }
    const ingest = outputs.find((o) => o.entryPoint === 'lambdas/ingest/handler.ts');
    expect(Object.keys(ingest!.inputs).some((i) => i.includes('node_modules/@aws-lambda-powertools/batch/'))).toBe(true);
  });
});
