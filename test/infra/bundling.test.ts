/**
 * One real esbuild bundle of a route, as `cdk deploy` builds it: local esbuild,
 * no Docker, ESM, minified, source map, AWS SDK left external.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { RouteFunction } from '../../lib/route-function.js';

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
    expect(code.length).toBeLessThan(200 * 1024);
  });
});
