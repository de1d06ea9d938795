/**
 * A host with 10,000 public events beside one with 100, in one table.
 * Paginated lists: the same page costs the big host no more read capacity
 * than the small one (the ratio goal is 1.5; the reads are the page and the
 * list's tally, never the list). Unpaginated lists (Variant A,
 * /profile-events): a window too large for one response is a 400 asking for
 * a narrower one, read with a bounded number of items; a narrow window
 * answers.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'aws-lambda';
import { fixedClock } from '../../lambdas/core/clock.js';
import { configSchema } from '../../lambdas/core/config.js';
import { UNPAGINATED_MAX_EVENTS } from '../../lambdas/core/list-bounds.js';
import { createDeps, type Deps, type HttpHandler } from '../../lambdas/http/deps.js';
import { EXAMPLES } from '../../lambdas/openapi/examples.generated.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { build as buildUserEvents } from '../../lambdas/handlers/get-user-events.js';
import { build as buildProfileEvents } from '../../lambdas/handlers/get-user-profile-events.js';
import { build as buildUpcoming } from '../../lambdas/handlers/get-user-upcoming-events.js';
import { build as buildPast } from '../../lambdas/handlers/get-user-past-events.js';
import { bigHostDataset } from '../../scripts/big-host.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { proxyEvent } from '../support/events.js';
import { testKeyring } from '../support/feed-keys.js';

const NOW = '2026-11-21T12:00:00.000Z';
const EVENTS = 10_000;
let store: TestStore;
let deps: Deps;
let typedDeps: Deps;
/** Read capacity consumed since the last reset (ReturnConsumedCapacity on every call). */
let capacity = 0;
const context = { awsRequestId: 'req-1' } as Context;

const get = (path: string, username: string, query: Record<string, string> | null = null) => proxyEvent(path, { username }, query);

beforeAll(async () => {
  const big = bigHostDataset({ username: 'venue', events: EVENTS, now: NOW });
  const small = bigHostDataset({ username: 'cafe', events: 100, now: NOW });
  // In-process, loaded straight into dynalite (startTestStore): the reads below still go through the SDK's whole stack.
  store = await startTestStore({ users: [...big.users, ...small.users], events: [...big.events, ...small.events], rsvps: [] }, undefined, { inProcess: true });
  store.client.middlewareStack.add(
    (next) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      capacity += (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
      return out;
    },
    { step: 'serialize', name: 'capacity', priority: 'high' },
  );
  const config = configSchema.parse({ tableName: store.tableName, serviceName: 'events', siteUrl: 'https://example.org', userEventsVariant: 'dated' });
  deps = createDeps(config, { reader: store.repository, keys: store.repository, feeds: store.repository, cursorKeys: testKeyring, clock: fixedClock(NOW), logger: silentLogger });
  typedDeps = createDeps({ ...config, userEventsVariant: 'typed' }, { reader: store.repository, keys: store.repository, feeds: store.repository, cursorKeys: testKeyring, clock: fixedClock(NOW), logger: silentLogger });
  // 10,100 events through the loader (items, member lists, feed appends, about 130,000 writes): most of the file's time.
}, 240_000);
afterAll(async () => store?.close());

describe('paginated lists of a 10,000-event host', () => {
  const routes: [string, () => HttpHandler, string, Record<string, string>][] = [
    ['upcoming-events', () => buildUpcoming(typedDeps), '/api/public/v1/users/{username}/upcoming-events', {}],
    ['past-events', () => buildPast(typedDeps), '/api/public/v1/users/{username}/past-events', {}],
    ['events?type=upcoming', () => buildUserEvents(typedDeps), '/api/public/v1/users/{username}/events', { type: 'upcoming' }],
    ['events?type=past', () => buildUserEvents(typedDeps), '/api/public/v1/users/{username}/events', { type: 'past' }],
    ['events?type=profile', () => buildUserEvents(typedDeps), '/api/public/v1/users/{username}/events', { type: 'profile' }],
    ['events (no type)', () => buildUserEvents(typedDeps), '/api/public/v1/users/{username}/events', {}],
  ];

  it.each(routes)('%s: a page of 10 (at offset 0 and 40) costs what it costs a 100-event host, with the exact total', async (_name, handler, path, query) => {
    for (const offset of ['0', '40']) {
      const cost = async (username: string, events: number) => {
        capacity = 0;
        const res = await handler()(get(path, username, { ...query, limit: '10', offset }), context);
        expect(res.statusCode).toBe(200);
        // The dedicated routes put pagination beside data, Variant B inside it (PRODUCT P5).
        type Paged = { events: unknown[]; pagination: { total: number } };
        const body = JSON.parse(res.body) as { data: unknown[] | Paged; pagination?: { total: number } };
        const page = Array.isArray(body.data) ? { events: body.data, pagination: body.pagination! } : body.data;
        expect(page.events).toHaveLength(10);
        // Half the host's events are past, half upcoming (scripts/big-host.ts).
        const timeline = /upcoming|past/.test(path) || (query.type !== undefined && query.type !== 'profile');
        expect(page.pagination.total).toBe(timeline ? events / 2 : events);
        return capacity;
      };
      const small = await cost('cafe', 100);
      const big = await cost('venue', EVENTS);
      expect(big / small).toBeLessThanOrEqual(1.5);
    }
  });
});

describe('unpaginated lists of a 10,000-event host', () => {
  it.each([
    ['Variant A', () => buildUserEvents(deps), '/api/public/v1/users/{username}/events'],
    ['profile-events', () => buildProfileEvents(deps), '/api/public/v1/users/{username}/profile-events'],
  ])('%s: the whole history is a 400 asking for a narrower window, after a bounded read', async (_name, handler, path) => {
    store.resetCalls();
    const res = await handler()(get(path, 'venue'), context);
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      success: false,
      message: `This date window holds more than ${UNPAGINATED_MAX_EVENTS} events (or more than 4 MB of them): narrow it with since and to`,
    });
    // The OpenAPI documents' example of this 400 is this very answer.
    expect(JSON.parse(res.body)).toEqual(EXAMPLES.windowTooLarge);
    // UNPAGINATED_MAX_EVENTS + 1 items at ~1 KB: one or two 1 MB pages, never the 10,000; a profile list's entries
    // then read the events they point at, at most 100 a BatchGetItem.
    const resolve = path.endsWith('profile-events') ? Math.ceil((UNPAGINATED_MAX_EVENTS + 1) / 100) : 0;
    expect(store.calls.length).toBeLessThanOrEqual(2 + resolve);
  });

  it.each([
    ['Variant A', () => buildUserEvents(deps), '/api/public/v1/users/{username}/events'],
    ['profile-events', () => buildProfileEvents(deps), '/api/public/v1/users/{username}/profile-events'],
  ])('%s: a window of a month answers in full, well under 6 MB', async (_name, handler, path) => {
    const res = await handler()(get(path, 'venue', { since: '2026-11-01', to: '2026-11-30' }), context);
    expect(res.statusCode).toBe(200);
    const body = JSON.parse(res.body) as { data: unknown[] };
    expect(body.data).toHaveLength(60);
    expect(Buffer.byteLength(res.body)).toBeLessThan(6 * 1024 * 1024);
  });
});
