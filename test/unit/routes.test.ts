import { existsSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import type { HandlerModule } from '../../lambdas/http/deps.js';
import { AUTHORIZER_HANDLER, OPENAPI_HANDLER, resourcePath, routeForResource, routes, type RouteDefinition } from '../../lambdas/routes.js';

const handlerFile = (name: string) => new URL(`../../lambdas/handlers/${name}.ts`, import.meta.url).pathname;

describe('the route table', () => {
  it('has unique ids and unique method + path pairs', () => {
    expect(new Set(routes.map((r) => r.id)).size).toBe(routes.length);
    expect(new Set(routes.map((r) => `${r.method} ${resourcePath(r)}`)).size).toBe(routes.length);
  });

  it.each([...new Set(routes.map((r) => r.handler)), AUTHORIZER_HANDLER])('lambdas/handlers/%s.ts exports build() and handler', async (name) => {
    expect(existsSync(handlerFile(name))).toBe(true);
    const mod = (await import(`../../lambdas/handlers/${name}.js`)) as HandlerModule;
    expect(typeof mod.build).toBe('function');
    expect(typeof mod.handler).toBe('function');
  });

  it("gives every keyed route exactly one scope, guests:read only to the guest list, and keys only on the Public API", () => {
    const table: readonly RouteDefinition[] = routes;
    for (const r of table.filter((x) => x.auth === 'key')) {
      expect(r.surface).toBe('public');
      expect(r.scope).toBe(r.path.endsWith('/guests') ? 'guests:read' : 'events:read');
    }
  });

  it('gives open routes no scope: the Embed API and the OpenAPI documents (PRODUCT P15)', () => {
    const table: readonly RouteDefinition[] = routes;
    for (const r of table.filter((x) => x.auth === 'none')) expect(r).not.toHaveProperty('scope');
    expect(table.filter((r) => r.auth === 'none' && r.surface === 'public').map((r) => r.path)).toEqual(['/openapi.json']);
    expect(table.filter((r) => r.surface === 'embed').every((r) => r.auth === 'none')).toBe(true);
    expect(table.filter((r) => r.handler === OPENAPI_HANDLER).map((r) => `${r.surface} ${r.path}`).sort()).toEqual(['embed /openapi.json', 'public /openapi.json']);
  });

  it('serves only GET', () => {
    expect(routes.every((r) => r.method === 'GET')).toBe(true);
  });

  it('finds a route by its API Gateway resource', () => {
    expect(routeForResource('/api/public/v1/events/{eventId}/guests', 'GET')?.id).toBe('getEventGuests');
    expect(routeForResource('/api/public/v1/events/{eventId}/guests', 'POST')).toBeUndefined();
  });
});
