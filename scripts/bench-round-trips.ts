/**
 * Round trips per change: the longest chain of DynamoDB requests a change
 * makes, each sent only after another was answered (requests sent together
 * count once). On DynamoDB every round trip is a network trip of a few
 * milliseconds, so this, not the number of calls, is how long a change takes
 * to show (docs/performance.md, "Freshness under load").
 *
 * Counted as DynamoDB sees them: the change path's own client
 * (createWriteClient: its retries, its sockets) sends through a recording
 * proxy that releases requests in waves (test/support/wave-proxy.ts), so
 * whatever the SDK adds between the code's call and the wire (a retry, a wait
 * for a socket of its pool) is counted. Counting the code's calls as it
 * issued them (waveClient below, which the read routes' table still uses)
 * missed those: the burst of RSVPs below took 9 round trips for one RSVP in
 * three while that count said 8 (the SDK's 50 sockets a client, ten records'
 * waves at once).
 *
 * `npm run bench` prints the table; test/integration/change-round-trips.test.ts
 * holds the bounds (docs/data-model.md, "A change in waves"), and
 * test/integration/rsvp-burst-round-trips.test.ts the burst's.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../lambdas/core/changes.js';
import type { Clock } from '../lambdas/core/clock.js';
import type { Dataset, SourceEvent } from '../lambdas/core/dataset.js';
import { ChangeApplier } from '../lambdas/store/changes/applier.js';
import { createDocumentClient, createWriteClient } from '../lambdas/store/table/client.js';
import { roundTripsByTag, runTagged, startWaveProxy, withWaveTag } from '../test/support/wave-proxy.js';
import { ensureTable } from '../local/dynalite.js';
import { roundTrips, type CallSpan } from '../local/instrument.js';
import { writeDataset } from '../local/loader.js';

export interface ChangeTrips {
  change: string;
  result: string;
  calls: number;
  roundTrips: number;
}

/**
 * A client whose calls go in waves: each call waits until the code has sent
 * every call it can with the answers it has (it has quieted), then that
 * wave is sent at once and every one of its answers is handed back together.
 * So a call is in wave k exactly when its longest chain of calls each sent
 * after the previous was answered is k long, whatever order and speed the
 * store answers in (an in-process store on a busy machine answers a wave's
 * calls one after another, and a chain counted from their timing would
 * include that). Spans are recorded per wave, so local/instrument.ts's
 * roundTrips counts the waves.
 */
export function waveClient(endpoint: string): { client: DynamoDBDocumentClient; spans: CallSpan[] } {
  const client = createDocumentClient({ endpoint });
  const spans: CallSpan[] = [];
  let events = 0;
  let collecting: { sends: (() => Promise<unknown>)[]; done: Promise<void> } | undefined;
  const wave = () => {
    const w = { sends: [] as (() => Promise<unknown>)[], done: Promise.resolve() };
    w.done = (async () => {
      // Quiet: the code's own work between calls is microtasks; two turns of the event loop outlast it.
      for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
      collecting = undefined;
      const start = events++;
      await Promise.allSettled(w.sends.map((send) => send()));
      const end = events++;
      for (const _ of w.sends) spans.push({ start, end });
    })();
    return w;
  };
  client.middlewareStack.add(
    (next) => async (args) => {
      const w = (collecting ??= wave());
      let answer!: Promise<Awaited<ReturnType<typeof next>>>;
      w.sends.push(() => (answer = next(args)).catch(() => undefined));
      // Every answer of the wave is handed back together, once the last is in.
      await w.done;
      return answer;
    },
    { step: 'initialize', name: 'roundTripWaves' },
  );
  return { client, spans };
}

