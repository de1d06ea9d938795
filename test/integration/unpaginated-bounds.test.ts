/**
 * The unpaginated lists (Variant A, /profile-events) over a host with 10,000
 * public events: a window too large for one response is a 400 asking for a
 * narrower one, read with a bounded number of items; a narrow window answers.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'aws-lambda';
import { fixedClock } from '../../lambdas/core/clock.js';
import { configSchema } from '../../lambdas/core/config.js';
import { UNPAGINATED_MAX_EVENTS } from '../../lambdas/core/queries.js';
import { createDeps, type Deps } from '../../lambdas/http/deps.js';
import { EXAMPLES } from '../../lambdas/openapi/examples.generated.js';
import { silentLogger } from '../../lambdas/http/logger.js';
import { build as buildUserEvents } from '../../lambdas/handlers/get-user-events.js';
import { build as buildProfileEvents } from '../../lambdas/handlers/get-user-profile-events.js';
import { bigHostDataset } from '../../scripts/big-host.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { proxyEvent } from '../support/events.js';

const NOW = '2026-11-21T12:00:00.000Z';
const EVENTS = 10_000;
let store: TestStore;
let deps: Deps;
const context = { awsRequestId: 'req-1' } as Context;

const get = (path: string, username: string, query: Record<string, string> | null = null) => proxyEvent(path, { username }, query);

beforeAll(async () => {
  store = await startTestStore(bigHostDataset({ username: 'venue', events: EVENTS, now: NOW }));
  const config = configSchema.parse({ tableName: store.tableName, serviceName: 'events', siteUrl: 'https://example.org', userEventsVariant: 'dated' });
  deps = createDeps(config, { reader: store.repository, keys: store.repository, clock: fixedClock(NOW), logger: silentLogger });
}, 120_000);
afterAll(async () => store?.close());

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
    // UNPAGINATED_MAX_EVENTS + 1 items at ~1 KB: one or two 1 MB pages, never the 10,000.
    expect(store.calls.length).toBeLessThanOrEqual(2);
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
