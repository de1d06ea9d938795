/**
 * Generates each surface's OpenAPI 3.1 document from the route table, the
 * routes' zod parameter schemas and the zod response schemas, with
 * @asteasolutions/zod-to-openapi. Only the `openapi` handler imports this
 * module, so the generator never lands in a data route's bundle
 * (test/infra/bundle-contents.test.ts holds that).
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';
import { DAILY_QUOTA, QUOTA_EXCEEDED_HEADERS } from '../core/authorize.js';
import { SERVICE_BUSY_RETRY_AFTER_SECONDS } from '../core/errors.js';
import { CURSOR_KEYS_RETRY_SECONDS } from '../core/feed-cursor.js';
import type { UserEventsVariant } from '../core/config.js';
import { API_GATEWAY_LIMITS } from '../core/gateway-limits.js';
import { EVENT_ID_MAX_LENGTH, USERNAME_MAX_LENGTH } from '../core/ids.js';
import { errorEnvelopeSchema, validationErrorSchema } from '../core/response-schemas.js';
import { EMBED_CORS } from '../http/embed-cors.js';
import { SURFACES, routes, type RouteDefinition, type Surface } from '../routes.js';
import { EXAMPLES, type ExampleName } from './examples.generated.js';
import { OPERATIONS, type OperationDoc } from './operations.js';
import { splitParams } from './route-queries.js';

export interface DocumentOptions {
  /** Names the key header `x-{serviceName}-api-key`. */
  serviceName: string;
  /** Which `/users/{username}/events` variant this deployment serves. */
  userEventsVariant: UserEventsVariant;
}

/** A response header as OpenAPI describes it, bounded as the OWASP rules ask (.spectral.yaml). */
interface Header {
  description: string;
  required: boolean;
  schema:
    | { type: 'string'; enum: string[] }
    | { type: 'string'; maxLength: number; pattern?: string }
    | { type: 'integer'; format: 'int32' | 'int64'; minimum: number; maximum: number };
}

const SECONDS_PER_DAY = 86_400;
/** 10000-01-01T00:00:00Z in Unix seconds: every instant the API deals in is before it (UTC years 0001-9999). */
const UNIX_SECONDS_MAX = 253_402_300_800;
/** `public, max-age=N`, N at most a day (the configuration's bound). */
const CACHE_CONTROL: Header['schema'] = { type: 'string', maxLength: 'public, max-age=86400'.length, pattern: '^public, max-age=\\d{1,5}$' };
type HeadersObject = Exclude<NonNullable<ResponseConfig['headers']>, z.ZodType>;
// The generator's header type comes from openapi3-ts and does not unify with
// this narrower literal type; the shape is the OpenAPI Header Object.
const asHeaders = (headers: Record<string, Header>) => headers as unknown as HeadersObject;

const CORS_HEADERS: Record<string, Header> = {
  'Access-Control-Allow-Origin': { description: 'CORS: every origin may read Embed responses.', required: true, schema: { type: 'string', enum: [EMBED_CORS.allowOrigin] } },
};

/**
 * The Public API's rate-limit headers, per answer, as the deployed API and the
 * local server send them (lambdas/core/rate-limit.ts, lib/gateway-responses.ts).
 * API Gateway's own answers (401, 403, 429, its 5xx) are gateway responses,
 * whose header values AWS documents as literals or request parameters only,
 * so they say the limit (a literal) but not the reset time:
 */
export const GATEWAY_RESPONSE_DOCS = 'https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-swagger-extensions-gateway-responses.gatewayResponse.html';