const host = { id: 'usr_host', username: 'host' };
const guest = { id: 'usr_guest', username: 'guest' };
const loner = { id: 'usr_loner', username: 'loner', name: 'Lone' };
const solo = { id: 'usr_solo', username: 'solo' };
const newcomer = { id: 'usr_new', username: 'newcomer' };
/** In a city and a country: the most place feeds an event is in (three: both, the country, the city; PRODUCT P17). */
const party: SourceEvent = {
  id: 'evt_party',
  creator_id: host.id,
  title: 'Party',
  location: { name: 'Hall', city: 'Lisbon', country: 'PT' },
  start_date: '2027-01-01T20:00:00.000Z',
  timezone: 'UTC',
  status: 'published',
  visibility: 'public',
  created_at: '2026-11-01T00:00:00.000Z',
};
const night = (i: number, creator: string): SourceEvent => ({ ...party, id: `evt_n${i}`, creator_id: creator, title: `Night ${i}`, start_date: new Date(Date.parse('2027-02-01T20:00:00Z') + i * 86_400_000).toISOString() });

/** The dataset the round trips are measured on: a party with a few guests, a host of `links` events, a user with no events. */
export function roundTripDataset(links: number): Dataset {
  const nights = Array.from({ length: links }, (_, i) => night(i, 'usr_fan'));
  return {
    users: [host, guest, loner, newcomer, solo, { id: 'usr_fan', username: 'fan' }],
    events: [party, ...nights],
    rsvps: [
      { event_id: party.id, user_id: guest.id, status: 'yes', rsvp_date: '2026-11-02T00:00:00.000Z' },
      { event_id: party.id, user_id: loner.id, status: 'maybe', rsvp_date: '2026-11-02T00:00:00.000Z' },
    ],
  };
}

/** The changes whose round trips are held, in the order they are applied to roundTripDataset. */
export const ROUND_TRIP_CASES: [string, Change][] = [
  ['new RSVP (yes)', { type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: newcomer.id, status: 'yes', rsvp_date: '2026-11-03T00:00:00.000Z' } }],
  ['RSVP status change (yes to no)', { type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: guest.id, status: 'no', rsvp_date: '2026-11-02T00:00:00.000Z' } }],
  ['RSVP status change (no to maybe)', { type: 'rsvp.upserted', version: 2, rsvp: { event_id: party.id, user_id: guest.id, status: 'maybe', rsvp_date: '2026-11-02T00:00:00.000Z' } }],
  ['RSVP deletion', { type: 'rsvp.deleted', version: 1, event_id: party.id, user_id: loner.id }],
  ['new RSVP (no)', { type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: 'usr_fan', status: 'no', rsvp_date: '2026-11-04T00:00:00.000Z' } }],
  ['event edit that moves no list (title)', { type: 'event.upserted', version: 1, event: { ...party, title: 'Party, renamed' } }],
  // Out of two place feeds (Lisbon, and Lisbon in Portugal) and into two (Porto, Porto in Portugal); still in Portugal's.
  ['event move to another city', { type: 'event.upserted', version: 2, event: { ...party, title: 'Party, renamed', location: { name: 'Casa', city: 'Porto', country: 'PT' } } }],
  ['user edit without a fan-out (a user with no events)', { type: 'user.upserted', version: 1, user: { ...solo, name: 'Solo' } }],
  ['user edit of private fields only (e-mail)', { type: 'user.upserted', version: 1, user: { ...host, email: 'host@example.com' } }],
  ['stale duplicate', { type: 'rsvp.deleted', version: 1, event_id: party.id, user_id: loner.id }],
];

/**
 * The change path's client, as the ingest makes it, through a wave proxy on
 * `endpoint`; `measure` runs one piece of work and answers its requests and
 * round trips as the proxy saw them.
 */
async function throughWaves<T>(endpoint: string, run: (client: DynamoDBDocumentClient, measure: (name: string, work: () => Promise<string>) => Promise<ChangeTrips>) => Promise<T>): Promise<T> {
  const proxy = await startWaveProxy(endpoint);
  const client = createWriteClient({ endpoint: proxy.endpoint });
  withWaveTag(client);
  const measure = async (change: string, work: () => Promise<string>): Promise<ChangeTrips> => {
    const result = await runTagged(change, work);
    return { change, result, calls: proxy.requests.filter((r) => r.tag === change).length, roundTrips: roundTripsByTag(proxy.requests).get(change) ?? 0 };
  };
  try {
    return await run(client, measure);
  } finally {
    client.destroy();
    await proxy.close();
  }
}

