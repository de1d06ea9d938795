/**
 * API Gateway answers some requests itself (no route, no or bad key, quota,
 * throttle, its own failures). These gateway responses make every one of them
 * the spec's JSON envelope with the right status (PRODUCT P4, P12); the Embed
 * API's also carry CORS so a browser can read them, the Public API's its
 * daily quota (`X-RateLimit-Limit`, issue 19).
 *
 * Header values: AWS documents gateway response parameters as taking "any
 * incoming request parameter value or a static custom value", and each of its
 * examples maps a literal or `method.request.*`:
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-swagger-extensions-gateway-responses.gatewayResponse.html
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-swagger-extensions-gateway-responses.responseParameters.html
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-gateway-response-using-the-console.html
 * `context.*` appears only on the general parameter-mapping page, so a
 * mapping from the authorizer's context might be refused by API Gateway and
 * roll the stack back. By default every value here is therefore a literal;
 * the quota 429's X-RateLimit-Reset and Retry-After, which only the
 * authorizer's context can give, are mapped only with `-c quotaHeaders=context`.
 */
import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { DAILY_QUOTA, QUOTA_EXCEEDED_HEADERS } from '../lambdas/core/authorize.js';
import { MESSAGES } from '../lambdas/core/errors.js';
import { RATE_LIMIT_HEADERS } from '../lambdas/core/rate-limit.js';

export { DAILY_QUOTA };

const envelope = (message: string) => JSON.stringify({ success: false, message });
const q = (value: string) => `'${value}'`;

export interface EnvelopeResponse {
  type: ResponseType;
  /** Omitted: API Gateway's own status for that response type. */
  statusCode?: string;
  body: string;
  headers?: Record<string, string>;
}

/** `static`: literal header values only (the default); `context`: the quota 429 also maps the authorizer's context. */
export type QuotaHeaderSource = 'static' | 'context';

/** Headers of the daily-quota 429: the literal ones, plus those mapped from the authorizer's context in `context` mode. */
export function quotaHeaders(source: QuotaHeaderSource): Record<string, string> {
  return Object.fromEntries(
    Object.entries(QUOTA_EXCEEDED_HEADERS).flatMap(([name, from]) =>
      'value' in from ? [[name, q(from.value)]] : source === 'context' ? [[name, `context.authorizer.${from.context}`]] : [],
    ),
  );
}

/** What every Public gateway response says whatever the mode: the key's daily quota, a constant. */
const PUBLIC_LIMIT = { [RATE_LIMIT_HEADERS.limit]: q(String(DAILY_QUOTA)) };

const common: EnvelopeResponse[] = [
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, statusCode: '404', body: envelope(MESSAGES.resourceNotFound) },
  { type: ResponseType.RESOURCE_NOT_FOUND, statusCode: '404', body: envelope(MESSAGES.resourceNotFound) },
  // Anything else API Gateway says: its own message, as a JSON string, in the envelope.
  { type: ResponseType.DEFAULT_4XX, body: '{"success":false,"message":$context.error.messageString}' },
  { type: ResponseType.DEFAULT_5XX, statusCode: '500', body: envelope(MESSAGES.internal) },
];

export const publicResponses = (source: QuotaHeaderSource): EnvelopeResponse[] => [
  { type: ResponseType.UNAUTHORIZED, statusCode: '401', body: envelope(MESSAGES.notAuthenticated) },
  { type: ResponseType.ACCESS_DENIED, statusCode: '403', body: envelope(MESSAGES.insufficientScope) },
  // Raised only when a key the authorizer accepted has no plan key: the key
  // cannot be used, so it is answered as not authenticated (see docs/design.md).
  { type: ResponseType.INVALID_API_KEY, statusCode: '401', body: envelope(MESSAGES.notAuthenticated) },
  { type: ResponseType.QUOTA_EXCEEDED, statusCode: '429', body: envelope(MESSAGES.tooManyRequests), headers: quotaHeaders(source) },
  // The per-key and the stage throttles are per second: retrying after a second is the honest hint.
  { type: ResponseType.THROTTLED, statusCode: '429', body: envelope(MESSAGES.tooManyRequests), headers: { 'Retry-After': q('1') } },
  { type: ResponseType.AUTHORIZER_FAILURE, statusCode: '500', body: envelope(MESSAGES.internal) },
  { type: ResponseType.AUTHORIZER_CONFIGURATION_ERROR, statusCode: '500', body: envelope(MESSAGES.internal) },
  ...common,
].map((r) => ({ ...r, headers: { ...PUBLIC_LIMIT, ...r.headers } }));

export const EMBED_RESPONSES: EnvelopeResponse[] = [
  { type: ResponseType.THROTTLED, statusCode: '429', body: envelope(MESSAGES.tooManyRequests), headers: { 'Retry-After': q('1') } },
  ...common,
];

export function addEnvelopeResponses(api: RestApi, responses: EnvelopeResponse[], extraHeaders: Record<string, string> = {}): void {
  for (const r of responses) {
    api.addGatewayResponse(`Gateway${r.type.responseType}`, {
      type: r.type,
      ...(r.statusCode ? { statusCode: r.statusCode } : {}),
      responseHeaders: { 'Content-Type': q('application/json'), ...extraHeaders, ...r.headers },
      templates: { 'application/json': r.body },
    });
  }
}
