/**
 * API Gateway answers some requests itself (no route, no or bad key, quota,
 * throttle, its own failures). These gateway responses make every one of them
 * the spec's JSON envelope with the right status (PRODUCT P4, P12); the Embed
 * API's also carry CORS so a browser can read them.
 */
import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { DAILY_QUOTA, QUOTA_EXCEEDED_HEADERS } from '../lambdas/core/authorize.js';
import { MESSAGES } from '../lambdas/core/errors.js';

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

/** Headers of the daily-quota 429: static, or mapped from the authorizer's context. */
export const QUOTA_HEADERS: Record<string, string> = Object.fromEntries(
  Object.entries(QUOTA_EXCEEDED_HEADERS).map(([name, source]) => [name, 'value' in source ? q(source.value) : `context.authorizer.${source.context}`]),
);

const common: EnvelopeResponse[] = [
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, statusCode: '404', body: envelope(MESSAGES.resourceNotFound) },
  { type: ResponseType.RESOURCE_NOT_FOUND, statusCode: '404', body: envelope(MESSAGES.resourceNotFound) },
  // Anything else API Gateway says: its own message, as a JSON string, in the envelope.
  { type: ResponseType.DEFAULT_4XX, body: '{"success":false,"message":$context.error.messageString}' },
  { type: ResponseType.DEFAULT_5XX, statusCode: '500', body: envelope(MESSAGES.internal) },
];

export const PUBLIC_RESPONSES: EnvelopeResponse[] = [
  { type: ResponseType.UNAUTHORIZED, statusCode: '401', body: envelope(MESSAGES.notAuthenticated) },
  { type: ResponseType.ACCESS_DENIED, statusCode: '403', body: envelope(MESSAGES.insufficientScope) },
  // Raised only when a key the authorizer accepted has no plan key: the key
  // cannot be used, so it is answered as not authenticated (see docs/design.md).
  { type: ResponseType.INVALID_API_KEY, statusCode: '401', body: envelope(MESSAGES.notAuthenticated) },
  { type: ResponseType.QUOTA_EXCEEDED, statusCode: '429', body: envelope(MESSAGES.tooManyRequests), headers: QUOTA_HEADERS },
  // The per-key throttle is per second: retrying after a second is the honest hint.
  {
    type: ResponseType.THROTTLED,
    statusCode: '429',
    body: envelope(MESSAGES.tooManyRequests),
    headers: { 'X-RateLimit-Limit': q(String(DAILY_QUOTA)), 'Retry-After': q('1') },
  },
  { type: ResponseType.AUTHORIZER_FAILURE, statusCode: '500', body: envelope(MESSAGES.internal) },
  { type: ResponseType.AUTHORIZER_CONFIGURATION_ERROR, statusCode: '500', body: envelope(MESSAGES.internal) },
  ...common,
];

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
