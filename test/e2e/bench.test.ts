/** `npm run bench` keeps running as routes are added (tiny sample counts; the figures are not checked here). */
import { describe, expect, it } from '@jest/globals';
import { routes } from '../../lambdas/routes.js';
import { runTs } from '../support/process.js';

describe('npm run bench', () => {
  it('measures every route and bundle', async () => {
    const { code, stdout, stderr } = await runTs('scripts/bench.ts', [], { BENCH_ITERATIONS: '2', BENCH_INIT_SAMPLES: '1' }).done;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    for (const route of routes) expect(stdout).toMatch(new RegExp(`^\\| ${route.id} \\| \\d+ \\|`, 'm'));
    for (const route of routes) expect(stdout).toMatch(new RegExp(`^\\| ${route.handler} \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\|`, 'm'));
  });
});
