/**
 * Jest's own order runs the longest files first when it has their times from
 * an earlier run, and by file size when it has none, as in CI's fresh clone,
 * where the schedule explorations (a few lines each, minutes to run) then
 * start last and keep one worker busy long after the other is idle. This keeps
 * Jest's order where it knows the times, and otherwise uses the seconds below,
 * measured on a 2-core machine (update them when a file's time changes much;
 * unlisted files count as short). A fresh clone is also where it matters
 * most that the two workers end together: the longest files go first, one on
 * each worker, and the many short ones fill in behind them.
 */
import TestSequencerModule from '@jest/test-sequencer';

// @jest/test-sequencer is CommonJS with its class on `default`.
const TestSequencer = TestSequencerModule.default ?? TestSequencerModule;

/**
 * Seconds per file and project ("project path"), from `test-output/jest-main.json`
 * of a CI run (a clean clone, two workers, the machine shared): 85edb86's, with the
 * three files 3277ac9 put on the direct client (change-stream property, failed-writes
 * sweep, discovery property) halved as they measured alone, and the second store's
 * from a run of its project alone once the direct client reached it over HTTP. A change-path
 * file runs in two projects, with different shares, so each has its own.
 */
export const ESTIMATED_SECONDS = {
  'dynalite test/integration/schedules-triples.exhaustive.test.ts': 45,
  'dynalite test/integration/schedules-triples-deletions.exhaustive.test.ts': 43,
  // Issue 57's keys scenarios (a close a key a call, a late close, a re-creation around it) add about a fifth.
  'dynalite test/integration/keys-schedules.exhaustive.test.ts': 47,
  // 1,100 keys created and revoked through the key manager, then their user deleted (issue 57, r3).
  'dynalite test/integration/keys-close-many-revoked.test.ts': 25,
  'dynalite test/infra/synth.test.ts': 35,
  // Webhooks under the write side's races: 2,416 schedules, about 170 s on this 2-core machine.
  'dynalite test/integration/webhooks-races.exhaustive.test.ts': 160,
  'dynalite test/integration/schedules-pairs-users.exhaustive.test.ts': 35,
  'dynalite test/e2e/bench.test.ts': 35,
  'dynalite test/integration/feed-appends.exhaustive.test.ts': 33,
  'dynalite test/integration/change-stream.property.test.ts': 32,
  'dynalite test/integration/schedules-pairs-events.exhaustive.test.ts': 31,
  'dynalite test/integration/schedules-transport.test.ts': 31,
  'dynalite test/integration/schedules-pairs-late-upsert.exhaustive.test.ts': 30,
  'dynalite test/integration/schedules-pairs-move.exhaustive.test.ts': 30,
  'dynalite test/integration/big-host.test.ts': 27,
  'dynalite test/e2e/cli.test.ts': 27,
  'dynalite test/e2e/webhooks-walk.test.ts': 25,
  'dynalite test/infra/embed-cdn.test.ts': 24,
  'dynalite test/integration/feed-failed-writes.test.ts': 22,
  'dynalite test/infra/first-deploy.test.ts': 22,
  'dynalite test/e2e/keys-and-quota.test.ts': 20,
  'dynalite test/integration/feed-head-bound.test.ts': 19,
  'dynalite test/e2e/smoke.test.ts': 18,
  'dynalite test/integration/guest-shards.test.ts': 17,
  'dynalite test/e2e/client-package.test.ts': 16,
  // Issue 59's loads on the real loader's calls (measured on this branch, a loaded machine).
  'dynalite test/integration/load-partitions.test.ts': 15,
  'dynalite test/integration/d1-load-hot-partitions.test.ts': 14,
  'rehearsal test/e2e/keys-and-quota.test.ts': 22,
  'rehearsal test/rehearsal/stages.test.ts': 22,
  'rehearsal test/rehearsal/serve.test.ts': 15,
  // Estimated (not yet from a CI run): about a third of what they took on this machine loaded at 6 to 9.
  'rehearsal test/rehearsal/webhooks.test.ts': 16,
  'dynalite test/infra/webhooks.test.ts': 14,
  'dynamodb-local test/integration/schedules-triples.exhaustive.test.ts': 34,
  'dynamodb-local test/integration/feed-failed-writes.test.ts': 41,
  'dynamodb-local test/integration/change-stream.property.test.ts': 25,
  'dynamodb-local test/integration/schedules-triples-deletions.exhaustive.test.ts': 25,
  'dynamodb-local test/integration/key-manager.test.ts': 16,
  'dynamodb-local test/integration/guest-shards.test.ts': 18,
  'dynamodb-local test/integration/ingest-throttle-window.test.ts': 25,
  'dynamodb-local test/integration/search-events.property.test.ts': 12,
  // Measured alone on this machine (issue 57 item 2's property, item 7's burst).
  'dynamodb-local test/integration/feed-reads-live.property.test.ts': 20,
  'dynamodb-local test/integration/rsvp-burst-round-trips.test.ts': 15,
  'dynalite test/integration/rsvp-burst-round-trips.test.ts': 15,
  // Measured alone on this machine (wt-embed2): the calendar-history property, 30 runs and 8.
  'dynalite test/integration/calendar-history.property.test.ts': 15,
  'dynamodb-local test/integration/calendar-history.property.test.ts': 15,
  // From CI's run at eb2bf22, where they ran alone after the rest (`npm run test:browser`).
  'browser test/browser/docs-page.test.ts': 18,
  'browser test/browser/widget.test.ts': 7,
};

/**
 * Minutes per exploration file at SCHEDULES_DEPTH=deep (docs/tests.md), measured on this 2-core machine at 8c85b28. At deep
 * these decide the order whatever Jest remembers (its times are of whichever depth ran last): the two workers end
 * together only if the longest go first.
 */
export const DEEP_ESTIMATED_MINUTES = {
  'dynalite test/integration/schedules-pairs-users.exhaustive.test.ts': 11.5,
  'dynalite test/integration/schedules-pairs-late-upsert.exhaustive.test.ts': 9.0,
  'dynalite test/integration/schedules-pairs-events.exhaustive.test.ts': 9.9,
  'dynalite test/integration/schedules-pairs-move.exhaustive.test.ts': 8.8,
  'dynalite test/integration/schedules-triples.exhaustive.test.ts': 4.3,
  'dynalite test/integration/schedules-triples-deletions.exhaustive.test.ts': 3.0,
};
const DEEP = ['deep', 'exhaustive'].includes(process.env.SCHEDULES_DEPTH ?? '');

export default class SlowFirstSequencer extends TestSequencer {
  sort(tests) {
    for (const t of tests) {
      // Jest reads `duration` later too (whether a small run goes in band), so it is set as Jest's own sort sets it.
      const relative = t.path.slice(t.context.config.rootDir.length + 1).split('\\').join('/');
      const name = `${t.context.config.displayName?.name ?? ''} ${relative}`;
      const deep = DEEP ? DEEP_ESTIMATED_MINUTES[name] : undefined;
      const estimate = ESTIMATED_SECONDS[name];
      t.duration = deep !== undefined ? deep * 60_000 : (this.time(t) ?? (estimate === undefined ? undefined : estimate * 1000));
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