/** Bounds and formats as the OWASP API Security rules ask (.spectral.yaml): a count fits int32, an instant int64. */
const count = { type: 'integer', format: 'int32', minimum: 0, maximum: DAILY_QUOTA } as const;
const instant = { type: 'integer', format: 'int64', minimum: 0, maximum: UNIX_SECONDS_MAX } as const;
const LIMIT: Header = { description: 'Requests per key per UTC day (the daily quota).', required: true, schema: { type: 'integer', format: 'int32', minimum: 1, maximum: DAILY_QUOTA } };
const RESET: Header = { description: 'Unix seconds of the next UTC midnight, when the daily count starts again.', required: true, schema: instant };
const REMAINING: Header = {
  description:
    "Requests left today. Sent only where the count is known: by the local server, which counts. The deployed API does not send it: API Gateway's usage plan counts, and no Lambda sees that count.",
  required: false,
  schema: count,
};
/** Answers a Lambda gives: it knows the time, not the count. */
const LAMBDA_RATE_HEADERS: Record<string, Header> = { 'X-RateLimit-Limit': LIMIT, 'X-RateLimit-Reset': RESET, 'X-RateLimit-Remaining': REMAINING };
/** Answers API Gateway gives itself: the limit only (see GATEWAY_RESPONSE_DOCS). */
const GATEWAY_RATE_HEADERS: Record<string, Header> = { 'X-RateLimit-Limit': LIMIT };
const GATEWAY_NO_RESET = `No \`X-RateLimit-Reset\`: API Gateway answers this itself, with a gateway response, whose header values are literals or request parameters (${GATEWAY_RESPONSE_DOCS}).`;

const QUOTA_429_HEADERS: Record<keyof typeof QUOTA_EXCEEDED_HEADERS, Header> = {
  'X-RateLimit-Limit': LIMIT,
  'X-RateLimit-Remaining': { description: '0 over the daily quota. Absent on the per-second throttles and on the web ACL\'s block.', required: false, schema: count },
  'X-RateLimit-Reset': {
    description: `Over the daily quota: Unix seconds of the next UTC midnight, sent by the local server and by a deployment made with \`-c quotaHeaders=context\` (mapped from the authorizer's context). The default deployment does not send it: its gateway responses map only literals, the values AWS documents for them (${GATEWAY_RESPONSE_DOCS}).`,
    required: false,
    schema: instant,
  },
  'Retry-After': {
    description: 'Seconds to wait: 1 on the per-second throttles; over the daily quota, the seconds until the reset (rounded up), wherever `X-RateLimit-Reset` is sent. Absent on the web ACL\'s block.',
    required: false,
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: SECONDS_PER_DAY },
  },
};

/** Sent with every non-JSON body (lambdas/http/embed-route.ts). */
const DOWNLOAD_HEADERS: Record<string, Header> = {
  'Content-Disposition': {
    description: '`inline; filename="….ics"`: the name a browser saves it under (the event id, or `{username}-events`).',
    required: true,
    schema: {
      type: 'string',
      maxLength: 'inline; filename="'.length + Math.max(EVENT_ID_MAX_LENGTH, USERNAME_MAX_LENGTH + '-events'.length) + '.ics"'.length,
      pattern: '^inline; filename="[\\w.-]+\\.ics"$',
    },
  },
};

const example = (name: ExampleName) => ({ value: EXAMPLES[name] });
const examples = (names: readonly ExampleName[]) => Object.fromEntries(names.map((n) => [n, example(n)]));

function errorResponse(description: string, headers: Record<string, Header>, names: readonly ExampleName[], schema: z.ZodType = errorEnvelopeSchema): ResponseConfig {
  return {
    description,
    headers: asHeaders(headers),
    content: { 'application/json': { schema, ...(names.length ? { examples: examples(names) } : {}) } },
  };
}

