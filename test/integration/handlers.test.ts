/**
 * Handlers invoked directly with API Gateway proxy events, over dynalite with
 * the real table: what the local server's emulation does not cover on its own
 * (internal failures, the authorizer's API Gateway contract).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Context } from 'aws-lambda';
import { fixedClock } from '../../lambdas/core/clock.js';
import { configSchema } from '../../lambdas/core/config.js';
import type { EventReader } from '../../lambdas/core/ports.js';
import { createDeps, type Deps } from '../../lambdas/http/deps.js';
import { build as buildAuthorizer } from '../../lambdas/handlers/authorizer.js';
import { build as buildGetEvent } from '../../lambdas/handlers/get-event.js';
import { build as buildUpcoming } from '../../lambdas/handlers/get-user-upcoming-events.js';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { KEYS, NOW, demoDataset } from '../support/fixtures.js';
import { authorizerEvent, proxyEvent } from '../support/events.js';
import { startTestStore, type TestStore } from '../support/store.js';
import { recordingLogger } from '../support/telemetry.js';
import { testKeyring } from '../support/feed-keys.js';

let store: TestStore;
let deps: Deps;
const logger = recordingLogger();
const context = { awsRequestId: 'req-1' } as Context;


beforeAll(async () => {
  store = await startTestStore(demoDataset());
  const config = configSchema.parse({ tableName: store.tableName, serviceName: 'events', siteUrl: 'https://example.org', userEventsVariant: 'typed' });
  deps = createDeps(config, { reader: store.repository, keys: store.repository, feeds: store.repository, cursorKeys: testKeyring, clock: fixedClock(NOW), logger });
});
afterAll(async () => store?.close());

describe('HTTP handlers', () => {
  it('answer the envelope with content-type application/json', async () => {
    const res = await buildGetEvent(deps)(proxyEvent('/api/public/v1/events/{eventId}', { eventId: 'evt_jazz01' }), context);
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ 'content-type': 'application/json' });
    expect(JSON.parse(res.body)).toMatchObject({ success: true, data: { id: 'evt_jazz01' } });
  });

  it('say the daily quota and its reset on every Public answer, errors included, and never a Remaining they cannot know (issue 19)', async () => {
    const reset = String(Date.parse('2026-11-22T00:00:00Z') / 1000);
    const answers = [
      await buildGetEvent(deps)(proxyEvent('/api/public/v1/events/{eventId}', { eventId: 'evt_jazz01' }), context),
      await buildGetEvent(deps)(proxyEvent('/api/public/v1/events/{eventId}', { eventId: 'evt_nope' }), context),
      await buildUpcoming(deps)(proxyEvent('/api/public/v1/users/{username}/upcoming-events', { username: 'alice' }, { limit: 'many' }), context),
    ];
    expect(answers.map((r) => r.statusCode)).toEqual([200, 404, 400]);
    for (const res of answers) {
      expect(res.headers).toMatchObject({ 'X-RateLimit-Limit': '1000', 'X-RateLimit-Reset': reset });
      expect(Object.keys(res.headers ?? {}).map((h) => h.toLowerCase())).not.toContain('x-ratelimit-remaining');
    }
  });

  it('turn an unexpected failure into a generic 500 with nothing internal in the body, and log it', async () => {
    const broken: EventReader = {
      ...store.repository,
      getPublicEvent: () => Promise.reject(new Error('ResourceNotFoundException: table test-table, query gsi1pk = EVENT#evt_jazz01')),
      listUserEvents: () => Promise.reject(new TypeError('boom')),
      countUserEvents: () => Promise.reject(new TypeError('boom')),
      pageUserEvents: () => Promise.reject(new TypeError('boom')),
      getGuests: () => Promise.reject(new Error('x')),
      getGuestCounts: () => Promise.reject(new Error('x')),
      userExists: () => Promise.reject(new Error('x')),
    };
    const brokenDeps = { ...deps, reader: broken };
    for (const res of [
      await buildGetEvent(brokenDeps)(proxyEvent('/api/public/v1/events/{eventId}', { eventId: 'evt_jazz01' }), context),
      await buildUpcoming(brokenDeps)(proxyEvent('/api/public/v1/users/{username}/upcoming-events', { username: 'alice' }), context),
    ]) {
      expect(res.statusCode).toBe(500);
      expect(JSON.parse(res.body)).toEqual({ success: false, message: 'Internal server error.' });
      expect(res.body).not.toMatch(/test-table|gsi1pk|boom|stack/i);
    }
    expect(logger.entries.some((l) => String(l.errorMessage).includes('ResourceNotFoundException') && l.requestId === 'req-1')).toBe(true);
  });

  it('validate before touching the store', async () => {
    store.resetCalls();
    const res = await buildUpcoming(deps)(proxyEvent('/api/public/v1/users/{username}/upcoming-events', { username: 'alice' }, { limit: '0' }), context);
    expect(res.statusCode).toBe(400);
    expect(store.calls).toEqual([]);
  });
});

describe('authorizer (API Gateway REQUEST authorizer contract)', () => {
  const authorizer = () => buildAuthorizer(deps);

  it('allows a valid key for the invoked method ARN, with non-secret context', async () => {
    const event = authorizerEvent({ headers: { 'X-Events-Api-Key': KEYS.both } });
    const result = await authorizer()(event, context);
    expect(result.policyDocument.Statement).toEqual([{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }]);
    // NOW is 2026-11-21T12:00Z: the quota resets at the next UTC midnight, 12 hours on.
    expect(result.context).toEqual({
      keyId: expect.stringMatching(/^key_[0-9a-f]{20}$/),
      userId: 'usr_alice',
      scopes: 'events:read guests:read',
      rateLimitReset: Date.parse('2026-11-22T00:00:00Z') / 1000,
      retryAfter: 12 * 3600,
    });
    expect(result).not.toHaveProperty('usageIdentifierKey');
    expect(JSON.stringify(result)).not.toContain(KEYS.both);
  });

  it('denies (403) a key without the scope of the resource', async () => {
    const result = await authorizer()(authorizerEvent({ headers: { 'x-events-api-key': KEYS.eventsOnly }, resource: '/api/public/v1/events/{eventId}/guests' }), context);
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
  });

  it.each<Record<string, string>>([{}, { 'x-events-api-key': KEYS.revoked }, { authorization: 'Bearer pk_unknown_0123456789abcdefghijklmnop' }])(
    'throws Unauthorized (401) for %j',
    async (headers) => {
      await expect(authorizer()(authorizerEvent({ headers }), context)).rejects.toThrow('Unauthorized');
    },
  );

  it('returns the usage identifier of a provisioned key as usageIdentifierKey, for the usage plan', async () => {
    const manager = new KeyManager(store.client, store.tableName, {
      planKeys: {
        create: async (_keyId, value) => {
          usageIdentifier = value;
          return 'apikey1';
        },
        attach: async () => undefined,
        remove: async () => undefined,
      },
    });
    let usageIdentifier = '';
    const { key } = await manager.create({ userId: 'usr_frank', name: 'aws' });
    const result = await authorizer()(authorizerEvent({ headers: { 'x-events-api-key': key } }), context);
    expect(usageIdentifier).toMatch(/^ui_[0-9A-Za-z]{32}$/);
    expect(result).toMatchObject({ usageIdentifierKey: usageIdentifier, policyDocument: { Statement: [{ Effect: 'Allow' }] } });
  });

  it('denies a resource that is not in the route table', async () => {
    const result = await authorizer()(authorizerEvent({ headers: { 'x-events-api-key': KEYS.both }, resource: '/api/public/v1/admin' }), context);
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
  });
});
