/**
 * Jest's own order runs the longest files first when it has their times from
 * an earlier run, and by file size when it has none, as in CI's fresh clone,
 * where the schedule explorations (a few lines each, minutes to run) then
 * start last and keep one worker busy long after the other is idle. This keeps
 * Jest's order where it knows the times, and otherwise uses the seconds below,
 * measured on a 2-core machine (update them when a file's time changes much;
 * unlisted files count as short).
 */
import TestSequencerModule from '@jest/test-sequencer';

// @jest/test-sequencer is CommonJS with its class on `default`.
const TestSequencer = TestSequencerModule.default ?? TestSequencerModule;

/** Seconds per file (both projects), from `test-output/jest-main.json` of a CI run. */
export const ESTIMATED_SECONDS = {
  'test/integration/schedules-pairs-users.exhaustive.test.ts': 130,
  'test/integration/schedules-pairs-events.exhaustive.test.ts': 120,
  'test/integration/schedules-triples.exhaustive.test.ts': 120,
  'test/integration/change-stream.property.test.ts': 105,
  'test/integration/changes-feed.property.test.ts': 60,
  'test/e2e/bench.test.ts': 36,
  'test/rehearsal/stages.test.ts': 45,
  'test/integration/big-host.test.ts': 28,
  'test/integration/schedules-transport.test.ts': 25,
  'test/infra/synth.test.ts': 27,
  'test/infra/idle-cost.test.ts': 15,
};

export default class SlowFirstSequencer extends TestSequencer {
  sort(tests) {
    for (const t of tests) {
      // Jest reads `duration` later too (whether a small run goes in band), so it is set as Jest's own sort sets it.
      const relative = t.path.slice(t.context.config.rootDir.length + 1).split('\\').join('/');
      const estimate = ESTIMATED_SECONDS[relative];
      t.duration = this.time(t) ?? (estimate === undefined ? undefined : estimate * 1000);
    }
    // Earlier failures first (quick feedback, as Jest does), then the longest first.
    const rank = (t) => [this.hasFailed(t) ? 1 : 0, t.duration ?? 0];
    return [...tests].sort((a, b) => {
      const [fa, da] = rank(a);
      const [fb, db] = rank(b);
      return fb - fa || db - da;
    });
  }
}