function responsesFor(route: RouteDefinition, op: OperationDoc): Record<string, ResponseConfig> {
  const embed = route.surface === 'embed';
  const cacheable = embed && op.conditional === true;
  const cors = embed ? CORS_HEADERS : {};
  const errorHeaders: Record<string, Header> = embed
    ? { ...cors, 'Cache-Control': { description: 'Errors are not cached.', required: true, schema: { type: 'string', enum: ['no-store'] } } satisfies Header }
    : LAMBDA_RATE_HEADERS;
  // The Public API's answers API Gateway gives itself; the Embed API's carry CORS.
  const gatewayHeaders = embed ? errorHeaders : GATEWAY_RATE_HEADERS;
  const gatewayNote = embed ? '' : ` ${GATEWAY_NO_RESET}`;
  const successHeaders: Record<string, Header> = cacheable
    ? {
        ...cors,
        'Cache-Control': { description: '`public, max-age=N`: N is cut short before the first status in the answer changes.', required: true, schema: CACHE_CONTROL },
        ETag: {
          description: 'Strong ETag of the exact body; send it back in `If-None-Match`.',
          required: true,
          // lambdas/http/conditional-get.ts: 27 base64url characters of the body's SHA-256, quoted.
          schema: { type: 'string', maxLength: 29, pattern: '^"[A-Za-z0-9_-]{27}"$' },
        },
      }
    : embed
      ? cors
      : route.auth === 'key'
        ? LAMBDA_RATE_HEADERS
        : { 'X-RateLimit-Limit': LIMIT, 'X-RateLimit-Reset': RESET };
  const { success } = op;
  const responses: Record<string, ResponseConfig> = {
    200: {
      description: success.description,
      headers: asHeaders(success.mediaType === 'application/json' ? successHeaders : { ...successHeaders, ...DOWNLOAD_HEADERS }),
      content: {
        [success.mediaType]: {
          schema: success.mediaType === 'application/json' ? success.schema : z.string(),
          ...(success.example ? { examples: { demo: example(success.example) } } : {}),
        },
      },
    },
  };
  if (cacheable) responses[304] = { description: '`If-None-Match` matched the current ETag: no body.', headers: asHeaders(successHeaders) };
  if (op.redirect) {
    responses[308] = {
      description: op.redirect.description,
      headers: asHeaders({
        ...cors,
        Location: {
          description: 'Where the resource lives, relative to the request URL.',
          required: true,
          schema: { type: 'string', maxLength: EVENT_ID_MAX_LENGTH + '/event.ics'.length, pattern: '^evt_[A-Za-z0-9_-]+/event\\.ics$' },
        },
        'Cache-Control': { description: 'The redirect never changes: `public, max-age=86400`.', required: true, schema: { type: 'string', enum: ['public, max-age=86400'] } },
      }),
    };
  }
  const invalid = op.errors[400];
  if (invalid) {
    responses[400] = errorResponse(
      embed
        ? 'Invalid parameters (`errors` names each), or a request the route cannot answer.'
        : 'Invalid parameters (`errors` names each), or a request the route cannot answer. `X-RateLimit-Reset` is absent only when the request was refused before routing (not valid HTTP).',
      embed ? errorHeaders : { ...errorHeaders, 'X-RateLimit-Reset': { ...RESET, required: false } },
      invalid,
      z.union([validationErrorSchema, errorEnvelopeSchema]),
    );
  }
  if (route.auth === 'key') {
    responses[401] = errorResponse(`No key, or an unknown or revoked key.${gatewayNote}`, gatewayHeaders, ['notAuthenticated']);
    responses[403] = errorResponse(`The key lacks this route's scope.${gatewayNote}`, gatewayHeaders, ['insufficientScope']);
  }
  const notFound = op.errors[404];
  if (notFound) responses[404] = errorResponse('Not found, or not published and public.', errorHeaders, notFound);
  const gone = op.errors[410];
  if (gone) responses[410] = errorResponse('The cursor is older than 30 days: start again without a cursor.', errorHeaders, gone);
  // API Gateway's size quotas, checked before anything else (the key included).
  const count = (n: number) => n.toLocaleString('en-US');
  // Whether API Gateway's front door answers these through the gateway responses is not documented: the limit may be absent.
  const sizeHeaders = embed ? errorHeaders : { 'X-RateLimit-Limit': { ...LIMIT, required: false } };
  responses[414] = errorResponse(
    `The gateway's limit: the URL (path and query) over ${count(API_GATEWAY_LIMITS.urlLength)} characters` +
      (route.auth === 'key' ? `, or the method ARN (\`…/{stage}/GET{path}\`) over ${count(API_GATEWAY_LIMITS.methodArnBytes)} bytes.` : '.'),
    sizeHeaders,
    ['uriTooLong'],
  );
  responses[431] = errorResponse(`The gateway's limit: all request header lines together over ${count(API_GATEWAY_LIMITS.headerBytes)} bytes.`, sizeHeaders, ['headersTooLarge']);
  if (route.auth === 'key') {
    responses[429] = errorResponse(
      'Over the daily quota (1000 per key per UTC day), the per-key throttle (10 per second, burst 20), the stage throttle, or, where deployed with its web ACL, the per-address rate rule.',
      QUOTA_429_HEADERS,
      ['tooManyRequests'],
    );
  } else if (embed) {
    responses[429] = errorResponse('The stage throttle: retry after a second.', { ...errorHeaders, 'Retry-After': { ...QUOTA_429_HEADERS['Retry-After'], description: 'Always 1.', required: true } }, ['tooManyRequests']);
  }
  if (route.tableReads.length > 0) {
    // lambdas/http/envelope.ts: a store throttle that outlasted every retry; the Lambda answers it, so its headers are the route's errors'.
    // A route with cursor keys also answers it while its function cannot read them yet (lambdas/http/cursor-keys.ts).
    const keys = route.cursorKey === true;
    const most = keys ? Math.max(SERVICE_BUSY_RETRY_AFTER_SECONDS, CURSOR_KEYS_RETRY_SECONDS) : SERVICE_BUSY_RETRY_AFTER_SECONDS;
    responses[503] = errorResponse(
      keys
        ? `The table is throttled for now (every retry used up), or this function cannot read its cursor keys yet: nothing is wrong with the request; send it again after \`Retry-After\` seconds (${SERVICE_BUSY_RETRY_AFTER_SECONDS} for a throttle, at most ${CURSOR_KEYS_RETRY_SECONDS} for the keys).`
        : `The table is throttled for now (every retry used up): nothing is wrong with the request; send it again after \`Retry-After\` seconds (${SERVICE_BUSY_RETRY_AFTER_SECONDS}).`,
      {
        ...errorHeaders,
        'Retry-After': {
          description: keys ? `Seconds to wait before sending the request again: ${SERVICE_BUSY_RETRY_AFTER_SECONDS} for a throttle, the time to the function's next read of its keys (1 to ${CURSOR_KEYS_RETRY_SECONDS}) for the keys.` : `Seconds to wait before sending the request again: always ${SERVICE_BUSY_RETRY_AFTER_SECONDS}.`,
          required: true,
          schema: { type: 'integer', format: 'int32', minimum: keys ? 1 : SERVICE_BUSY_RETRY_AFTER_SECONDS, maximum: most },
        },
      },
      ['serviceBusy'],
    );
  }
  responses[500] = errorResponse(
    embed ? 'Unexpected failure; nothing about it is disclosed.' : 'Unexpected failure; nothing about it is disclosed. `X-RateLimit-Reset` is absent when API Gateway answers it itself (a Lambda that failed outright).',
    embed ? errorHeaders : { ...LAMBDA_RATE_HEADERS, 'X-RateLimit-Reset': { ...RESET, required: false } },
    ['internalError'],
  );
  return responses;
}

