/**
 * Exhaustive, not sampled (issue 18): every schedule of the shapes below, for
 * every pair of test/support/schedule-catalog.ts, run on the real table
 * and checked by test/support/schedules.ts: privacy at every observation
 * point (after each change that completes or dies, and after every write
 * that puts index keys once another change has completed), and at the end
 * the read model of a fresh load of the fold of one order, with nothing owed.
 * The shapes, and the depth (SCHEDULES_DEPTH), are in the catalog's comment.
 * Prints how many schedules ran.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { DEPTH, explore, pairs } from '../support/schedule-catalog.js';
import { Explorer } from '../support/schedules.js';
import { startLoopbackStore } from '../support/store.js';

let explorer: Explorer;
let store: Awaited<ReturnType<typeof startLoopbackStore>>;
beforeAll(async () => {
  store = await startLoopbackStore();
  explorer = new Explorer(store.endpoint, store.client, fixedClock('2026-11-21T12:00:00.000Z'));
});

const counts: string[] = [];
afterAll(async () => {
  const total = counts.reduce((n, line) => n + Number(line.split(': ')[1]), 0);
  process.stdout.write(`pairs: schedules explored (${DEPTH}): ${total}\n  ${counts.join('\n  ')}\n`);
  explorer?.close();
  await store?.close();
});

describe('every schedule of two changes converges, and hides for good', () => {
  for (const s of pairs) {
    it(`${s.name}`, async () => {
      const started = Date.now();
      const n = await explore(explorer, s);
      counts.push(`${s.name}: ${n}`);
      if (process.env.SCHEDULES_PROGRESS) process.stderr.write(`${s.name}: ${n} schedules in ${Date.now() - started} ms\n`);
      expect(n).toBeGreaterThan(0);
    }, DEPTH === 'deep' ? 3_600_000 : 600_000);
  }
});
