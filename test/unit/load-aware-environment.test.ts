/**
 * The jest environment stretches a test's or hook's timeout by the machine's
 * contention when it starts (test/support/load-aware-environment.js): the
 * written timeout, or jest's default, times the contention; a hook that runs
 * before every test is stretched from what was written each time, never
 * compounded; on a quiet machine the written timeout stands.
 */
import { describe, expect, it } from '@jest/globals';
import LoadAwareEnvironment from '../support/load-aware-environment.js';

type Block = { timeout: number | undefined };
function environment(contention: () => number) {
  // The event handling alone: no jest config needed for it.
  const env = Object.create(LoadAwareEnvironment.prototype) as { written: WeakMap<Block, number | undefined>; contention: () => number; handleTestEvent(event: unknown, state: unknown): Promise<void> };
  env.written = new WeakMap();
  env.contention = contention;
  return env;
}
const STATE = { testTimeout: 30_000 };

describe('timeouts stretched by the machine load', () => {
  it("a test's written timeout, or the default, times the contention; quiet, unchanged", async () => {
    let load = 3;
    const env = environment(() => load);
    const written: Block = { timeout: 10_000 };
    const unwritten: Block = { timeout: undefined };
    await env.handleTestEvent({ name: 'test_fn_start', test: written }, STATE);
    await env.handleTestEvent({ name: 'test_fn_start', test: unwritten }, STATE);
    expect([written.timeout, unwritten.timeout]).toEqual([30_000, 90_000]);
    load = 1;
    const quiet: Block = { timeout: 10_000 };
    await env.handleTestEvent({ name: 'test_fn_start', test: quiet }, STATE);
    expect(quiet.timeout).toBe(10_000);
  });

  it('a hook run before every test is stretched from what was written, each time at the load of the moment', async () => {
    let load = 2;
    const env = environment(() => load);
    const hook: Block = { timeout: 5_000 };
    await env.handleTestEvent({ name: 'hook_start', hook }, STATE);
    await env.handleTestEvent({ name: 'hook_start', hook }, STATE);
    expect(hook.timeout).toBe(10_000);
    load = 1;
    await env.handleTestEvent({ name: 'hook_start', hook }, STATE);
    expect(hook.timeout).toBe(5_000);
  });
});
