/**
 * Jest runs the TypeScript sources as native ES modules (the project is
 * "type": "module" because middy >= 5 is ESM-only). The transform only strips
 * types (esbuild: test/support/esbuild-transform.js);
 * type checking is `npm run typecheck`, run beside jest by `npm test` (scripts/test.mjs).
 *
 * Four projects share one run and its workers:
 * - "dynalite": every test, on the embedded store (no Java);
 * - "rehearsal": REHEARSAL_TESTS again, against the rehearsal of the
 *   synthesized stack (bundles from cdk.out, IAM checked on every call);
 * - "dynamodb-local": the change-path files again, on AWS's DynamoDB Local
 *   (Java 17; JVMs that live for the whole run, one per worker at most, each
 *   store an emptied one leased from the pool its global setup opens:
 *   test/support/dynamodb-local.ts). Why: see test/support/store.ts. It runs a
 *   fixed share of the long ones (the triples at SCHEDULES_DEPTH=quick, the
 *   properties at fewer runs, the fault sweeps at FAULT_POINTS=
 *   first-of-each-kind: test/support/dynamodb-local.env.ts, docs/tests.md
 *   "Two stores"); dynalite runs their full count. Without Java
 *   it is left out and the run says so before jest's summary, unless REQUIRE_DYNAMODB_LOCAL=1
 *   (CI) makes that a failure: test/support/second-store.js.
 * - "browser": test/browser/, the embed widget and the API reference in a
 *   real headless Chromium (Debian's /usr/bin/chromium). Without it the
 *   project is left out and a whole run says so before jest's summary, unless
 *   REQUIRE_BROWSER=1 (CI) makes that a failure: test/support/browser.js.
 * - "lambda-node": test/lambda-node/, which compare what this Node derives
 *   with what the Lambda runtime's Node (24) derives (issue 59, d10). Without
 *   it (LAMBDA_NODE, or `npm run lambda-node`) the project is left out and a
 *   whole run says so, unless REQUIRE_LAMBDA_NODE=1 (CI) makes that a
 *   failure: test/support/lambda-node.js.
 * `--selectProjects dynalite` runs only the first.
 */
import { BROWSER_TESTS, PROJECT as BROWSER, browserTests } from './test/support/browser.js';
import { PROJECT as SECOND_STORE, secondStore, selectedProjects } from './test/support/second-store.js';
import { LAMBDA_NODE_TESTS, PROJECT as LAMBDA_NODE, lambdaNodePath, lambdaNodeTests } from './test/support/lambda-node.js';

// The AWS SDK v3 warns on Node < 22 (NodeVersionSupportWarning) once per module
// registry, that is once per test file: dozens of identical notices in `npm
// test` that say nothing about the tests. The same switch as the CLIs'
// (local/sdk-node-warning.ts), set here for jest and its workers only;
// test/support/process.ts removes it again for the CLIs the tests spawn, so
// those prove they quiet it themselves.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const ROOT = new URL('.', import.meta.url).pathname;

/**
 * THE list of change-path test files: everything that writes through the
 * change path or the loader. A new file of that kind is added here.
 */
