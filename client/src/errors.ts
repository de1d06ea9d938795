/**
 * What a failed call throws. Every error carries the HTTP status (null when no
 * answer came), the API's message and its per-field `errors`, and how many
 * attempts were made. None of them ever holds the key or a request header.
 */

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  override readonly name: string = 'ApiError';
  constructor(
    message: string,
    /** The HTTP status, or null when no answer came (network failure, timeout). */
    readonly status: number | null,
    /** Per-parameter failures of a 400; empty otherwise. */
    readonly errors: FieldError[],
    /** Requests made, the first included. */
    readonly attempts: number,
  ) {
    super(message);
  }
}

/** A 429 whose wait (Retry-After, else X-RateLimit-Reset) is longer than the client may sleep, or with retries spent. */
export class RateLimitError extends ApiError {
  override readonly name: string = 'RateLimitError';
  constructor(
    message: string,
    errors: FieldError[],
    attempts: number,
    /** Milliseconds until the API says a retry may succeed; null when it did not say. */
    readonly retryAfterMs: number | null,
  ) {
    super(message, 429, errors, attempts);
  }
}

/** No answer: the connection failed or no response came within the timeout. */
export class NetworkError extends ApiError {
  override readonly name: string = 'NetworkError';
  constructor(message: string, attempts: number) {
    super(message, null, [], attempts);
  }
}

/** A changes feed's cursor older than the API keeps changes (410): start again without a cursor. */
export class CursorExpiredError extends ApiError {
  override readonly name: string = 'CursorExpiredError';
  constructor(message: string, attempts: number) {
    super(message, 410, [], attempts);
  }
}
