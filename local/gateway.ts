/**
 * A small API Gateway REST emulation: matches the route table, builds the same
 * REQUEST-authorizer and proxy events API Gateway builds, runs the authorizer
 * and then the route's handler, and answers API-Gateway-level failures with the
 * envelopes the deployed gateway responses give (PRODUCT P12). Checks run in API
 * Gateway's order: route match → key → scope → (quota) → handler.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { QUOTA_EXCEEDED_HEADERS } from '../lambdas/core/authorize.js';
import { DAILY_QUOTA, RATE_LIMIT_HEADERS } from '../lambdas/core/rate-limit.js';
import { MESSAGES } from '../lambdas/core/errors.js';
import { LEGACY_PREFIX, legacyRedirectTarget, searchOf } from '../lambdas/core/legacy-prefix.js';
import { legacyRedirectResponse } from '../lambdas/handlers/legacy-redirect.js';
import type { AuthorizerHandler, HttpHandler } from '../lambdas/http/deps.js';
import { EMBED_CORS } from '../lambdas/http/embed-cors.js';
import { errorBody, jsonResponse } from '../lambdas/http/envelope.js';
import type { Logger } from '../lambdas/http/logger.js';
import { errorFields } from '../lambdas/http/logger.js';
import { resourcePath, routes, type RouteDefinition } from '../lambdas/routes.js';
import { methodArnTooLong, sizeLimitBreach } from './request-limits.js';
import { isEmbedPath, parseRequestTarget, type RequestTarget } from './request-target.js';

export interface GatewayOptions {
  handlers: ReadonlyMap<string, HttpHandler>;
  authorizer: AuthorizerHandler;
  logger: Logger;
  /** The daily quota (PRODUCT P4): counts a request the authorizer allowed; refused = over quota. */
  quota?: (keyId: string) => Promise<{ allowed: boolean; remaining: number }>;
  /** The daily limit that quota enforces (default DAILY_QUOTA): what `X-RateLimit-Limit` then says. */
  dailyQuota?: number;
  /** Called once per answered request (access log, tests). */
  onResponse?: (entry: { method: string; path: string; status: number; ms: number }) => void;
}

const STAGE = 'local';
const ACCOUNT = '000000000000';

interface Match {
  route: RouteDefinition;
  pathParameters: Record<string, string>;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // malformed escapes reach validation as-is and fail there
  }
}

const compiled = routes.map((route) => ({ route, segments: resourcePath(route).split('/') }));

export function matchRoute(method: string, pathname: string): Match | undefined {
  const segments = pathname.split('/');
  for (const { route, segments: template } of compiled) {
    if (route.method !== method || template.length !== segments.length) continue;
    const pathParameters = clientKeyed<string>();
    const ok = template.every((t, i) => {
      const actual = segments[i] ?? '';
      if (t.startsWith('{') && t.endsWith('}')) {
        // An empty segment still matches, so the handler can say which
        // parameter is missing (PRODUCT P6) instead of a bare 404.
        pathParameters[t.slice(1, -1)] = decodeSegment(actual);
        return true;
      }
      return t === actual;
    });
    if (ok) return { route, pathParameters };
  }
  return undefined;
}

/**
 * A map keyed by what the client sent: without a prototype, so a name like
 * `__proto__`, `constructor` or `toString` is an ordinary key.
 */
function clientKeyed<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

export function headersOf(req: IncomingMessage) {
  const headers = clientKeyed<string>();
  const multiValueHeaders = clientKeyed<string[]>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  return { headers, multiValueHeaders };
}

export function queryOf(url: RequestTarget) {
  // API Gateway keeps the last value of a repeated parameter in the single-value map.
  const single = clientKeyed<string>();
  const multi = clientKeyed<string[]>();
  for (const [name, value] of url.searchParams) {
    single[name] = value;
    (multi[name] ??= []).push(value);
  }
  return Object.keys(single).length ? { single, multi } : { single: null, multi: null };
}

