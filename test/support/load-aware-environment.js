/**
 * Jest's node environment, with every test's and hook's timeout stretched by
 * the machine's contention when it starts (runnable tasks per core, from the
 * 1-minute load average, never below 1), as the rehearsal stretches a
 * function's Timeout (local/rehearsal/contention.ts). A timeout here detects a
 * hang, it does not measure speed (figures come from `npm run bench`); on a
 * shared 2-core machine at a load of 22 a route walk that takes 10 s alone ran
 * past its 30 s, a red that said nothing about the code. On a quiet machine
 * every timeout is the one written.
 */
import { availableParallelism, loadavg } from 'node:os';
import NodeEnvironmentModule from 'jest-environment-node';

// jest-environment-node is CommonJS with its class on `default`.
const NodeEnvironment = NodeEnvironmentModule.default ?? NodeEnvironmentModule.TestEnvironment ?? NodeEnvironmentModule;

export const machineContention = () => Math.max(1, loadavg()[0] / availableParallelism());

export default class LoadAwareEnvironment extends NodeEnvironment {
  /** Each test's and hook's timeout as written (a hook runs again for every test; a test again on retry). */
  written = new WeakMap();
  /** The contention reader (a test gives its own). */
  contention = machineContention;

  stretch(block, state) {
    if (!this.written.has(block)) this.written.set(block, block.timeout);
    block.timeout = Math.ceil((this.written.get(block) || state.testTimeout) * this.contention());
  }

  async handleTestEvent(event, state) {
    if (event.name === 'hook_start') this.stretch(event.hook, state);
    if (event.name === 'test_fn_start') this.stretch(event.test, state);
  }
}
