/**
 * Round trips per change: the longest chain of DynamoDB calls a change makes,
 * each sent only after another was answered (calls sent together count once:
 * local/instrument.ts, roundTrips). On DynamoDB every round trip is a network
 * trip of a few milliseconds, so this, not the number of calls, is how long a
 * change takes to show (docs/performance.md, "Freshness under load").
 *
 * `npm run bench` prints the table; test/integration/change-round-trips.test.ts
 * holds the bounds (docs/data-model.md, "A change in waves").
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Change } from '../lambdas/core/changes.js';
import type { Clock } from '../lambdas/core/clock.js';
import type { Dataset, SourceEvent } from '../lambdas/core/dataset.js';
import { ChangeApplier } from '../lambdas/store/changes/applier.js';
import { createDocumentClient } from '../lambdas/store/table/client.js';
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

/** Round trips of each case, applied in order to a fresh load of roundTripDataset on the store at `endpoint`. */
export async function changeRoundTrips(endpoint: string, admin: DynamoDBDocumentClient, table: string, clock: Clock): Promise<ChangeTrips[]> {
  await ensureTable(admin, table);
  await writeDataset(admin, table, roundTripDataset(0), { clock });
  const { client, spans } = waveClient(endpoint);
  const applier = new ChangeApplier(client, table, { clock });
  const rows: ChangeTrips[] = [];
  try {
    for (const [change, record] of ROUND_TRIP_CASES) {
      spans.splice(0);
      const { result } = await applier.apply(record);
      rows.push({ change, result, calls: spans.length, roundTrips: roundTrips(spans) });
    }
  } finally {
    client.destroy();
  }
  return rows;
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
  const { client, spans } = waveClient(endpoint);
  const applier = new ChangeApplier(client, table, { clock });
  const run = async (change: string, record: Change): Promise<ChangeTrips> => {
    spans.splice(0);
    const { result } = await applier.apply(record);
    return { change, result, calls: spans.length, roundTrips: roundTrips(spans) };
  };
  try {
    const edit = await run(`name edit of a user hosting ${links} events`, { type: 'user.upserted', version: 1, user: { id: 'usr_fan', username: 'fan', name: 'Fan' } });
    const rename = await run(`rename of a user hosting ${links} events`, { type: 'user.upserted', version: 2, user: { id: 'usr_fan', username: 'fan-renamed', name: 'Fan' } });
    return { edit, rename };
  } finally {
    client.destroy();
  }
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

/** The bench's section: each case's round trips and calls, then a fan-out by its number of linked events. */
export async function roundTripFigures(endpoint: string, admin: DynamoDBDocumentClient, clock: Clock): Promise<string[]> {
  const rows = await changeRoundTrips(endpoint, admin, 'bench-round-trips', clock);
  const lines = ['| Change | Round trips | Calls | Bound |', '|---|---|---|---|', ...rows.map((r) => `| ${r.change} | ${r.roundTrips} | ${r.calls} | ${ROUND_TRIP_BOUNDS[r.change] ?? ''} |`)];
  lines.push('', '| User with N events (one guest each) | Name edit: round trips / calls | Rename: round trips / calls |', '|---|---|---|');
  for (const links of (process.env.BENCH_ROUND_TRIP_LINKS ?? '0,1,8,16,24').split(',').map(Number)) {
    const { edit, rename } = await fanOutRoundTrips(endpoint, admin, `bench-fan-out-${links}`, clock, links);
    lines.push(`| ${links} | ${edit.roundTrips} / ${edit.calls} | ${rename.roundTrips} / ${rename.calls} |`);
  }
  return lines;
}

/** `npx tsx scripts/bench-round-trips.ts`: the bench's section alone, on an embedded store of its own. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const { startDynalite } = await import('../local/dynalite.js');
  const { fixedClock } = await import('../lambdas/core/clock.js');
  const store = await startDynalite();
  const admin = createDocumentClient({ endpoint: store.endpoint });
  try {
    process.stdout.write(`${(await roundTripFigures(store.endpoint, admin, fixedClock('2026-11-21T12:00:00.000Z'))).join('\n')}\n`);
  } finally {
    admin.destroy();
    await store.close();
  }
}
