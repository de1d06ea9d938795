/**
 * Embed handlers with a clock the test moves: computed status, and caching
 * that never outlives a status change.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { configSchema } from '../../lambdas/core/config.js';
import { createDeps, type Deps } from '../../lambdas/http/deps.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { build as buildEvent } from '../../lambdas/handlers/embed-get-event.js';
import { build as buildUserEvents } from '../../lambdas/handlers/embed-get-user-events.js';
import { demoDataset } from '../support/fixtures.js';
import { startTestStore, type TestStore } from '../support/store.js';

let store: TestStore;
let now = new Date('2026-11-21T12:00:00.000Z');
const deps = (maxAge = 60): Deps =>
  createDeps(configSchema.parse({ tableName: store.tableName, serviceName: 'events', siteUrl: 'https://s.example', userEventsVariant: 'typed', embedCacheMaxAgeSeconds: maxAge }), {
    reader: store.repository,
    keys: store.repository,
    clock: () => now,
    logger: silentLogger,
  });
const ctx = { awsRequestId: 'r' } as Context;
const event = (pathParameters: Record<string, string>, headers: Record<string, string> = {}, query: Record<string, string> | null = null) =>
  ({ pathParameters, headers, queryStringParameters: query, resource: '', httpMethod: 'GET' }) as unknown as APIGatewayProxyEvent;

beforeAll(async () => {
  store = await startTestStore(demoDataset());
});
afterAll(async () => store?.close());

describe('status follows the clock', () => {
  it.each([
    ['2027-01-15T00:59:59.999Z', 'upcoming'],
    ['2027-01-15T01:00:00.000Z', 'ongoing'],
    ['2027-01-15T04:00:00.000Z', 'ongoing'],
    ['2027-01-15T04:00:00.001Z', 'past'],
  ])('evt_jazz01 at %s is %s', async (at, status) => {
    now = new Date(at);
    const res = await buildEvent(deps())(event({ eventId: 'evt_jazz01' }), ctx);
    expect(JSON.parse(res.body).data.status).toBe(status);
  });

  it('an event without an end date is ongoing until the end of its local start day', async () => {
    // evt_series_finale: 2028-06-01T18:00Z, Europe/Amsterdam (CEST, UTC+2): the day ends at 21:59:59.999Z.
    now = new Date('2028-06-01T21:59:59.999Z');
    expect(JSON.parse((await buildEvent(deps())(event({ eventId: 'evt_series_finale' }), ctx)).body).data.status).toBe('ongoing');
    now = new Date('2028-06-01T22:00:00.000Z');
    expect(JSON.parse((await buildEvent(deps())(event({ eventId: 'evt_series_finale' }), ctx)).body).data.status).toBe('past');
  });
});

describe('caching never outlives a status change', () => {
  it('cuts max-age short before the next status change in the response', async () => {
    now = new Date('2027-01-15T00:59:30.000Z'); // 30 s before evt_jazz01 starts
    const res = await buildEvent(deps())(event({ eventId: 'evt_jazz01' }), ctx);
    expect(res.headers?.['cache-control']).toBe('public, max-age=30');
    const list = await buildUserEvents(deps())(event({ username: 'alice' }), ctx);
    expect(list.headers?.['cache-control']).toBe('public, max-age=30');
  });

  it('uses the configured max-age when no change is near, and for past-only answers', async () => {
    now = new Date('2026-11-21T12:00:00.000Z');
    expect((await buildEvent(deps(45))(event({ eventId: 'evt_jazz01' }), ctx)).headers?.['cache-control']).toBe('public, max-age=45');
    expect((await buildEvent(deps(45))(event({ eventId: 'evt_meetup02' }), ctx)).headers?.['cache-control']).toBe('public, max-age=45');
  });

  it('changes the ETag when a status changes, so a revalidation gets the new body', async () => {
    now = new Date('2027-01-15T00:59:59.000Z');
    const before = await buildEvent(deps())(event({ eventId: 'evt_jazz01' }), ctx);
    now = new Date('2027-01-15T01:00:00.000Z');
    const after = await buildEvent(deps())(event({ eventId: 'evt_jazz01' }, { 'If-None-Match': String(before.headers?.etag) }), ctx);
    expect(after.statusCode).toBe(200);
    expect(after.headers?.etag).not.toBe(before.headers?.etag);
    expect(JSON.parse(after.body).data.status).toBe('ongoing');
  });
});

describe('reads', () => {
  it('reads only the page for a user list (index order is the Embed order)', async () => {
    now = new Date('2026-11-21T12:00:00.000Z');
    store.resetCalls();
    const res = await buildUserEvents(deps())(event({ username: 'eve-series' }, {}, { limit: '3' }), ctx);
    expect(JSON.parse(res.body).data).toHaveLength(3);
    expect(store.calls).toEqual(['QueryCommand']);
  });
});
