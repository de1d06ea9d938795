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
  /** Public routes need exactly one scope (PRODUCT P3). */
  readonly scope?: Scope;
}

export const routes = [
  { id: 'getEvent', surface: 'public', method: 'GET', path: '/events/{eventId}', handler: 'get-event', scope: 'events:read' },
  { id: 'getEventGuests', surface: 'public', method: 'GET', path: '/events/{eventId}/guests', handler: 'get-event-guests', scope: 'guests:read' },
  { id: 'getUserEvents', surface: 'public', method: 'GET', path: '/users/{username}/events', handler: 'get-user-events', scope: 'events:read' },
  { id: 'getUserProfileEvents', surface: 'public', method: 'GET', path: '/users/{username}/profile-events', handler: 'get-user-profile-events', scope: 'events:read' },
  { id: 'getUserUpcomingEvents', surface: 'public', method: 'GET', path: '/users/{username}/upcoming-events', handler: 'get-user-upcoming-events', scope: 'events:read' },
  { id: 'getUserPastEvents', surface: 'public', method: 'GET', path: '/users/{username}/past-events', handler: 'get-user-past-events', scope: 'events:read' },
  { id: 'embedGetEvent', surface: 'embed', method: 'GET', path: '/events/{eventId}', handler: 'embed-get-event' },
  { id: 'embedGetUserEvents', surface: 'embed', method: 'GET', path: '/users/{username}/events', handler: 'embed-get-user-events' },
  // iCalendar feeds. API Gateway REST allows a path parameter only as a whole
  // segment and one variable segment per level, so a single event's feed is
  // its own segment below the event (…/events/{eventId}.ics redirects there).
  { id: 'embedGetUserFeed', surface: 'embed', method: 'GET', path: '/users/{username}/events.ics', handler: 'embed-get-user-feed' },
  { id: 'embedGetEventFeed', surface: 'embed', method: 'GET', path: '/events/{eventId}/event.ics', handler: 'embed-get-event-feed' },
] as const satisfies readonly RouteDefinition[];

/** The Public API's REQUEST authorizer, also a Lambda of its own. */
export const AUTHORIZER_HANDLER = 'authorizer';

export function resourcePath(route: Pick<RouteDefinition, 'surface' | 'path'>): string {
  return `${SURFACES[route.surface]}${route.path}`;
}

/** The route an API Gateway `resource` + method belongs to. */
export function routeForResource(resource: string, method: string): RouteDefinition | undefined {
  return routes.find((r) => r.method === method && resourcePath(r) === resource);
}
