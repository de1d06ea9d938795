/**
 * Review of discovery (PRODUCT P17), country mapping: "A country is an ISO
 * 3166-1 alpha-2 code (any case) or its English name; the dataset's country
 * values are mapped the same way by a well-kept library, and a value it does
 * not know matches by its folded spelling."
 *
 * Three ways the two sides stop meeting (lambdas/core/place.ts countryKey,
 * lambdas/core/search-params.ts countryParam):
 * 1. Not "the same way" for two letters: the dataset's "UK" is GB (the
 *    library's English alias), but a query's "UK" is refused 400 "Unknown
 *    country code" before the names are consulted; a dataset value of two
 *    letters the library does not know ("EL", Greece's EU code) is kept as
 *    `~el`, and no query can reach it: the query "EL" is 400 too.
 * 2. English names the library's English list lacks, so a query by the
 *    country's English name misses every event stored by code: "Syria",
 *    "Laos", "Moldova", "Vatican", and ISO 3166's own English short names
 *    "Viet Nam" and "Cabo Verde".
 * 3. The dataset's country in its own language ("Deutschland", "Brasil",
 *    "España"): the library knows these (its de/pt/es locales map them to
 *    DE/BR/ES), but place.ts registers English alone, so they become
 *    `~deutschland` … and `country=DE` misses them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { configSchema } from '../../lambdas/core/config.js';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { createDeps, type Deps } from '../../lambdas/http/deps.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { build as buildPublic } from '../../lambdas/handlers/search-events.js';
import { testKeyring } from '../support/feed-keys.js';
import { proxyEvent } from '../support/events.js';
import { demoDataset } from '../support/fixtures.js';
import { startTestStore, type TestStore } from '../support/store.js';

const at = (id: string, city: string, country: string): SourceEvent => ({
  id,
  creator_id: 'usr_carol',
  title: `In ${city}`,
  description: null,
  cover: null,
  location: { name: `Hall of ${city}`, city, country },
  start_date: '2027-03-10T18:00:00.000Z',
  end_date: null,
  timezone: 'UTC',
  status: 'published',
  visibility: 'public',
  cost: null,
  created_at: '2026-01-01T00:00:00.000Z',
});

const EVENTS: SourceEvent[] = [
  at('evt_london', 'London', 'UK'),
  at('evt_athens', 'Athens', 'EL'),
  at('evt_damascus', 'Damascus', 'SY'),
  at('evt_vientiane', 'Vientiane', 'LA'),
  at('evt_chisinau', 'Chisinau', 'MD'),
  at('evt_vatican', 'Vatican City', 'VA'),
  at('evt_hanoi', 'Hanoi', 'VN'),
  at('evt_praia', 'Praia', 'CV'),
  at('evt_berlin', 'Berlin', 'Deutschland'),
  at('evt_rio', 'Rio de Janeiro', 'Brasil'),
  at('evt_madrid', 'Madrid', 'España'),
];

function dataset(): Dataset {
  const demo = demoDataset();
  return { ...demo, events: [...demo.events, ...EVENTS] };
}

let store: TestStore;
const deps = (): Deps =>
  createDeps(configSchema.parse({ tableName: store.tableName, serviceName: 'events', siteUrl: 'https://s.example', userEventsVariant: 'typed' }), {
    reader: store.repository,
    search: store.repository,
    keys: store.repository,
    cursorKeys: testKeyring,
    clock: () => new Date('2027-03-01T12:00:00.000Z'),
    logger: silentLogger,
  });
const search = async (country: string) => {
  const res = await buildPublic(deps())(proxyEvent('/events', {}, { country, from: '2027-03-01', to: '2027-03-31' }) as APIGatewayProxyEvent, { awsRequestId: 'r' } as Context);
  const body = JSON.parse(res.body) as { data?: { events: { id: string }[] }; errors?: unknown };
  return { status: res.statusCode, ids: body.data?.events.map((e) => e.id), errors: body.errors };
};

beforeAll(async () => {
  store = await startTestStore(dataset());
});
afterAll(async () => store?.close());

describe('1. two letters are mapped one way in the data and another in a query', () => {
  it.each([
    ['UK', 'evt_london', 'the library maps the dataset\'s "UK" to GB'],
    ['EL', 'evt_athens', 'a value the library does not know matches by its folded spelling'],
  ])('country=%s finds %s (%s)', async (country, id) => {
    expect(await search(country)).toEqual({ status: 200, ids: [id], errors: undefined });
  });
});

describe("2. a query by a country's English name finds the events stored by its code", () => {
  it.each([
    ['Syria', 'evt_damascus'],
    ['Laos', 'evt_vientiane'],
    ['Moldova', 'evt_chisinau'],
    ['Vatican', 'evt_vatican'],
    ['Viet Nam', 'evt_hanoi'],
    ['Cabo Verde', 'evt_praia'],
  ])('country=%s finds %s', async (country, id) => {
    expect(await search(country)).toEqual({ status: 200, ids: [id], errors: undefined });
  });
});

describe("3. the dataset's country in its own language is the country its code names", () => {
  // The demo dataset's own Berlin workshop (country "DE", 2027-03-10 16:00 UTC) is in the window too, before evt_berlin.
  it.each([
    ['DE', ['evt_workshop05', 'evt_berlin']],
    ['BR', ['evt_rio']],
    ['ES', ['evt_madrid']],
  ])('country=%s finds %s', async (country, ids) => {
    expect(await search(country)).toEqual({ status: 200, ids, errors: undefined });
  });
});