/** Round trips of each case, applied in order to a fresh load of roundTripDataset on the store at `endpoint`. */
export async function changeRoundTrips(endpoint: string, admin: DynamoDBDocumentClient, table: string, clock: Clock): Promise<ChangeTrips[]> {
  await ensureTable(admin, table);
  await writeDataset(admin, table, roundTripDataset(0), { clock });
  return throughWaves(endpoint, async (client, measure) => {
    const applier = new ChangeApplier(client, table, { clock });
    const rows: ChangeTrips[] = [];
    for (const [change, record] of ROUND_TRIP_CASES) rows.push(await measure(change, async () => (await applier.apply(record)).result));
    return rows;
  });
}

/**
 * A user's fan-out by its number of linked events: the round trips of a name
 * edit and of a rename of a user who hosts `links` events, each with one
 * guest. Units run `fanOutConcurrency` at once (default 8): one chunk is as
 * long as one unit.
 */
export async function fanOutRoundTrips(endpoint: string, admin: DynamoDBDocumentClient, table: string, clock: Clock, links: number): Promise<{ edit: ChangeTrips; rename: ChangeTrips }> {
  const data = roundTripDataset(links);
  data.rsvps = [...(data.rsvps ?? []), ...data.events.slice(1).map((e) => ({ event_id: e.id, user_id: guest.id, status: 'yes' as const, rsvp_date: '2026-11-02T00:00:00.000Z' }))];
  await ensureTable(admin, table);
  await writeDataset(admin, table, data, { clock });
  return throughWaves(endpoint, async (client, measure) => {
    const applier = new ChangeApplier(client, table, { clock });
    const edit = await measure(`name edit of a user hosting ${links} events`, async () => (await applier.apply({ type: 'user.upserted', version: 1, user: { id: 'usr_fan', username: 'fan', name: 'Fan' } })).result);
    const rename = await measure(`rename of a user hosting ${links} events`, async () => (await applier.apply({ type: 'user.upserted', version: 2, user: { id: 'usr_fan', username: 'fan-renamed', name: 'Fan' } })).result);
    return { edit, rename };
  });
}

/** The burst of new RSVPs measured from outside: BURST.rsvps on one event of BURST.guests, BURST.batch at once on one client as the ingest applies a batch. */
export const BURST = { guests: 1_000, rsvps: 160, batch: 10 } as const;

/** Each new RSVP's round trips in the burst (as the proxy saw them), in the order applied. */
export async function burstRoundTrips(endpoint: string, admin: DynamoDBDocumentClient, table: string, clock: Clock, burst: { guests: number; rsvps: number; batch: number } = BURST): Promise<number[]> {
  const statuses = ['yes', 'no', 'maybe'] as const;
  const old = Array.from({ length: burst.guests }, (_, i) => ({ id: `usr_old${i}`, username: `old${i}` }));
  const fresh = Array.from({ length: burst.rsvps }, (_, i) => ({ id: `usr_new${i}`, username: `new${i}` }));
  await ensureTable(admin, table);
  await writeDataset(admin, table, { users: [host, ...old, ...fresh], events: [party], rsvps: old.map((u, i) => ({ event_id: party.id, user_id: u.id, status: statuses[i % 3]!, rsvp_date: '2026-11-02T00:00:00.000Z' })) }, { clock });
  const changes: Change[] = fresh.map((u, i) => ({ type: 'rsvp.upserted', version: 1, rsvp: { event_id: party.id, user_id: u.id, status: statuses[i % 3]!, rsvp_date: '2026-11-03T00:00:00.000Z' } }));
  return throughWaves(endpoint, async (client, measure) => {
    const trips: number[] = [];
    for (let b = 0; b < changes.length; b += burst.batch) {
      // A batch's records at once, each with its own applier on the one client (lambdas/ingest/handler.ts).
      const rows = await Promise.all(changes.slice(b, b + burst.batch).map((c, j) => measure(`rsvp ${b + j}`, async () => (await new ChangeApplier(client, table, { clock }).apply(c)).result)));
      for (const row of rows) {
        if (row.result !== 'applied') throw new Error(`${row.change}: ${row.result}`);
        trips.push(row.roundTrips);
      }
    }
    return trips;
  });
}

