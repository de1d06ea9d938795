/**
 * The served documents and the old prefix over real HTTP (PRODUCT P15): both
 * documents without a key, as OpenAPI 3.1 covering every route of the table;
 * a 308 for /api/ext/v1/… whatever the key and the method; other unknown
 * prefixes stay 404; the examples in the documents are today's real answers.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EXAMPLES } from '../../lambdas/openapi/examples.generated.js';
import { routes, type RouteDefinition } from '../../lambdas/routes.js';
import { collectExamples } from '../../local/openapi-examples.js';
import { KEYS } from '../support/fixtures.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const table: readonly RouteDefinition[] = routes;

describe('GET …/openapi.json', () => {
  it.each(['public', 'embed'] as const)('%s: the OpenAPI 3.1 document itself, no key, no envelope, every route', async (surface) => {
    const base = () => (surface === 'public' ? server.publicBaseUrl : server.embedBaseUrl);
    server.calls.splice(0);
    const reply = await get<{ openapi: string; paths: Record<string, { get?: { operationId: string } }>; success?: unknown }>(`${base()}/openapi.json`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.body.openapi).toBe('3.1.0');
    expect(reply.body).not.toHaveProperty('success');
    const operations = Object.values(reply.body.paths).flatMap((p) => (p.get ? [p.get.operationId] : []));
    expect(operations.sort()).toEqual(table.filter((r) => r.surface === surface).map((r) => r.id).sort());
    expect(server.calls).toEqual([]);
    if (surface === 'public') expect(reply.headers.get('access-control-allow-origin')).toBeNull();
    else expect(reply.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('is answered with a revoked or a bogus key too (the key is not looked at)', async () => {
    for (const key of [KEYS.revoked, 'not-a-key']) {
      expect((await get(`${server.publicBaseUrl}/openapi.json`, { 'x-events-api-key': key })).status).toBe(200);
    }
  });

  it('follows the server settings: key header name and the users/{username}/events variant', async () => {
    const custom = await startTestServer({ serviceName: 'gatherly', userEventsVariant: 'dated' });
    try {
      const doc = (await get<{ components: { securitySchemes: { ApiKeyHeader: { name: string } } }; paths: Record<string, { get: { parameters: { name: string }[] } }> }>(`${custom.publicBaseUrl}/openapi.json`)).body;
      expect(doc.components.securitySchemes.ApiKeyHeader.name).toBe('x-gatherly-api-key');
      expect(doc.paths['/users/{username}/events']!.get.parameters.map((p) => p.name)).not.toContain('type');
      // And the dated variant's answers match that document (get() checks every reply).
      expect((await get(`${custom.publicBaseUrl}/users/alice/events`, { 'x-gatherly-api-key': KEYS.both })).status).toBe(200);
    } finally {
      await custom.close();
    }
  });
});

describe('the old prefix /api/ext/v1', () => {
  it.each([
    ['with a key', { 'x-events-api-key': KEYS.both }],
    ['without a key', {}],
    ['with a revoked key', { authorization: `Bearer ${KEYS.revoked}` }],
  ])('answers 308 to /api/public/v1, path and query kept, %s', async (_, headers) => {
    const reply = await fetch(`${server.url}/api/ext/v1/events/evt_jazz01/guests?status=all&limit=2`, { headers, redirect: 'manual' });
    expect(reply.status).toBe(308);
    expect(reply.headers.get('location')).toBe('/api/public/v1/events/evt_jazz01/guests?status=all&limit=2');
  });

  it('keeps the method: a POST is redirected as a POST (308), and lands on the 404 of the Public API', async () => {
    const reply = await fetch(`${server.url}/api/ext/v1/users/alice/events`, { method: 'POST', redirect: 'manual' });
    expect(reply.status).toBe(308);
    expect(reply.headers.get('location')).toBe('/api/public/v1/users/alice/events');
  });

  it('leads a client that follows redirects to the same answer', async () => {
    const followed = await fetch(`${server.url}/api/ext/v1/events/evt_jazz01`, { headers: { 'x-events-api-key': KEYS.both } });
    expect(followed.status).toBe(200);
    expect(((await followed.json()) as { data: { id: string } }).data.id).toBe('evt_jazz01');
  });

  it.each(['/api/ext/v2/events/evt_jazz01', '/api/ext/v10/events/evt_jazz01', '/api/extra/v1/events', '/api/v1/events/evt_jazz01'])('leaves %s a 404', async (path) => {
    const reply = await fetch(`${server.url}${path}`, { redirect: 'manual' });
    expect(reply.status).toBe(404);
    expect(await reply.json()).toEqual({ success: false, message: 'Resource not found.' });
  });
});

describe('the documented examples', () => {
  it('are the answers the server gives today (npm run openapi:examples)', async () => {
    expect(await collectExamples()).toEqual(EXAMPLES);
  }, 60_000);
});