/** Splits a route's parameter schema into path and query parameters by the names in its path (route-queries.ts). */
function requestOf(route: RouteDefinition, params: z.ZodObject) {
  const { path, query } = splitParams(route, params);
  const pick = (names: string[]) => z.object(Object.fromEntries(names.map((name) => [name, params.shape[name]!])));
  return { params: pick(path), query: pick(query) };
}

const TAGS: Record<OperationDoc['tag'], string> = {
  Events: 'Single events.',
  Guests: "An event's guest list.",
  Users: "A user's events.",
  Documents: 'This document.',
};

function info(surface: Surface, opts: DocumentOptions) {
  return surface === 'public'
    ? {
        title: 'Public Events API',
        version: '1.0.0',
        description: [
          'Read-only access to published, public events, their guests and users\' event lists.',
          '',
          `**Authentication:** an API key in \`x-${opts.serviceName}-api-key\` or \`Authorization: Bearer <key>\`; each route needs one scope (\`events:read\` or \`guests:read\`).`,
          '',
          '**Rate limits:** 1000 requests per key per UTC day and 10 per second (burst 20), and a throttle on the whole API; over any: `429`. Every answer says the daily quota in `X-RateLimit-Limit`; the answers of the routes themselves also say when it resets (`X-RateLimit-Reset`, Unix seconds of the next UTC midnight). `X-RateLimit-Remaining` is sent only where the count is known (see each response).',
          '',
          'Every body is the envelope `{success, message, data}` (errors: `{success: false, message}`, plus `errors` for bad parameters), except this document. No CORS.',
        ].join('\n'),
      }
    : {
        title: 'Public Events Embed API',
        version: '1.0.0',
        description: [
          'Compact events for browser widgets. No key; every response, errors included, carries `Access-Control-Allow-Origin: *`; `OPTIONS` on any path answers the CORS preflight (`204`).',
          '',
          'Successful answers are cacheable (`Cache-Control`, strong `ETag`, `If-None-Match` → `304`); errors are `Cache-Control: no-store`.',
        ].join('\n'),
      };
}

