/**
 * The retry rules as pure functions, so the transport and its tests share one
 * definition: which answers are worth another attempt, and how long to wait.
 */

/** 408, 429 and every 5xx may succeed if asked again; other 4xx will not. */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/** Retry-After as milliseconds (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * X-RateLimit-Reset as milliseconds from now, or null. The API sends the Unix
 * seconds of the next UTC midnight (docs/errors-and-rate-limits.md); other
 * APIs send seconds until the reset (delta-seconds, like Retry-After). A value
 * no delta could be (over a billion seconds, ~31 years) is read as a Unix
 * timestamp, anything smaller as a delta.
 */
export function rateLimitResetMs(header: string | null, now: number): number | null {
  if (!header || !/^\d+$/.test(header.trim())) return null;
  const seconds = Number(header.trim());
  return seconds >= 1e9 ? Math.max(0, seconds * 1000 - now) : seconds * 1000;
}

/** Exponential backoff with "equal jitter": half of base·2^(retry-1) fixed, half random. */
export function backoffMs(retry: number, baseMs: number, random: () => number): number {
  const ceiling = baseMs * 2 ** (retry - 1);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * A network failure worth retrying, described without any request detail (so
 * never the URL's query or a header), or null for any other error.
 */
export function transientFailure(error: unknown, timeoutMs: number): string | null {
  // By name, not instanceof: the abort reason may be a DOMException from another realm.
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no response within ${timeoutMs} ms`;
  let cause: unknown = error;
  for (let depth = 0; cause && depth < 4; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return `network error (${code})`;
    cause = (cause as { cause?: unknown }).cause;
  }
  // Browsers give a bare TypeError without a cause for any network failure
  // ("Failed to fetch", "NetworkError when…", "Load failed"); Node's fetch
  // always names a cause, handled above.
  if (error instanceof TypeError && error.cause === undefined && /failed to fetch|networkerror|load failed/i.test(error.message)) return 'network error';
  return null;
}
