/**
 * Which failures are throttles (lambdas/store/table/throttling.ts), and what
 * a route answers for them (lambdas/http/envelope.ts): a store throttle that
 * lasted is `503` with Retry-After and the envelope, anything unexpected the
 * generic `500`. The stores' own behaviour under throttling is held by
 * test/integration/batch-get-throttle.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { MESSAGES, NotFoundError, SERVICE_BUSY_RETRY_AFTER_SECONDS } from '../../lambdas/core/errors.js';
import { errorResponse } from '../../lambdas/http/envelope.js';
import { UnprocessedKeysError } from '../../lambdas/store/table/batch-get.js';
import { UnprocessedKeysError as FromFeeds } from '../../lambdas/store/feeds/feed-reads.js';
import { isThrottle } from '../../lambdas/store/table/throttling.js';
import { recordingLogger } from '../support/telemetry.js';

const named = (name: string) => Object.assign(new Error('x'), { name });
const THROTTLES = ['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'TooManyRequestsException', 'UnprocessedKeysError'];

describe('isThrottle', () => {
  it('holds for keys left unprocessed after every attempt, by class and by name (an error from another copy of the module)', () => {
    expect(FromFeeds).toBe(UnprocessedKeysError);
    expect(isThrottle(new UnprocessedKeysError(3))).toBe(true);
    expect(isThrottle({ name: 'UnprocessedKeysError' })).toBe(true);
  });

  it('holds for the SDK\'s throttles and its throttling mark, not for other failures', () => {
    for (const name of THROTTLES) expect(isThrottle(named(name))).toBe(true);
    expect(isThrottle(Object.assign(new Error('x'), { $retryable: { throttling: true } }))).toBe(true);
    for (const other of [new Error('boom'), named('ValidationException'), named('ConditionalCheckFailedException'), null, undefined, 'text']) expect(isThrottle(other)).toBe(false);
  });
});

describe('errorResponse', () => {
  it('answers a throttle 503 with Retry-After and the envelope, logged as a warning', () => {
    for (const error of [...THROTTLES.map(named), new UnprocessedKeysError(1)]) {
      const logger = recordingLogger();
      const res = errorResponse(error, logger, { requestId: 'r' });
      expect(res.statusCode).toBe(503);
      expect(res.headers?.['Retry-After']).toBe(String(SERVICE_BUSY_RETRY_AFTER_SECONDS));
      expect(JSON.parse(res.body)).toEqual({ success: false, message: MESSAGES.serviceBusy });
      expect(logger.entries.map((e) => e.level)).toEqual(['WARN']);
    }
  });

  it('answers anything else that is not an HttpError 500, and an HttpError its own status', () => {
    fc.assert(
      fc.property(fc.string().filter((name) => !THROTTLES.includes(name) && name !== 'FeedHeadFullError'), (name) => {
        expect(errorResponse(named(name), recordingLogger()).statusCode).toBe(500);
      }),
    );
    expect(errorResponse(new NotFoundError(), recordingLogger()).statusCode).toBe(404);
  });
});
