/**
 * Discovery's figures for `npm run bench` (PRODUCT P17, docs/performance.md
 * "Discovery"): what a page of up to 100 events costs, first and deep (after
 * a cursor half way through the city), with 1,000 and 1,000,000 events in
 * the catalogue and 10, 1,000 and 100,000 of them in the city asked about.
 *
 * Every event is a real item in the store (dynalite in-process up to
 * 100,000 events; DynamoDB Local above, which holds a million where
 * dynalite's in-memory leveldb does not): the event item
 * deriveEventItem gives, with its three place index entries, written with
 * BatchWriteItem in bulk (what the loader writes for an event's item; the
 * loader's other items, guests and tallies, play no part in a search and
 * are left out, which is what makes a million affordable here). The city's
 * events are ordinary events; the rest of the catalogue is small events
 * spread over 1,000 other cities in 50 countries, so that the indexes hold
 * them all, in other partitions.
 *
 * Read units are as DynamoDB bills them, from the items each call returned
 * (the size rules of scripts/write-billing.ts): a Query, the sizes of the
 * index entries it read summed and rounded up to 4 KB; a BatchGetItem, each
 * item rounded up to 4 KB; eventually consistent reads half a unit per
 * 4 KB. Round trips are the longest chain of calls each sent after the
 * previous one was answered (local/instrument.ts).
 *
 * BENCH_DISCOVERY_CATALOGUE sets the catalogue sizes; by default 1,000 and
 * 1,000,000 (the sizes PRODUCT P17 names) where Java is, else 1,000 and
 * 100,000. The million runs on DynamoDB Local (Java 17); on a shared 2-core
 * machine writing its items took 411 s (467 s with the rest), which is most
 * of `npm run bench`'s time (docs/performance.md, "Discovery"). This file run
 * alone prints the discovery rows only.
 */
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fixedClock } from '../lambdas/core/clock.js';
import type { SourceEvent } from '../lambdas/core/dataset.js';
import { staticKeyring } from '../lambdas/core/feed-cursor.js';
import { cityKey } from '../lambdas/core/place.js';
import { parseSearchCursor, sealSearchCursor } from '../lambdas/core/search-cursor.js';
import { addDays } from '../lambdas/core/search-params.js';
import { searchPage } from '../lambdas/core/search-events.js';
import { marshall } from '@aws-sdk/util-dynamodb';
import { createDocumentClient } from '../lambdas/store/table/client.js';
import { deriveEventItem, userRecord } from '../lambdas/store/changes/derive.js';
import { DynamoRepository } from '../lambdas/store/reads/repository.js';
import { placeSortKey } from '../lambdas/store/table/table.js';
import { localDateTime } from '../lambdas/core/local-time.js';
import { ensureTable } from '../local/dynalite.js';
// The explorations' in-process dynalite (no socket): the same store code, the catalogues up to 100,000.
import { startInProcessDynalite } from '../test/support/in-process-dynalite.js';
import { startDynamoDbLocal } from '../test/support/dynamodb-local.js';
import type { StoreCall } from '../test/support/direct-dynalite.js';
import { roundTrips, type CallSpan } from '../local/instrument.js';
import { itemSize } from './write-billing.js';

/** A million needs DynamoDB Local, so Java: without it the default stops at 100,000 and says so. */
const JAVA = spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0;
const CATALOGUES = (process.env.BENCH_DISCOVERY_CATALOGUE ?? (JAVA ? '1000,1000000' : '1000,100000')).split(',').map(Number);
/** Above this many events the catalogue goes to DynamoDB Local: dynalite's in-memory leveldb does not hold a million. */
const DYNALITE_MAX = 100_000;
const CITY_SIZES = [10, 1_000, 100_000];
const keyring = staticKeyring(Buffer.from('bench-cursor-key'));
const NOW = fixedClock('2026-11-21T12:00:00.000Z')();
const CREATOR = userRecord({ id: 'usr_host', username: 'host' });
const COUNTRIES = ['PT', 'ES', 'FR', 'DE', 'IT', 'NL', 'BE', 'GB', 'IE', 'US', 'CA', 'MX', 'BR', 'AR', 'CL', 'JP', 'KR', 'CN', 'IN', 'AU', 'NZ', 'ZA', 'NG', 'KE', 'EG', 'MA', 'TR', 'GR', 'PL', 'CZ', 'AT', 'CH', 'SE', 'NO', 'DK', 'FI', 'EE', 'LV', 'LT', 'HU', 'RO', 'BG', 'HR', 'SI', 'SK', 'UA', 'IL', 'AE', 'SG', 'TH'];
/** Events spread over about a year, a few an hour: a 31-day window of a big city holds thousands. */
const SPREAD_MS = 365 * 86_400_000;

/**
 * Catalogue event `id` (its number `i`): in the city (Lisbon, PT; an
 * ordinary description; `n` of them spread over a year) or elsewhere (a
 * small event in one of 1,000 other cities).
 */
