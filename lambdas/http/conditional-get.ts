/**
 * Conditional GET for the Embed API, whose widgets load on every page view:
 * a strong ETag on every 200 (a hash of the exact body, so it changes whenever
 * a computed status does), `If-None-Match` → 304 with no body, and
 * `Cache-Control: no-store` on errors so a 404 is not remembered.
 */
import { createHash } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

export function strongEtag(body: string): string {
  return `"${createHash('sha256').update(body, 'utf8').digest('base64url').slice(0, 27)}"`;
}

function headerValue(headers: APIGatewayProxyEvent['headers'] | null | undefined, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === name && typeof value === 'string') return value;
  return undefined;
}

/** RFC 9110 §13.1.2: If-None-Match uses the weak comparison. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/** Seconds a response may be cached: the configured maximum, cut short before a status changes. */
export function maxAgeSeconds(configured: number, freshForMs: number | null): number {
  return freshForMs === null ? configured : Math.max(0, Math.min(configured, Math.floor(freshForMs / 1000)));
}

export function conditionalGet(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    after: (request) => {
      const res = request.response;
      if (!res || res.statusCode !== 200) return;
      const etag = strongEtag(res.body);
      res.headers = { ...res.headers, etag };
      if (ifNoneMatchHits(headerValue(request.event.headers, 'if-none-match'), etag)) {
        const cacheControl = res.headers['cache-control'];
        request.response = {
          statusCode: 304,
          headers: { etag, ...(cacheControl !== undefined ? { 'cache-control': cacheControl } : {}) },
          body: '',
        };
      }
    },
    onError: (request) => {
      if (request.response) request.response.headers = { ...request.response.headers, 'cache-control': 'no-store' };
    },
  };
}
