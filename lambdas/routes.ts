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
import { SURFACES, type Surface } from './core/surfaces.js';

export { SURFACES, type Surface };

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
  /**
   * THE declaration of the DynamoDB actions the handler's store calls use
   * (lambdas/store/reads/repository.ts): its role grants exactly these, on the table
   * and its indexes (lib/route-function.ts), and nothing else. Empty: the
   * handler never touches the table (no grant at all). `npm run rehearse`
   * runs the bundle against its role and fails on any call outside this list.
   */
  readonly tableReads: readonly TableRead[];
  /**
   * Reads the changes feeds' cursor key (a Secrets Manager secret of the
   * stack): its role may read that secret and nothing else of Secrets
   * Manager, and only these functions get its ARN (lib/route-function.ts).
   */
  readonly cursorKey?: true;
  /** Asks for a place (PRODUCT P17): `city`, `country` or both, neither a 400; checks and smoke tests give one. */
  readonly takesPlace?: true;
}

/** Read actions an HTTP function may be granted; no write action can be declared here. */
export const TABLE_READS = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'] as const;
export type TableRead = (typeof TABLE_READS)[number];

/** Query: every index read (events, guests, tallies, user lookup). */
const QUERY = ['dynamodb:Query'] as const;
/** A profile list and a changes feed also read items by key (repository `eventsOf`, feed pages: BatchGetItem). */
const QUERY_AND_BATCH_GET = ['dynamodb:Query', 'dynamodb:BatchGetItem'] as const;
/** A changes feed reads its scope's heads, chunks and member list by Query, and its members' items by key: BatchGetItem. */
const FEED_READS = QUERY_AND_BATCH_GET;

export const routes = [
  { id: 'getEvent', surface: 'public', method: 'GET', path: '/events/{eventId}', handler: 'get-event', auth: 'key', scope: 'events:read', tableReads: QUERY },
  { id: 'getEventGuests', surface: 'public', method: 'GET', path: '/events/{eventId}/guests', handler: 'get-event-guests', auth: 'key', scope: 'guests:read', tableReads: QUERY },
  { id: 'getUserEvents', surface: 'public', method: 'GET', path: '/users/{username}/events', handler: 'get-user-events', auth: 'key', scope: 'events:read', tableReads: QUERY_AND_BATCH_GET },
  { id: 'getUserProfileEvents', surface: 'public', method: 'GET', path: '/users/{username}/profile-events', handler: 'get-user-profile-events', auth: 'key', scope: 'events:read', tableReads: QUERY_AND_BATCH_GET },
  { id: 'getUserUpcomingEvents', surface: 'public', method: 'GET', path: '/users/{username}/upcoming-events', handler: 'get-user-upcoming-events', auth: 'key', scope: 'events:read', tableReads: QUERY },
  { id: 'getUserPastEvents', surface: 'public', method: 'GET', path: '/users/{username}/past-events', handler: 'get-user-past-events', auth: 'key', scope: 'events:read', tableReads: QUERY },
  // Changes feeds (PRODUCT P16): what changed since a cursor, in the scope of a read route.
  { id: 'getEventChanges', surface: 'public', method: 'GET', path: '/changes/events', handler: 'get-event-changes', auth: 'key', scope: 'events:read', tableReads: FEED_READS, cursorKey: true },
  { id: 'getUserEventChanges', surface: 'public', method: 'GET', path: '/changes/users/{username}/events', handler: 'get-user-event-changes', auth: 'key', scope: 'events:read', tableReads: FEED_READS, cursorKey: true },
  { id: 'getPlaceEventChanges', surface: 'public', method: 'GET', path: '/changes/places/events', handler: 'get-place-event-changes', auth: 'key', scope: 'events:read', tableReads: FEED_READS, cursorKey: true, takesPlace: true },
  { id: 'getEventGuestChanges', surface: 'public', method: 'GET', path: '/changes/events/{eventId}/guests', handler: 'get-event-guest-changes', auth: 'key', scope: 'guests:read', tableReads: FEED_READS, cursorKey: true },
  // Discovery (PRODUCT P17): a place's events by local start date; the place indexes (keys only), then the items by key.
  { id: 'searchEvents', surface: 'public', method: 'GET', path: '/events', handler: 'search-events', auth: 'key', scope: 'events:read', tableReads: QUERY_AND_BATCH_GET, cursorKey: true, takesPlace: true },
  { id: 'publicOpenApi', surface: 'public', method: 'GET', path: '/openapi.json', handler: 'openapi', auth: 'none', tableReads: [] },
  { id: 'embedGetEvent', surface: 'embed', method: 'GET', path: '/events/{eventId}', handler: 'embed-get-event', auth: 'none', tableReads: QUERY },
  { id: 'embedGetUserEvents', surface: 'embed', method: 'GET', path: '/users/{username}/events', handler: 'embed-get-user-events', auth: 'none', tableReads: QUERY },
  // iCalendar feeds. API Gateway REST allows a path parameter only as a whole
  // segment and one variable segment per level, so a single event's feed is
  // its own segment below the event (…/events/{eventId}.ics redirects there).
  { id: 'embedGetUserFeed', surface: 'embed', method: 'GET', path: '/users/{username}/events.ics', handler: 'embed-get-user-feed', auth: 'none', tableReads: QUERY },
  { id: 'embedGetEventFeed', surface: 'embed', method: 'GET', path: '/events/{eventId}/event.ics', handler: 'embed-get-event-feed', auth: 'none', tableReads: QUERY },
  // A place's calendar (PRODUCT P17): discovery's read (the place indexes, then the items by key), a resource beside /events.
  { id: 'embedGetPlaceFeed', surface: 'embed', method: 'GET', path: '/events.ics', handler: 'embed-get-place-feed', auth: 'none', tableReads: QUERY_AND_BATCH_GET, takesPlace: true },
  { id: 'embedSearchEvents', surface: 'embed', method: 'GET', path: '/events', handler: 'embed-search-events', auth: 'none', tableReads: QUERY_AND_BATCH_GET, cursorKey: true, takesPlace: true },
  { id: 'embedOpenApi', surface: 'embed', method: 'GET', path: '/openapi.json', handler: 'openapi', auth: 'none', tableReads: [] },
] as const satisfies readonly RouteDefinition[];

export type RouteId = (typeof routes)[number]['id'];

/** The handler file serving each surface's OpenAPI document (PRODUCT P15). */
export const OPENAPI_HANDLER = 'openapi';

/** Answers the old `/api/ext/v1/…` prefix with a 308 (PRODUCT P15); outside the route table: every method, every path below. */
export const LEGACY_REDIRECT_HANDLER = 'legacy-redirect';

/** The Public API's REQUEST authorizer, also a Lambda of its own. */
export const AUTHORIZER_HANDLER = 'authorizer';
/** The authorizer's reads (lambdas/store/reads/api-key-reads.ts: the key's item, then its user's), granted on those partitions only (lib/route-function.ts). */
export const AUTHORIZER_TABLE_READS = ['dynamodb:GetItem'] as const satisfies readonly TableRead[];
export const AUTHORIZER_LEADING_KEYS = ['APIKEY#*', 'USER#*'] as const;

export function resourcePath(route: Pick<RouteDefinition, 'surface' | 'path'>): string {
  return `${SURFACES[route.surface]}${route.path}`;
}

/** The route an API Gateway `resource` + method belongs to. */
export function routeForResource(resource: string, method: string): RouteDefinition | undefined {
  return routes.find((r) => r.method === method && resourcePath(r) === resource);
}