/** How many RSVPs of the burst took each number of round trips: `8: 108, 7: 52`. */
export function tripsHistogram(trips: readonly number[]): string {
  const counts = new Map<number, number>();
  for (const t of trips) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].sort((a, b) => b[0] - a[0]).map(([t, n]) => `${t}: ${n}`).join(', ');
}

export { createDocumentClient };

/** The bounds test/integration/change-round-trips.test.ts holds (issue 38). */
export const ROUND_TRIP_BOUNDS: Record<string, number> = {
  'new RSVP (yes)': 8,
  'RSVP status change (yes to no)': 8,
  'RSVP status change (no to maybe)': 8,
  'RSVP deletion': 8,
  'new RSVP (no)': 8,
  'event edit that moves no list (title)': 6,
  // The new places' member joins, then their entries (a member joins before its entry): one wave more than an edit.
  'event move to another city': 7,
  'user edit without a fan-out (a user with no events)': 6,
  'user edit of private fields only (e-mail)': 6,
};
/** A user edit that reaches no event. */
export const USER_EDIT_TRIPS = 6;
/** Each chunk of a fan-out (fanOutConcurrency units at once, 8 by default), on top of the change itself and one Query of its links. */
export const FAN_OUT_CHUNK_TRIPS = 6;

/**
 * The exact part (the same in every run of a commit: the proxy's waves do not
 * depend on this machine's speed), which docs/performance.md holds between
 * its `bench:roundTrips` markers: each case's round trips and requests, and
 * the burst's RSVPs by round trips. On an embedded store of its own.
 */
export async function exactRoundTripTable(clock: Clock): Promise<string> {
  const { startDynalite } = await import('../local/dynalite.js');
  const store = await startDynalite();
  const admin = createDocumentClient({ endpoint: store.endpoint });
  try {
    const rows = await changeRoundTrips(store.endpoint, admin, 'bench-round-trips', clock);
    const burst = await burstRoundTrips(store.endpoint, admin, 'bench-burst-round-trips', clock);
    return [
      '| Change | Round trips | Requests | Bound |',
      '|---|---|---|---|',
      ...rows.map((r) => `| ${r.change} | ${r.roundTrips} | ${r.calls} | ${ROUND_TRIP_BOUNDS[r.change] ?? ''} |`),
      '',
      `A burst of ${BURST.rsvps} new RSVPs on one event of ${BURST.guests.toLocaleString('en-US')} guests, ${BURST.batch} at once on one client (an ingest batch): RSVPs by round trips, ${tripsHistogram(burst)} (bound 8).`,
    ].join('\n');
  } finally {
    admin.destroy();
    await store.close();
  }
}

/** The bench's timed section: a fan-out by its number of linked events (the cases and the burst are exact: exactRoundTripTable). */
export async function roundTripFigures(endpoint: string, admin: DynamoDBDocumentClient, clock: Clock): Promise<string[]> {
  const lines = ['| User with N events (one guest each) | Name edit: round trips / requests | Rename: round trips / requests |', '|---|---|---|'];
  for (const links of (process.env.BENCH_ROUND_TRIP_LINKS ?? '0,1,8,16,24').split(',').map(Number)) {
    const { edit, rename } = await fanOutRoundTrips(endpoint, admin, `bench-fan-out-${links}`, clock, links);
    lines.push(`| ${links} | ${edit.roundTrips} / ${edit.calls} | ${rename.roundTrips} / ${rename.calls} |`);
  }
  return lines;
}

/** `npx tsx scripts/bench-round-trips.ts`: the bench's sections alone, on embedded stores of their own. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const { startDynalite } = await import('../local/dynalite.js');
  const { fixedClock } = await import('../lambdas/core/clock.js');
  const clock = fixedClock('2026-11-21T12:00:00.000Z');
  process.stdout.write(`${await exactRoundTripTable(clock)}\n\n`);
  const store = await startDynalite();
  const admin = createDocumentClient({ endpoint: store.endpoint });
  try {
    process.stdout.write(`${(await roundTripFigures(store.endpoint, admin, clock)).join('\n')}\n`);
  } finally {
    admin.destroy();
    await store.close();
  }
}
