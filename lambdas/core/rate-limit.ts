/**
 * The rate-limit headers of the Public API (issue 19, PRODUCT P4): every
 * answer says the key's daily quota (`X-RateLimit-Limit`) and when it starts
 * again (`X-RateLimit-Reset`, Unix seconds of the next UTC midnight), so a
 * client can plan before it meets the 429. `X-RateLimit-Remaining` is sent
 * only by whoever really counts: the local server, and API Gateway's quota
 * 429 (0). In AWS the usage plan counts and no Lambda sees its count, so the
 * Lambda answers carry no Remaining rather than an invented one.
 */
/** Requests per key per UTC day on the Public API (PRODUCT P4). */
export const DAILY_QUOTA = 1000;

/** The daily quota window's end (PRODUCT P4): the next UTC midnight after `now`. */
export function quotaReset(now: Date): { resetEpochSeconds: number; retryAfterSeconds: number } {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return { resetEpochSeconds: next / 1000, retryAfterSeconds: Math.ceil((next - now.getTime()) / 1000) };
}

export const RATE_LIMIT_HEADERS = {
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
} as const;

/** Limit and Reset, the two every Public answer a Lambda or the local server gives carries. */
export function rateLimitHeaders(now: Date): Record<string, string> {
  return { [RATE_LIMIT_HEADERS.limit]: String(DAILY_QUOTA), [RATE_LIMIT_HEADERS.reset]: String(quotaReset(now).resetEpochSeconds) };
}
