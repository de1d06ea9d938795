/**
 * Exhaustive, not sampled: for a catalog of change pairs (and a few
 * triples) over a small dataset, every schedule of these shapes is run on
 * the real table and checked by test/support/schedules.ts (privacy at every
 * observation point, the final table a fresh load of the fold of one order,
 * nothing owed):
 *
 * - every sequential order;
 * - every crash point of each change (dies right after its k-th call), then
 *   its redelivery right away, after the other change (newer or older), or
 *   with the other change first;
 * - every time-limit stop of a fan-out, then its redelivery before or after
 *   the other change;
 * - every interleaving point: one applier pauses before each of its calls
 *   while the other runs whole, then goes on; and at every such point, every
 *   later crash of the paused applier, then its redelivery.
 *
 * SCHEDULES_DEPTH=deep adds, at every interleaving point, every crash of the
 * applier that runs during the pause (then its redelivery), and for triples
 * the crash-after-resume schedules too. The count of schedules run is
 * printed.
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