export const CHANGE_PATH_TESTS = [
  '<rootDir>/test/integration/change-stream.property.test.ts',
  '<rootDir>/test/integration/changes-feed.property.test.ts',
  '<rootDir>/test/integration/resync-feeds.property.test.ts',
  '<rootDir>/test/integration/ingest.test.ts',
  '<rootDir>/test/integration/ingest-throttle-window.test.ts',
  '<rootDir>/test/integration/batch-write.test.ts',
  '<rootDir>/test/integration/write-side-schedules.test.ts',
  '<rootDir>/test/integration/write-side-duplicates.test.ts',
  '<rootDir>/test/integration/write-side-triples.test.ts',
  '<rootDir>/test/integration/item-size.test.ts',
  '<rootDir>/test/integration/change-cost.test.ts',
  // The fault sweeps below and the change-stream property run FAULT_POINTS=first-of-each-kind here.
  // The pairs exploration is left out: its quick share alone takes about 6 min
  // on DynamoDB Local on 2 cores (it passes; to run it there:
  // `TEST_STORE=dynamodb-local SCHEDULES_DEPTH=quick npm test -- test/integration/schedules-pairs --selectProjects dynalite`,
  // the dynalite project's file list with the store switched).
  '<rootDir>/test/integration/schedules-triples.exhaustive.test.ts',
  '<rootDir>/test/integration/schedules-triples-deletions.exhaustive.test.ts',
  '<rootDir>/test/integration/store-differences.test.ts',
  '<rootDir>/test/integration/feed-failed-writes.test.ts',
  '<rootDir>/test/integration/feed-note-carry.test.ts',
  '<rootDir>/test/integration/resync-member-gen.test.ts',
  '<rootDir>/test/integration/feed-load-positions.test.ts',
  // The feed reads over every chunk size, range split and Query cut, TTL deleting (issue 57 item 2).
  '<rootDir>/test/integration/feed-reads-live.property.test.ts',
  // One RSVP of a burst (an ingest batch's 10 at once on one client) counted at the HTTP level (issue 57 item 7).
  '<rootDir>/test/integration/rsvp-burst-round-trips.test.ts',
  '<rootDir>/test/integration/guest-shards.test.ts',
  // A place's feed over HTTP, the local server serving from the file's store.
  '<rootDir>/test/integration/place-feed-http.test.ts',
  // An event's calendar history (SEQUENCE, LAST-MODIFIED) through the change path and a resync.
  '<rootDir>/test/integration/calendar-history.property.test.ts',
  '<rootDir>/test/integration/calendar-revisions.test.ts',
  // Discovery (PRODUCT P17): the place indexes under a change stream, and the routes' handlers.
  '<rootDir>/test/integration/search-events.property.test.ts',
  '<rootDir>/test/integration/search-handlers.test.ts',
  // Discovery at its edges (issue 59): a maximal place's keys (which dynalite accepts and DynamoDB refuses), a resync
  // that re-keys the places a changed fold moved.
  '<rootDir>/test/integration/d7-place-key-over-2048-bytes.test.ts',
  '<rootDir>/test/integration/resync-rekey.test.ts',
  '<rootDir>/test/integration/d5-cursor-repeats-and-skips.test.ts',
  '<rootDir>/test/integration/keys-within-limits.test.ts',
  '<rootDir>/test/integration/rederive-zone-rules.test.ts',
  // A load's partitions under the writer's own call order: a city's (d1) and every one of a big host's.
  '<rootDir>/test/integration/d1-load-hot-partitions.test.ts',
  '<rootDir>/test/integration/load-partitions.test.ts',
  // The change path's streams against the partition margin, and what event-index copies.
  '<rootDir>/test/integration/change-partitions.test.ts',
  // Keys: the conditional-write protocol of key management and a user's deletion (lambdas/store/keys/key-store.ts).
  '<rootDir>/test/integration/key-manager.test.ts',
  '<rootDir>/test/integration/keys-revoke-during-create.test.ts',
  '<rootDir>/test/integration/keys-slot-leak.test.ts',
  '<rootDir>/test/integration/keys-audit-lines.test.ts',
  '<rootDir>/test/integration/keys-deleted-user.test.ts',
  '<rootDir>/test/integration/keys-resync.test.ts',
  '<rootDir>/test/integration/keys-daily-bound.test.ts',
  '<rootDir>/test/integration/keys-audit-revokes.test.ts',
  '<rootDir>/test/integration/keys-addressed-by-user-id.test.ts',
  // Issue 57: a deletion's keys 401 from its first attempt whatever fails after; a throttle sent again, never dead-lettered.
  '<rootDir>/test/integration/keys-deletion-first-attempt.test.ts',
  '<rootDir>/test/integration/ingest-throttle-resend.test.ts',
  '<rootDir>/test/integration/keys-cleanups.test.ts',
  // Webhooks (PRODUCT P18): the Lambda entries over the engine, changes applied between deliveries.
  '<rootDir>/test/integration/webhook-functions.test.ts',
  // Webhooks (PRODUCT P18): every delete, closing and disable on the audit trail once, each call of them failed in turn.
  '<rootDir>/test/integration/webhook-audit.test.ts',
  // Webhooks at scale: the delivery containers' feed cache under a change stream, and a run failed at each of its calls.
  '<rootDir>/test/integration/feed-cache.property.test.ts',
  '<rootDir>/test/integration/webhook-delivery-points.exhaustive.test.ts',
  // Webhooks (PRODUCT P18): the delivery engine under its adversaries (the feed property above has them beside its consumer).
  '<rootDir>/test/integration/webhooks-found.test.ts',
  '<rootDir>/test/integration/webhooks-delivery.exhaustive.test.ts',
];

/**
 * The rehearsal of the synthesized stack: test/rehearsal/, and the
 * end-to-end suites that get their server from test/support/target.ts, run
 * again with the bundles from cdk.out behind the template's gateway.
 */
export const REHEARSAL_TESTS = [
  '<rootDir>/test/rehearsal/*.test.ts',
  '<rootDir>/test/e2e/embed-api.test.ts',
  '<rootDir>/test/e2e/public-api.test.ts',
  '<rootDir>/test/e2e/rate-limit-headers.test.ts',
  '<rootDir>/test/e2e/keys-and-quota.test.ts',
  '<rootDir>/test/e2e/hostile-input.test.ts',
];