/** Route descriptions by route id; the real table's are OPERATIONS. */
export type OperationTable = Readonly<Record<string, (ctx: DocumentOptions) => OperationDoc>>;

/**
 * The surface's document. `table` and `operations` default to the real route
 * table and its descriptions; tests pass others to check how a kind of route
 * (say a non-JSON one) is described.
 */
export function buildDocument(
  surface: Surface,
  opts: DocumentOptions,
  table: readonly RouteDefinition[] = routes,
  operations: OperationTable = OPERATIONS,
) {
  const registry = new OpenAPIRegistry();
  const keyed = table.some((r) => r.surface === surface && r.auth === 'key');
  if (keyed) {
    registry.registerComponent('securitySchemes', 'ApiKeyHeader', {
      type: 'apiKey',
      in: 'header',
      name: `x-${opts.serviceName}-api-key`,
      description: 'The API key in its own header.',
    });
    registry.registerComponent('securitySchemes', 'BearerKey', { type: 'http', scheme: 'bearer', description: 'The same API key as a bearer token.' });
  }
  const tags = new Set<OperationDoc['tag']>();
  for (const route of table.filter((r) => r.surface === surface)) {
    const describe = operations[route.id];
    if (!describe) throw new Error(`route ${route.id} has no OpenAPI description (lambdas/openapi/operations.ts)`);
    const op = describe(opts);
    tags.add(op.tag);
    registry.registerPath({
      method: 'get',
      path: route.path,
      operationId: route.id,
      summary: op.summary,
      description: op.description,
      tags: [op.tag],
      security: route.auth === 'key' ? [{ ApiKeyHeader: [] }, { BearerKey: [] }] : [],
      request: requestOf(route, op.params),
      responses: responsesFor(route, op),
    });
    if (surface === 'embed') {
      registry.registerPath({
        method: 'options',
        path: route.path,
        operationId: `${route.id}Preflight`,
        summary: 'CORS preflight',
        description: 'Answered by the gateway on every Embed path.',
        tags: [op.tag],
        security: [],
        request: { params: requestOf(route, op.params).params },
        responses: {
          204: {
            description: 'Preflight accepted.',
            headers: asHeaders({
              ...CORS_HEADERS,
              // A list: `GET,OPTIONS` from API Gateway's preflight mock (CDK joins without spaces), and the local server's too.
              'Access-Control-Allow-Methods': { description: 'Allowed methods.', required: true, schema: { type: 'string', maxLength: 64, pattern: '^[A-Z]+(, ?[A-Z]+)*$' } },
              'Access-Control-Allow-Headers': { description: 'Allowed request headers.', required: true, schema: { type: 'string', maxLength: 256, pattern: '^[A-Za-z0-9-]+(, ?[A-Za-z0-9-]+)*$' } },
            }),
          },
        },
      });
    }
  }
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: info(surface, opts),
    // x-internal: false declares the audience (OWASP API9): both surfaces are public APIs.
    servers: [{ url: SURFACES[surface], description: 'This host (locally, or the custom domain)', 'x-internal': false }],
    tags: [...tags].map((name) => ({ name, description: TAGS[name] })),
  });
  // Path parameters are always required (the schemas accept a missing value
  // only to answer it with a named 400).
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of [item.get, item.options]) {
      for (const p of operation?.parameters ?? []) if ('in' in p && p.in === 'path') p.required = true;
    }
  }
  return document;
}