function event(id: string, i: number, inCity: boolean, n: number): SourceEvent {
  const start = Date.parse('2026-12-01T00:00:00Z') + (inCity ? Math.floor((i * SPREAD_MS) / n) : (i % 365) * 86_400_000) + (i % 7) * 60_000;
  return {
    id,
    creator_id: CREATOR.id,
    title: inCity ? `Concert ${i}` : `E${i}`,
    description: inCity ? 'An evening of music with friends, open to everyone. '.repeat(6) : null,
    location: inCity ? { name: 'Hall', city: 'Lisbon', country: 'PT' } : { name: 'H', city: `Elsewhere ${i % 1000}`, country: COUNTRIES[i % COUNTRIES.length]! },
    start_date: new Date(start).toISOString(),
    timezone: 'Europe/Lisbon',
    status: 'published',
    visibility: 'public',
    created_at: '2026-01-01T00:00:00.000Z',
  } as SourceEvent;
}

/** The store a catalogue is written to and read from: the SDK's way in (endpoint, handler) and the protocol's (call). */
interface BenchStore {
  name: string;
  endpoint: string;
  requestHandler?: NonNullable<Parameters<typeof createDocumentClient>[0]>['requestHandler'];
  call: StoreCall;
  /** BatchWriteItem calls in flight at once: one in-process (nothing to overlap), several to a JVM over a socket. */
  writers: number;
  close(): Promise<void>;
}

async function inProcessDynalite(): Promise<BenchStore> {
  const store = await startInProcessDynalite();
  return { name: 'dynalite', endpoint: store.endpoint, requestHandler: store.requestHandler, call: store.call, writers: 1, close: store.close };
}

/**
 * DynamoDB Local (SQLite in memory, in a JVM): about 2,400 items a second
 * written with 8 calls in flight on 2 busy cores, a million in under 4 GB,
 * where dynalite's leveldb passed 11 GB before a million. The protocol's JSON over HTTP with a dummy signature
 * (DynamoDB Local checks the header is there, not the signature).
 */
