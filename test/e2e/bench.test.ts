/** `npm run bench` keeps running as routes are added (tiny sample counts; the figures are not checked here). */
import { describe, expect, it } from '@jest/globals';
import { routes } from '../../lambdas/routes.js';
import { PLACE_SHARDS } from '../../lambdas/store/table/place-keys.js';
import { runTs } from '../support/process.js';

describe('npm run bench', () => {
  it('measures every route, bundle and change type', async () => {
    const { code, stdout, stderr } = await runTs('scripts/bench.ts', [], { BENCH_ITERATIONS: '2', BENCH_INIT_SAMPLES: '1', BENCH_FANOUT: '8', BENCH_GUESTS: '10', BENCH_HOST_SIZES: '20,60', BENCH_HOST_ITERATIONS: '2', BENCH_GUEST_SIZES: '5,20', BENCH_FEED_APPENDS: '32', BENCH_FEED_REMOVED: '300', BENCH_BURST_RSVPS: '8', BENCH_BURST_GUESTS: '4', BENCH_BURST_STORES: 'dynalite', BENCH_ROUND_TRIP_LINKS: '0,8', BENCH_HEAD_APPENDS: '4', BENCH_THROTTLE_RSVPS: '4', BENCH_DISCOVERY_CATALOGUE: '200', BENCH_WEBHOOK_DELIVERIES: '100', BENCH_WEBHOOK_BURST: '200', BENCH_PARTITION_CHANGES: '2' }).done;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    // The exact tables first (held to docs/performance.md by test/integration/performance-tables.test.ts), then each route timed.
    for (const route of routes) expect(stdout).toMatch(new RegExp(`^\\| ${route.id} \\| ${route.surface} \\| \\d+ \\| \\d+ \\|`, 'm'));
    for (const route of routes) expect(stdout).toMatch(new RegExp(`^\\| ${route.id} \\| (?:[\\d.]+|n/a) \\|$`, 'm'));
    for (const handler of [...routes.map((r) => r.handler), 'authorizer', 'legacy-redirect', 'ingest', 'key-admin']) expect(stdout).toMatch(new RegExp(`^\\| ${handler} \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\|`, 'm'));
    // The sizes include Powertools (bundled, no layer), and the bench says so.
    expect(stdout).toMatch(/Powertools is bundled into every function \(no layer\)/);
    // Discovery: a page of a city's events, first and after a cursor, in a Query per place shard and a BatchGetItem, 2 round trips at every size.
    expect(stdout).toMatch(new RegExp(`^\\| 200 \\| 10 \\| first \\| \\d+ \\| ${PLACE_SHARDS + 1} \\| 2 \\|`, 'm'));
    expect(stdout).toMatch(new RegExp(`^\\| 200 \\| 10 \\| half way \\(after a cursor\\) \\| \\d+ \\| ${PLACE_SHARDS + 1} \\| 2 \\|`, 'm'));
    expect(stdout).toMatch(/^\| RSVP flip yes → no \| applied \| [1-9]\d* \|/m);
    expect(stdout).toMatch(/^\| stale duplicate \| stale \| 0 \|/m);
    // Round trips per change, a fan-out by its size, and the burst on one event by 1 to 8 appliers.
    expect(stdout).toMatch(/^\| new RSVP \(yes\) \| \d \| \d+ \| 8 \|$/m);
    expect(stdout).toMatch(/^\| 8 \| \d+ \/ \d+ \| \d+ \/ \d+ \|$/m);
    // The last column: the hottest partition's items written per RSVP, and which (docs/performance.md, "Freshness under load").
    for (const n of [1, 2, 4, 8]) expect(stdout).toMatch(new RegExp(`^\\| dynalite \\| ${n} \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\(\`[^\`]+\`\\) \\|$`, 'm'));
    // Write capacity as billed: the GSI share is shown, and each event size has its RSVP and edit rows.
    const feedColumn = '\\d+ \\(\\d+; (?:[\\d.]+|-)\\)';
    expect(stdout).toMatch(new RegExp(`^\\| event hidden \\| applied \\| \\d+ \\| \\d+ \\(\\d+\\) \\| [\\d.]+ \\| \\d+ \\| ${feedColumn} \\|$`, 'm'));
    // The changes feeds: an RSVP adds one guest-feed entry.
    expect(stdout).toMatch(/^\| RSVP flip yes → no \| applied \| \d+ \| \d+ \(\d+\) \| [\d.]+ \| \d+ \| 1 \(\d+; [\d.]+\) \|$/m);
    // Appends at every number of appenders; each feed's page in at most two round trips after the authorizer.
    for (const n of [1, 2, 4, 8, 16]) expect(stdout).toMatch(new RegExp(`^\\| ${n} \\| \\d+ \\| an edit \\(the append\\) \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\|$`, 'm'));
    expect(stdout).toMatch(/^\| catalogue \| small \| 100 members \(a start\) \| 100 \| \d+ \| [12] \| [\d.]+ \|$/m);
    for (const feed of ["a host's events", "an event's guests"]) expect(stdout).toMatch(new RegExp(`^\\| ${feed} \\| small \\| 100 members, with the cursor \\| 100 \\| \\d+ \\| [12] \\| [\\d.]+ \\|$`, 'm'));
    expect(stdout).toMatch(/^\| 300 \| \d+ \| [\d.]+ \|$/m);
    for (const size of [5, 20]) expect(stdout).toMatch(new RegExp(`^\\| new RSVP \\(yes\\) \\| ${size} \\| \\d+ \\| \\d+ \\(\\d+\\) \\|`, 'm'));
    for (const change of ['new RSVP \\(yes\\)', 'RSVP deletion', 'event title edit']) expect(stdout).toMatch(new RegExp(`^\\| ${change} \\| [\\d.]+ \\| [\\d.]+ \\|$`, 'm'));
    // The user's guest unit in each of its 16 events, and the event unit of the 8 it hosts (an event item shows its
    // host, not its guests: the counts are in the bucket summaries beside it).
    expect(stdout).toMatch(/^\| rename of a user hosting 8 events \(1 guest each\) and holding 8 RSVPs \| 24 \|/m);
    expect(stdout).toMatch(/^\| upcoming-events\?limit=10 \| [\d.]+ \/ \d+ \/ [\d.]+ \| [\d.]+ \/ \d+ \/ [\d.]+ \| [\d.]+ \| [\d.]+ \|$/m);
    expect(stdout).toMatch(/^\| Embed events\?limit=10 \|/m);
    // The cost table prices every route, and each surface (CloudFront for the Embed API only).
    for (const route of routes) expect(stdout).toMatch(new RegExp(`^\\| ${route.id} \\| ${route.surface} \\| [\\d.]+ \\| .* \\| \\$[\\d.]+ \\|`, 'm'));
    expect(stdout).toMatch(/^\| Public API \(keyed data routes\) \| \$[\d.]+–\$[\d.]+ \| n\/a \|/m);
    expect(stdout).toMatch(/^\| Embed API \(data routes\) \| \$[\d.]+–\$[\d.]+ \| \$[\d.]+–\$[\d.]+ \|/m);
    // The keyless flood, with and without the abuse limits (issue 22).
    expect(stdout).toMatch(/^\| no limits \(before issue 22\) \| 100 % \| 100 % \| \$3\.50 \|/m);
    expect(stdout).toMatch(/^\| stage throttle \+ web ACL, one address \| 0\.2 % \| 0\.2 % \|/m);
    // Partitions under the change path: every stream's hottest partition, per change and at the ingest's pace.
    for (const stream of ['new RSVPs on one event', 'RSVP status changes on one event']) expect(stdout).toMatch(new RegExp(`^\\| ${stream} \\| \`[^\`]+\` \\| [\\d.]+ \\| \\d+ WCU/s \\|`, 'm'));
    // Every section at its smallest sizes still bundles every function and applies every change kind: 79-93 s at load 8-10.
  }, 180_000);
});
