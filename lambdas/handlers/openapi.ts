/**
 * GET /api/public/v1/openapi.json and GET /api/embed/v1/openapi.json (PRODUCT
 * P15): the surface's OpenAPI 3.1 document itself, no envelope, no key. It is
 * generated once per container, at the first request, for this deployment's
 * key header name and `/users/{username}/events` variant.
 */
import { rateLimitHeaders } from '../core/rate-limit.js';
import { JSON_HEADERS } from '../http/envelope.js';
import { EMBED_CORS } from '../http/embed-cors.js';
import type { Deps, HttpHandler } from '../http/deps.js';
import { lambdaEntry } from '../http/lambda-entry.js';
import { buildDocument } from '../openapi/document.js';
import { SURFACES, type Surface } from '../routes.js';

export const build = ({ config, clock }: Deps): HttpHandler => {
  const documents = new Map<Surface, string>();
  return async (event) => {
    // By the resource alone: whatever method the event names, an Embed answer carries CORS.
    const surface: Surface = typeof event.resource === 'string' && event.resource.startsWith(`${SURFACES.embed}/`) ? 'embed' : 'public';
    let body = documents.get(surface);
    if (body === undefined) {
      body = JSON.stringify(buildDocument(surface, config));
      documents.set(surface, body);
    }
    return {
      statusCode: 200,
      headers: {
        ...JSON_HEADERS,
        'cache-control': 'public, max-age=300',
        // Not metered, but it is a Public API answer: it tells the key's quota like every other (issue 19).
        ...(surface === 'embed' ? { 'access-control-allow-origin': EMBED_CORS.allowOrigin } : rateLimitHeaders(clock())),
      },
      body,
    };
  };
};

export const handler = lambdaEntry(build);
