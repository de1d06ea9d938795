/**
 * The API's envelope `{success, message, data, pagination?, errors?}` taken
 * apart: a `success: true` answer gives its body; anything else becomes the
 * matching typed error. Messages come from the API or describe the status,
 * never the request, so no key or header can leak into them.
 */
import { ApiError, CursorExpiredError, NetworkError, RateLimitError, type FieldError } from './errors.js';
import type { Answer, NoAnswer } from './transport.js';

export interface SuccessBody {
  success: true;
  message: string;
  data: unknown;
  pagination?: unknown;
}

export function isSuccess(answer: Answer | NoAnswer): answer is Answer & { json: SuccessBody } {
  return answer.status !== null && answer.status >= 200 && answer.status < 300 && answer.json?.success === true;
}

/** The API's message for a failed answer, or one describing its status. */
export function failureMessage(answer: Answer | NoAnswer): string {
  if (answer.status === null) return answer.reason ?? 'The request failed';
  const message = answer.json?.message;
  return typeof message === 'string' ? message : `The API answered HTTP ${answer.status}${answer.json ? '' : ' without a JSON body'}`;
}

function fieldErrors(json: Record<string, unknown> | null): FieldError[] {
  const errors = json?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.filter((e): e is FieldError => typeof e === 'object' && e !== null && typeof e.field === 'string' && typeof e.message === 'string');
}

export function toError(answer: Answer | NoAnswer): ApiError {
  const message = failureMessage(answer);
  if (answer.status === null) return new NetworkError(message, answer.attempts);
  const errors = fieldErrors(answer.json);
  if (answer.status === 410) return new CursorExpiredError(message, answer.attempts);
  if (answer.status === 429) {
    return new RateLimitError(message, errors, answer.attempts, answer.declinedWaitMs ?? retryHintMs(answer.headers));
  }
  return new ApiError(message, answer.status, errors, answer.attempts);
}

/** The wait a (final) 429 asked for, for RateLimitError.retryAfterMs. */
function retryHintMs(headers: Headers): number | null {
  const after = headers.get('retry-after')?.trim();
  if (after && /^\d+$/.test(after)) return Number(after) * 1000;
  const reset = headers.get('x-ratelimit-reset')?.trim();
  if (reset && /^\d+$/.test(reset) && Number(reset) < 1e9) return Number(reset) * 1000;
  return null;
}

/** The success body, or throws the typed error. */
export function unwrap(answer: Answer | NoAnswer): SuccessBody {
  if (isSuccess(answer)) return answer.json;
  throw toError(answer);
}
