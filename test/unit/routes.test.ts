import { existsSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import type { HandlerModule } from '../../lambdas/http/deps.js';
import { AUTHORIZER_HANDLER, resourcePath, routeForResource, routes } from '../../lambdas/routes.js';

const handlerFile = (name: string) => new URL(`../../lambdas/handlers/${name}.ts`, import.meta.url).pathname;

describe('the route table', () => {
  it('has unique ids and unique method + path pairs', () => {
    expect(new Set(routes.map((r) => r.id)).size).toBe(routes.length);
    expect(new Set(routes.map((r) => `${r.method} ${resourcePath(r)}`)).size).toBe(routes.length);
  });

  it.each([...routes.map((r) => r.handler), AUTHORIZER_HANDLER])('lambdas/handlers/%s.ts exports build() and handler', async (name) => {
    expect(existsSync(handlerFile(name))).toBe(true);
    const mod = (await import(`../../lambdas/handlers/${name}.js`)) as HandlerModule;
    expect(typeof mod.build).toBe('function');
    expect(typeof mod.handler).toBe('function');
  });

  it('gives every Public route exactly one scope, guests:read only to the guest list', () => {
    for (const r of routes.filter((x) => x.surface === 'public')) {
      expect(r.scope).toBe(r.path.endsWith('/guests') ? 'guests:read' : 'events:read');
    }
  });

  it('gives Embed routes no scope (no key on the Embed API)', () => {
    for (const r of routes.filter((x) => x.surface === 'embed')) expect(r).not.toHaveProperty('scope');
  });

  it('serves only GET', () => {
    expect(routes.every((r) => r.method === 'GET')).toBe(true);
  });

  it('finds a route by its API Gateway resource', () => {
    expect(routeForResource('/api/public/v1/events/{eventId}/guests', 'GET')?.id).toBe('getEventGuests');
    expect(routeForResource('/api/public/v1/events/{eventId}/guests', 'POST')).toBeUndefined();
  });
});
