/**
 * Discovery's handlers (PRODUCT P17) on both stores (this file is a
 * change-path file: jest.config.js), over the places dataset loaded as the
 * loader writes it: the time-zone edges, every pool place paged by cursors
 * of several sizes against the model, the Embed objects, and the round
 * trips and read units of a page (the sizes as DynamoDB bills them).
 * test/e2e/search-events.test.ts asks the same over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { configSchema } from '../../lambdas/core/config.js';
import { createDeps, type Deps } from '../../lambdas/http/deps.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { build as buildPublic } from '../../lambdas/handlers/search-events.js';
import { build as buildEmbed } from '../../lambdas/handlers/embed-search-events.js';
import { testKeyring } from '../support/feed-keys.js';
import { proxyEvent } from '../support/events.js';
import { expectedIds, placesDataset, QUERY_POOL } from '../support/places.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { PLACE_SHARDS } from '../../lambdas/store/table/place-keys.js';

const dataset = placesDataset();
let store: TestStore;
const deps = (): Deps =>
  createDeps(configSchema.parse({ tableName: store.tableName, serviceName: 'events', siteUrl: 'https://s.example', userEventsVariant: 'typed' }), {
    reader: store.repository,
    search: store.repository,
    keys: store.repository,
    cursorKeys: testKeyring,
    clock: () => new Date('2026-11-21T12:00:00.000Z'),
    logger: silentLogger,
  });
const ctx = { awsRequestId: 'r' } as Context;
const call = async (build: typeof buildPublic, query: Record<string, string>) => {
  const res = await build(deps())(proxyEvent('/events', {}, query) as APIGatewayProxyEvent, ctx);
  return { status: res.statusCode, body: JSON.parse(res.body) as { data: { events: { id: string }[]; pagination: { has_more: boolean; next_cursor?: string } }; errors?: unknown[] } };
};
const ids = async (query: Record<string, string>) => (await call(buildPublic, query)).body.data.events.map((e) => e.id);

beforeAll(async () => {
  store = await startTestStore(dataset);
});
afterAll(async () => store?.close());

describe('time-zone edges', () => {
  it.each([
    ['00:30 local on the autumn DST change day, 23:30Z the day before', { city: 'Lisbon', from: '2026-10-25', to: '2026-10-25' }, ['evt_lis_dst_autumn']],
    ['nothing on its UTC date', { city: 'Lisbon', from: '2026-10-24', to: '2026-10-24' }, []],
    ['00:30 local on the spring DST change day', { country: 'PT', from: '2027-03-28', to: '2027-03-28' }, ['evt_lis_dst_spring']],
    ['Kiritimati (+14) on its own next day', { country: 'KI', from: '2027-01-11', to: '2027-01-11' }, ['evt_kiritimati']],
    ['Kiritimati not on its UTC date', { country: 'KI', from: '2027-01-10', to: '2027-01-10' }, []],
    ['Pago Pago (−11) on its own day before', { city: 'Pago Pago', from: '2027-01-09', to: '2027-01-09' }, ['evt_pago']],
    ['Pago Pago not on its UTC date', { city: 'Pago Pago', from: '2027-01-10', to: '2027-01-10' }, []],
    ["a window's first and last local seconds in, the seconds around out", { city: 'Lisbon', country: 'PT', from: '2027-05-01', to: '2027-05-03' }, ['evt_lis_first', 'evt_lis_last']],
    ['a multi-day event at its start', { city: 'Lisbon', from: '2027-02-01', to: '2027-02-01' }, ['evt_festival']],
    ['a multi-day event not on its later days', { city: 'Lisbon', from: '2027-02-02', to: '2027-02-05' }, []],
    ['ties at one local instant by id, then later', { country: 'BR', from: '2027-02-10', to: '2027-02-10' }, ['evt_sp_a', 'evt_sp_b', 'evt_sp_c']],
  ])('%s', async (_, query, expected) => {
    expect(await ids(query)).toEqual(expected);
    expect((await call(buildEmbed, query)).body.data.events.map((e) => e.id)).toEqual(expected);
  });
});

describe('paging', () => {
  it.each([1, 2, 5])('every pool place, cursors of %i, equal the model', async (limit) => {
    for (const place of QUERY_POOL) {
      for (const [from, to] of [['2026-08-01', '2026-10-31'], ['2027-01-01', '2027-03-31'], ['2027-04-01', '2027-06-30']] as const) {
        const query = { ...(place.city !== undefined ? { city: place.city } : {}), ...(place.country !== undefined ? { country: place.country.replace(/^~/, '') } : {}), from, to, limit: String(limit) };
        const got: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 100; page++) {
          const { status, body } = await call(buildPublic, { ...query, ...(cursor ? { cursor } : {}) });
          expect(status).toBe(200);
          got.push(...body.data.events.map((e) => e.id));
          if (!body.data.pagination.has_more) break;
          cursor = body.data.pagination.next_cursor;
        }
        expect({ query, got }).toEqual({ query, got: expectedIds(dataset, { place, from, to }) });
      }
    }
  });
});

describe('cost of a page', () => {
  it('two round trips after the key: the place shards at once, then one BatchGetItem', async () => {
    store.resetCalls();
    const { body } = await call(buildPublic, { city: 'Amsterdam', from: '2026-08-01', to: '2026-10-31', limit: '5' });
    expect(body.data.events).toHaveLength(5);
    expect(store.calls).toEqual([...Array<string>(PLACE_SHARDS).fill('QueryCommand'), 'BatchGetItemCommand']);
  });

  it('a bad request reaches no store', async () => {
    store.resetCalls();
    expect((await call(buildPublic, { from: 'x' })).status).toBe(400);
    expect(store.calls).toEqual([]);
  });
});