/** What every project shares. @type {import('jest').Config} */
export const common = {
  // Node's, its timeouts stretched by the machine's load (why: the file's comment).
  testEnvironment: '<rootDir>/test/support/load-aware-environment.js',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.js',
  },
  // Sources import siblings as `./x.js` (ESM rules); jest resolves them to the .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

/**
 * A function, so that importing the lists above (jest.browser.config.js, the
 * tests) does not ask for Java. @returns {import('jest').Config}
 */
export default function config() {
  const leftOut = secondStore() === 'leave out';
  const browserLeftOut = browserTests() === 'leave out';
  const lambdaNodeLeftOut = lambdaNodeTests() === 'leave out';
  // Its workers find the binary where the config did.
  const lambdaNode = lambdaNodePath();
  if (lambdaNode !== undefined) process.env.LAMBDA_NODE = lambdaNode;
  const lambdaNodeProject = {
    ...common,
    displayName: LAMBDA_NODE,
    testMatch: LAMBDA_NODE_TESTS,
    globalSetup: '<rootDir>/test/support/lambda-node.setup.js',
  };
  const browserProject = {
    ...common,
    displayName: BROWSER,
    testMatch: BROWSER_TESTS,
    // A browser's launch and page loads need more than the run's 30 s on a loaded machine.
    setupFilesAfterEnv: ['<rootDir>/test/support/browser.timeout.ts'],
    // Fails the run at once, naming the install command, when Chromium is missing but required.
    globalSetup: '<rootDir>/test/support/browser.setup.js',
  };
  const secondStoreProject = {
    ...common,
    displayName: SECOND_STORE,
    // And the tests of its own pool of JVMs, which need Java (so not in the dynalite project's folders).
    testMatch: [...CHANGE_PATH_TESTS, '<rootDir>/test/dynamodb-local/*.test.ts'],
    setupFiles: ['<rootDir>/test/support/dynamodb-local.env.ts'],
    // Fails the run at once, naming the install command, when Java is missing but required.
    globalSetup: '<rootDir>/test/support/dynamodb-local.ts',
    globalTeardown: '<rootDir>/test/support/dynamodb-local.teardown.js',
  };
  return {
    testTimeout: 30000,
    // Jest's default on 2 cores is 1 worker; the parent mostly waits, so 2 workers use both cores (CI is 2 cores).
    maxWorkers: 2,
    // A worker is replaced once a file leaves it holding more than 1 GB: each file's module registry lingers in
    // the worker's heap, so a worker that ran a hundred files spent more and more of its CPU collecting garbage,
    // and at the end of the run took longer than jest's 500 ms to give back its memory and exit ("A worker process
    // has failed to exit gracefully", every run, with no handle left open). Measured in the tests page ("How long it
    // takes"): about a tenth less CPU from a fresh clone, the warning gone.
    workerIdleMemoryLimit: '1GB',
    // Longest files first, also in a fresh clone with no timings yet (why: the file's comment).
    testSequencer: '<rootDir>/test/support/slow-first-sequencer.js',
    projects: [
      {
        ...common,
        displayName: 'dynalite',
        testMatch: ['<rootDir>/test/{unit,integration,e2e,infra}/**/*.test.ts'],
        // The run's folder of synthesized CDK assemblies, shared by test/infra's files (test/infra/support.ts).
        globalSetup: '<rootDir>/test/support/synth-cache.setup.mjs',
        globalTeardown: '<rootDir>/test/support/synth-cache.teardown.mjs',
      },
      {
        ...common,
        displayName: 'rehearsal',
        testMatch: REHEARSAL_TESTS,
        setupFiles: ['<rootDir>/test/support/rehearsal.env.ts'],
        globalSetup: '<rootDir>/test/support/rehearsal.setup.mjs',
      },
      ...(leftOut ? [] : [secondStoreProject]),
      ...(browserLeftOut ? [] : [browserProject]),
      ...(lambdaNodeLeftOut ? [] : [lambdaNodeProject]),
    ],
    // The default reporter, and the one line each saying what a run left out: the second store, the browser tests.
    reporters: [
      'default',
      ['<rootDir>/test/support/second-store-reporter.js', { leftOut, changePathTests: CHANGE_PATH_TESTS, rootDir: ROOT }],
      ['<rootDir>/test/support/browser-reporter.js', { leftOut: browserLeftOut, projectsNamed: selectedProjects(process.argv).length > 0 }],
      ['<rootDir>/test/support/lambda-node-reporter.js', { leftOut: lambdaNodeLeftOut, projectsNamed: selectedProjects(process.argv).length > 0 }],
    ],
  };
}