function lambdaContext(requestId: string, functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:${ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function allows(result: APIGatewayAuthorizerResult, methodArn: string): boolean {
  return result.policyDocument.Statement.some((s) => {
    const resources = 'Resource' in s ? [s.Resource].flat() : [];
    return s.Effect === 'Allow' && resources.some((r) => r === methodArn || r === '*');
  });
}

function send(res: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  res.writeHead(result.statusCode, headers);
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

/** Embed CORS (PRODUCT P11): on every response, and the preflight's own headers. */
const EMBED_ORIGIN_HEADER = { 'access-control-allow-origin': EMBED_CORS.allowOrigin };
const EMBED_PREFLIGHT = {
  ...EMBED_ORIGIN_HEADER,
  // As API Gateway's preflight mock sends it: CDK writes the list joined without spaces (lib/rest-apis.ts).
  'access-control-allow-methods': EMBED_CORS.allowMethods.join(','),
  'access-control-allow-headers': EMBED_CORS.allowHeaders.join(', '),
};

/**
 * The old `/api/ext/v1` prefix (PRODUCT P15): a 308 to `/api/public/v1`, path
 * remainder and query kept, any method, before any key check. In AWS the same
 * response comes from lambdas/handlers/legacy-redirect.ts, which gets the query
 * parsed from API Gateway; the query is rebuilt here the same way (searchOf),
 * so both answer the same Location.
 */
export function legacyRedirect(url: RequestTarget): APIGatewayProxyResult | undefined {
  const underPrefix = url.pathname === LEGACY_PREFIX || url.pathname.startsWith(`${LEGACY_PREFIX}/`);
  const location = underPrefix ? legacyRedirectTarget(url.pathname, searchOf(queryOf(url).multi)) : undefined;
  return location === undefined ? undefined : legacyRedirectResponse(location);
}

export function createGateway(opts: GatewayOptions) {
  const limit = String(opts.dailyQuota ?? DAILY_QUOTA);
  // The handlers and the shared 429 headers say AWS's quota; a lowered local one (npm start --daily-quota) is what this server counts.
  const sayLimit = <H extends APIGatewayProxyResult['headers']>(headers: H): H =>
    headers && RATE_LIMIT_HEADERS.limit in headers ? { ...headers, [RATE_LIMIT_HEADERS.limit]: limit } : headers;
  async function answer(req: IncomingMessage, requestId: string): Promise<APIGatewayProxyResult> {
    const target = req.url ?? '/';
    const url = parseRequestTarget(target);
    const method = req.method ?? 'GET';
    const embed = isEmbedPath(url.pathname);
    // The Embed API's gateway responses carry CORS too, so a browser can read its errors; the Public
    // API's say the key's daily quota, a literal in AWS's gateway responses too (lib/gateway-responses.ts).
    const gatewayError = (status: number, message: string) =>
      jsonResponse(status, errorBody(message), {
        'x-amzn-requestid': requestId,
        ...(embed ? { ...EMBED_ORIGIN_HEADER, 'cache-control': 'no-store' } : { [RATE_LIMIT_HEADERS.limit]: limit }),
      });

    // API Gateway refuses oversized requests before anything else.
    const breach = sizeLimitBreach(target, req.rawHeaders);
    if (breach) return gatewayError(breach.status, breach.message);
    // Preflight on any Embed path is answered by the gateway itself (a MOCK integration in AWS).
    if (embed && method === 'OPTIONS') return { statusCode: 204, headers: { ...EMBED_PREFLIGHT, 'x-amzn-requestid': requestId }, body: '' };
    const redirect = legacyRedirect(url);
    if (redirect) return { ...redirect, headers: { ...redirect.headers, 'x-amzn-requestid': requestId } };
    const match = matchRoute(method, url.pathname);
    // Unknown route or method: API Gateway answers before any authorizer runs.
    if (!match) return gatewayError(404, MESSAGES.resourceNotFound);

    const { headers, multiValueHeaders } = headersOf(req);
    const query = queryOf(url);
    const resource = resourcePath(match.route);
    const methodArn = `arn:aws:execute-api:local:${ACCOUNT}:local/${STAGE}/${method}${url.pathname}`;
    const requestContext = {
      accountId: ACCOUNT,
      apiId: 'local',
      stage: STAGE,
      requestId,
      resourceId: match.route.id,
      resourcePath: resource,
      httpMethod: method,
      path: `/${STAGE}${url.pathname}`,
      protocol: `HTTP/${req.httpVersion}`,
      requestTimeEpoch: Date.now(),
      identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: req.headers['user-agent'] ?? null },
    };

    let authorizerContext: Record<string, unknown> | undefined;
    /** What the local count says is left today; unknown (and not sent) unless the quota ran. */
    let remaining: number | undefined;
    // Only `auth: 'key'` routes meet the authorizer and the quota; the documents are open (PRODUCT P15).
    if (match.route.auth === 'key') {
      // The method ARN limit applies to methods with authorization only.
      const arnBreach = methodArnTooLong(methodArn);
      if (arnBreach) return gatewayError(arnBreach.status, arnBreach.message);
      let result: APIGatewayAuthorizerResult;
      try {
        result = await opts.authorizer(
          {
            type: 'REQUEST',
            methodArn,
            resource,
            path: url.pathname,
            httpMethod: method,
            headers,
            multiValueHeaders,
            pathParameters: match.pathParameters,
            queryStringParameters: query.single,
            multiValueQueryStringParameters: query.multi,
            stageVariables: null,
            requestContext: requestContext as never,
          },
          lambdaContext(requestId, 'authorizer'),
        );
      } catch (error) {
        if (error instanceof Error && error.message === 'Unauthorized') {
          return gatewayError(401, MESSAGES.notAuthenticated);
        }
        // API Gateway answers an authorizer failure with 500 (AUTHORIZER_FAILURE).
        opts.logger.error('Authorizer failed', { requestId, ...errorFields(error) });
        return gatewayError(500, MESSAGES.internal);
      }
      if (!allows(result, methodArn)) return gatewayError(403, MESSAGES.insufficientScope);
      authorizerContext = { ...result.context, principalId: result.principalId };
      const counted = opts.quota ? await opts.quota(result.principalId) : undefined;
      remaining = counted?.remaining;
      if (counted && !counted.allowed) {
        // The same headers the deployed QUOTA_EXCEEDED gateway response maps from this context.
        const quotaHeaders = Object.entries(QUOTA_EXCEEDED_HEADERS).map(([name, source]) => [
          name,
          'value' in source ? source.value : String(result.context?.[source.context]),
        ]);
        return jsonResponse(429, errorBody(MESSAGES.tooManyRequests), sayLimit({ 'x-amzn-requestid': requestId, ...Object.fromEntries(quotaHeaders) }));
      }
    }

    const event: APIGatewayProxyEvent = {
      resource,
      path: url.pathname,
      httpMethod: method,
      headers,
      multiValueHeaders,
      queryStringParameters: query.single,
      multiValueQueryStringParameters: query.multi,
      pathParameters: match.pathParameters,
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: { ...requestContext, authorizer: authorizerContext } as APIGatewayProxyEvent['requestContext'],
    };
    const handler = opts.handlers.get(match.route.id);
    if (!handler) throw new Error(`no handler loaded for route ${match.route.id}`);
    try {
      const result = await handler(event, lambdaContext(requestId, match.route.id));
      const counted: Record<string, string> = remaining === undefined ? {} : { [RATE_LIMIT_HEADERS.remaining]: String(remaining) };
      return { ...result, headers: sayLimit({ ...result.headers, ...counted, 'x-amzn-requestid': requestId }) };
    } catch (error) {
      // A handler that throws past its middleware is a Lambda error (502 in AWS,
      // mapped to the generic 500 envelope by the DEFAULT_5XX gateway response).
      opts.logger.error('Handler failed', { requestId, route: match.route.id, ...errorFields(error) });
      return gatewayError(500, MESSAGES.internal);
    }
  }

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const requestId = randomUUID();
    let result: APIGatewayProxyResult;
    try {
      result = await answer(req, requestId);
    } catch (error) {
      opts.logger.error('Gateway failed', { requestId, ...errorFields(error) });
      result = jsonResponse(500, errorBody(MESSAGES.internal), { 'x-amzn-requestid': requestId });
    }
    send(res, result);
    opts.onResponse?.({
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0] ?? '/',
      status: result.statusCode,
      ms: performance.now() - started,
    });
  };
}
