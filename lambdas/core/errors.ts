/**
 * Typed errors with the middy http-error contract (`statusCode`, `expose`).
 * One middleware (lambdas/http/envelope.ts) renders them as the JSON envelope;
 * anything else becomes a generic 500 and is never serialised to the client.
 */

export interface FieldError {
  field: string;
  message: string;
}

export const MESSAGES = {
  notAuthenticated: 'Not authenticated.',
  insufficientScope: 'Insufficient API key scope.',
  resourceNotFound: 'Resource not found.',
  userNotFound: 'User not found',
  typedUserNotFound: 'Username missing or user not found',
  usernameRequired: 'Username is required',
  eventIdRequired: 'Event id is required',
  limitRange: 'Limit must be between 1 and 100',
  limitNotInteger: 'Limit must be an integer between 1 and 100',
  invalidDate: 'Invalid date format. Use ISO 8601 format',
  tooManyRequests: 'Too many requests. Please try again later.',
  // API Gateway's request size quotas (local/request-limits.ts enforces them locally).
  uriTooLong: 'Request URI too long.',
  headersTooLarge: 'Request header fields too large.',
  serviceBusy: 'Service busy, please retry shortly.',
  internal: 'Internal server error.',
} as const;

export class HttpError extends Error {
  readonly expose = true;
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends HttpError {
  constructor(readonly errors: FieldError[]) {
    // The envelope's message is the first failure's text (PRODUCT P6).
    super(400, errors[0]?.message ?? 'Invalid request');
  }
}

/** A 400 that is not a parameter-format failure (Variant B's unknown user). */
export class BadRequestError extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}

export class NotAuthenticatedError extends HttpError {
  constructor() {
    super(401, MESSAGES.notAuthenticated);
  }
}

export class NotFoundError extends HttpError {
  constructor(message: string = MESSAGES.resourceNotFound) {
    super(404, message);
  }
}

/** Seconds a client is asked to wait after a 503 (Retry-After): a throttled partition has room again within seconds. */
export const SERVICE_BUSY_RETRY_AFTER_SECONDS = 3;

/**
 * A store throttle that outlasted the SDK's retries and the store's own
 * attempts (lambdas/store/table/throttling.ts), or a dependency the answer
 * needs that cannot be reached for now (the feeds' cursor keys): nothing is
 * wrong with the request, so the answer says to retry it then, not that the
 * service failed.
 */
export class ServiceBusyError extends HttpError {
  constructor(retryAfterSeconds: number = SERVICE_BUSY_RETRY_AFTER_SECONDS) {
    super(503, MESSAGES.serviceBusy, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}

export function isHttpError(error: unknown): error is HttpError {
  return error instanceof HttpError;
}
