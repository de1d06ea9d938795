/**
 * The OpenAPI generator and the route descriptions stay out of every data
 * route's Lambda bundle (they are only the `openapi` handler's), and out of the
 * authorizer's and the redirect's: esbuild bundles each handler as CDK does and
 * its metafile lists every input.
 */
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER, OPENAPI_HANDLER, routes } from '../../lambdas/routes.js';

const ROOT = new URL('../../', import.meta.url).pathname;

async function inputsOf(handler: string): Promise<string[]> {
  const result = await build({
    entryPoints: [join(ROOT, 'lambdas/handlers', `${handler}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    write: false,
    metafile: true,
    external: ['@aws-sdk/*'],
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs);
}

const generator = (input: string) => input.includes('node_modules/@asteasolutions/') || input.includes('node_modules/openapi3-ts/') || input.startsWith('lambdas/openapi/');

describe('Lambda bundle contents', () => {
  const others = [...new Set<string>(routes.map((r) => r.handler))].filter((h) => h !== OPENAPI_HANDLER);

  it.each([...others, AUTHORIZER_HANDLER, LEGACY_REDIRECT_HANDLER])('%s carries no OpenAPI generator', async (handler) => {
    const inputs = await inputsOf(handler);
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.filter(generator)).toEqual([]);
  });

  it('the openapi handler carries the generator', async () => {
    expect((await inputsOf(OPENAPI_HANDLER)).some(generator)).toBe(true);
  });
});
