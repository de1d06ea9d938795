/**
 * THE route table. The CDK stack (one Lambda + one method per route), the local
 * server (its API Gateway emulation) and the tests all iterate over it; nobody
 * declares a route anywhere else.
 *
 * It holds metadata only (the handler is named by its file in
 * lambdas/handlers/) so that the authorizer can import it for scopes without
 * bundling every route's code.
 */
import type { Scope } from './core/dataset.js';

export const SURFACES = {
  public: '/api/public/v1',
  embed: '/api/embed/v1',
} as const;

export type Surface = keyof typeof SURFACES;

export interface RouteDefinition {
  /** Stable id: Lambda construct ids and logs use it. */
  readonly id: string;
  readonly surface: Surface;
  readonly method: 'GET';
  /** Relative to the surface's base path, API Gateway `{param}` syntax. */
  readonly path: string;
  /** File name in lambdas/handlers/ (without .ts) exporting `build` and `handler`. */
  readonly handler: string;
  /**
   * Who may call it. `key`: the REQUEST authorizer, `apiKeyRequired` and the
   * usage plan's quota (Public API routes, which then need exactly one scope,
   * PRODUCT P3). `none`: no authorizer, no key, not metered (the Embed API, and
   * the OpenAPI documents of both surfaces, PRODUCT P15).
   */
  readonly auth: 'key' | 'none';
  readonly scope?: Scope;
  /** False for routes that never touch the table (no read grant in AWS). Default true. */
  readonly readsTable?: false;
  /** The DynamoDB read actions the handler uses, granted in AWS; default GetItem and Query. */
  readonly tableReads?: readonly ('GetItem' | 'Query' | 'BatchGetItem')[];
}

export const routes = [
  { id: 'getEvent', surface: 'public', method: 'GET', path: '/events/{eventId}', handler: 'get-event', auth: 'key', scope: 'events:read' },
  { id: 'getEventGuests', surface: 'public', method: 'GET', path: '/events/{eventId}/guests', handler: 'get-event-guests', auth: 'key', scope: 'guests:read' },
  { id: 'getUserEvents', surface: 'public', method: 'GET', path: '/users/{username}/events', handler: 'get-user-events', auth: 'key', scope: 'events:read' },
  { id: 'getUserProfileEvents', surface: 'public', method: 'GET', path: '/users/{username}/profile-events', handler: 'get-user-profile-events', auth: 'key', scope: 'events:read' },
  { id: 'getUserUpcomingEvents', surface: 'public', method: 'GET', path: '/users/{username}/upcoming-events', handler: 'get-user-upcoming-events', auth: 'key', scope: 'events:read' },
  { id: 'getUserPastEvents', surface: 'public', method: 'GET', path: '/users/{username}/past-events', handler: 'get-user-past-events', auth: 'key', scope: 'events:read' },
  // Changes feeds (PRODUCT P16): what changed since a cursor, in the scope of a read route.
  { id: 'getEventChanges', surface: 'public', method: 'GET', path: '/changes/events', handler: 'get-event-changes', auth: 'key', scope: 'events:read', tableReads: ['Query', 'BatchGetItem'] },
  { id: 'getUserEventChanges', surface: 'public', method: 'GET', path: '/changes/users/{username}/events', handler: 'get-user-event-changes', auth: 'key', scope: 'events:read', tableReads: ['Query', 'BatchGetItem'] },
  { id: 'getEventGuestChanges', surface: 'public', method: 'GET', path: '/changes/events/{eventId}/guests', handler: 'get-event-guest-changes', auth: 'key', scope: 'guests:read', tableReads: ['Query', 'BatchGetItem'] },
  { id: 'publicOpenApi', surface: 'public', method: 'GET', path: '/openapi.json', handler: 'openapi', auth: 'none', readsTable: false },
  { id: 'embedGetEvent', surface: 'embed', method: 'GET', path: '/events/{eventId}', handler: 'embed-get-event', auth: 'none' },
  { id: 'embedGetUserEvents', surface: 'embed', method: 'GET', path: '/users/{username}/events', handler: 'embed-get-user-events', auth: 'none' },
  // iCalendar feeds. API Gateway REST allows a path parameter only as a whole
  // segment and one variable segment per level, so a single event's feed is
  // its own segment below the event (…/events/{eventId}.ics redirects there).
  { id: 'embedGetUserFeed', surface: 'embed', method: 'GET', path: '/users/{username}/events.ics', handler: 'embed-get-user-feed', auth: 'none' },
  { id: 'embedGetEventFeed', surface: 'embed', method: 'GET', path: '/events/{eventId}/event.ics', handler: 'embed-get-event-feed', auth: 'none' },
  { id: 'embedOpenApi', surface: 'embed', method: 'GET', path: '/openapi.json', handler: 'openapi', auth: 'none', readsTable: false },
] as const satisfies readonly RouteDefinition[];

export type RouteId = (typeof routes)[number]['id'];

/** The handler file serving each surface's OpenAPI document (PRODUCT P15). */
export const OPENAPI_HANDLER = 'openapi';

/** Answers the old `/api/ext/v1/…` prefix with a 308 (PRODUCT P15); outside the route table: every method, every path below. */
export const LEGACY_REDIRECT_HANDLER = 'legacy-redirect';

/** The Public API's REQUEST authorizer, also a Lambda of its own. */
export const AUTHORIZER_HANDLER = 'authorizer';

export function resourcePath(route: Pick<RouteDefinition, 'surface' | 'path'>): string {
  return `${SURFACES[route.surface]}${route.path}`;
}

/** The route an API Gateway `resource` + method belongs to. */
export function routeForResource(resource: string, method: string): RouteDefinition | undefined {
  return routes.find((r) => r.method === method && resourcePath(r) === resource);
}
