/**
 * Which of a route's parameters are path parameters and which are query
 * parameters: the names in its path template (`{eventId}`) are the path's,
 * every other key of its parameter schema (lambdas/openapi/operations.ts,
 * the object its handler validates with) is a query parameter. The OpenAPI
 * documents and the Embed distribution's cache key (lib/embed-cdn.ts) both
 * read them from here, so neither can list a parameter the handler does not
 * read, nor miss one it does.
 */
import type * as z from 'zod';
import type { UserEventsVariant } from '../core/config.js';
import type { RouteDefinition } from '../routes.js';
import { OPERATIONS } from './operations.js';

/** The names of a route's path parameters, in path order. */
export function pathParameterNames(route: Pick<RouteDefinition, 'path'>): string[] {
  return [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
}

/** A route's parameter schema split into its path and its query parameters. */
export function splitParams(route: Pick<RouteDefinition, 'path'>, params: z.ZodObject): { path: string[]; query: string[] } {
  const inPath = new Set(pathParameterNames(route));
  const names = Object.keys(params.shape);
  return { path: names.filter((n) => inPath.has(n)), query: names.filter((n) => !inPath.has(n)) };
}

/** The query parameters a route's handler reads, sorted. */
export function queryParameterNames(route: Pick<RouteDefinition, 'id' | 'path'>, userEventsVariant: UserEventsVariant): string[] {
  const operation = OPERATIONS[route.id as keyof typeof OPERATIONS];
  return splitParams(route, operation({ userEventsVariant }).params).query.sort();
}