async function dynamoDbLocal(): Promise<BenchStore> {
  const store = await startDynamoDbLocal(new URL('..', import.meta.url).pathname);
  const call: StoreCall = async (operation, body) => {
    const response = await fetch(store.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${operation}`,
        'x-amz-date': '20261126T000000Z',
        authorization: 'AWS4-HMAC-SHA256 Credential=local/20261126/local/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0',
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  return { name: 'DynamoDB Local', endpoint: store.endpoint, call, writers: 8, close: store.close };
}

/**
 * Writes the items of events `from` to `to` - 1: BatchWriteItem straight to
 * the store's handler (the protocol's JSON, no SDK in between: at a million
 * items the SDK's own steps were most of the time), 25 items a call,
 * generated a slice at a time so a million never sit in memory at once,
 * `store.writers` calls in flight at once.
 */
async function writeEvents(store: BenchStore, table: string, from: number, to: number, make: (i: number) => SourceEvent): Promise<void> {
  let next = from;
  const writer = async (): Promise<void> => {
    for (let start = next; start < to; start = next) {
      next += 25;
      await writeSlice(store, table, start, Math.min(start + 25, to), make);
    }
  };
  await Promise.all(Array.from({ length: store.writers }, writer));
}

async function writeSlice(store: BenchStore, table: string, start: number, to: number, make: (i: number) => SourceEvent): Promise<void> {
  const items = Array.from({ length: to - start }, (_, j) => deriveEventItem({ event: make(start + j), creator: CREATOR })[0]!);
  let pending: unknown[] = items.map((item) => ({ PutRequest: { Item: marshall(item, { removeUndefinedValues: true }) } }));
  while (pending.length) {
    const { status, json } = await store.call('BatchWriteItem', { RequestItems: { [table]: pending } });
    if (status !== 200) throw new Error(`BatchWriteItem: ${status} ${JSON.stringify(json)}`);
    pending = ((json.UnprocessedItems as Record<string, unknown[]> | undefined) ?? {})[table] ?? [];
  }
}

/** Calls, spans and read units (as billed, from the items returned) of the calls a page makes. */
function readMeter(client: DynamoDBDocumentClient) {
  const m = { calls: 0, rcu: 0, spans: [] as CallSpan[], bytes: 0 };
  let events = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const span = { start: events++, end: Infinity };
      m.spans.push(span);
      const out = await next(args);
      span.end = events++;
      m.calls++;
      const output = out.output as { Items?: Record<string, unknown>[]; Responses?: Record<string, Record<string, unknown>[]> };
      if (String(context.commandName).startsWith('Query')) {
        const bytes = (output.Items ?? []).reduce((n, i) => n + itemSize(i), 0);
        m.bytes += bytes;
        m.rcu += Math.max(1, Math.ceil(bytes / 4096)) / 2;
      } else if (String(context.commandName).startsWith('BatchGet')) {
        for (const item of Object.values(output.Responses ?? {}).flat()) {
          m.bytes += itemSize(item);
          m.rcu += Math.max(1, Math.ceil(itemSize(item) / 4096)) / 2;
        }
      }
      return out;
    },
    { step: 'initialize', name: 'discoveryMeter', priority: 'high' },
  );
  return { m, reset: () => Object.assign(m, { calls: 0, rcu: 0, spans: [], bytes: 0 }) };
}

export async function discoveryFigures(): Promise<string[]> {
  // Said when the section runs, not when the module loads: `npm run bench -- --exact` imports it and measures none of it.
  if (!process.env.BENCH_DISCOVERY_CATALOGUE && !JAVA) console.error('bench-discovery: no Java here, so no catalogue of 1,000,000 (DynamoDB Local needs Java 17); measuring 1,000 and 100,000');
  const rows = [
    '| Catalogue events | Events in the city | Page | Events returned | DynamoDB calls | Round trips | Read units (billed) | Bytes read |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const catalogue of CATALOGUES) {
    const store = catalogue > DYNALITE_MAX ? await dynamoDbLocal() : await inProcessDynalite();
    const began = Date.now();
    const client = createDocumentClient({ endpoint: store.endpoint, requestHandler: store.requestHandler });
    try {
      const table = 'discovery';
      await ensureTable(client, table);
      // The biggest city first, the rest of the catalogue elsewhere; then the city shrinks, its other events moving
      // elsewhere (the same ids, rewritten), so the catalogue keeps its size throughout.
      const sizes = CITY_SIZES.filter((c) => c <= catalogue).sort((a, b) => b - a);
      await writeEvents(store, table, 0, catalogue - sizes[0]!, (i) => event(`evt_o${i}`, i, false, 0));
      let inCity = sizes[0]!;
      for (const city of sizes) {
        await writeEvents(store, table, city, inCity, (i) => event(`evt_c${i}`, i, false, 0));
        await writeEvents(store, table, 0, city, (i) => event(`evt_c${i}`, i, true, city));
        inCity = city;
        // The million's write time (it is most of the run), on stderr so the tables stay as they are.
        if (city === sizes[0] && catalogue > DYNALITE_MAX) console.error(`discovery: ${catalogue.toLocaleString('en-US')} events written to ${store.name} in ${((Date.now() - began) / 1000).toFixed(0)} s`);
        rows.push(...(await measure(store, table, catalogue, city)));
      }
    } finally {
      client.destroy();
      await store.close();
    }
  }
  return rows;
}

/** The first page of the city's first 92 days, and a page after a cursor half way through its events. */
async function measure(store: BenchStore, table: string, catalogue: number, city: number): Promise<string[]> {
  const reader = createDocumentClient({ endpoint: store.endpoint, requestHandler: store.requestHandler });
  try {
    const meter = readMeter(reader);
    const search = new DynamoRepository(reader, table);
    const place = { country: 'PT', city: cityKey('Lisbon')! };
    const from = '2026-12-01';
    const to = '2027-03-02';
    meter.reset();
    const first = await searchPage({ search, keyring }, { place, from, to, stated: { from, to }, limit: 100 });
    const out = [row(catalogue, city, 'first', first.events.length, meter.m)];
    // Half way: the cursor a consumer holds after the city's middle event, in a window starting that day.
    const middle = event(`evt_c${Math.floor(city / 2)}`, Math.floor(city / 2), true, city);
    const after = placeSortKey(localDateTime(Date.parse(middle.start_date), middle.timezone), middle.id);
    const window = { from: after.slice(0, 10), to: addDays(after.slice(0, 10), 92) };
    const cursor = parseSearchCursor(await sealSearchCursor({ place, ...window, after }, keyring))!;
    meter.reset();
    const deep = await searchPage({ search, keyring }, { place, ...window, stated: {}, limit: 100, cursor });
    out.push(row(catalogue, city, 'half way (after a cursor)', deep.events.length, meter.m));
    return out;
  } finally {
    reader.destroy();
  }
}

function row(catalogue: number, city: number, page: string, returned: number, m: { calls: number; rcu: number; spans: CallSpan[]; bytes: number }): string {
  return `| ${catalogue.toLocaleString('en-US')} | ${city.toLocaleString('en-US')} | ${page} | ${returned} | ${m.calls} | ${roundTrips(m.spans)} | ${m.rcu.toFixed(1)} | ${m.bytes.toLocaleString('en-US')} |`;
}

// Run on its own (`npx tsx scripts/bench-discovery.ts`): the discovery rows only, e.g. the million's, without the rest of the bench.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = Date.now();
  console.log((await discoveryFigures()).join('\n'));
  console.error(`discovery: ${((Date.now() - began) / 1000).toFixed(0)} s in all`);
}
