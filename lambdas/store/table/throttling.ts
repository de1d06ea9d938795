/**
 * A write or read that DynamoDB refused for throughput (a hot partition or
 * item past its limit, on-demand's instant capacity exceeded) after the
 * SDK's retries, a BatchGetItem whose keys were still left unprocessed
 * after its backed-off attempts (batch-get.ts: DynamoDB leaves them so
 * under throttling), or a feed head still full after flushing (feed.ts): the
 * change is sound and will apply once the partition has room, so its record
 * comes back later with backoff (lambdas/core/retry-backoff.ts), not at
 * once and not after the queue's full visibility timeout; a read route
 * answers 503 with Retry-After (lambdas/http/envelope.ts). Also AWS's
 * TooManyRequestsException, the throttle of the other services the
 * functions call (API Gateway's key calls, whose quotas for managing keys are
 * fixed per account: "API Gateway quotas for creating, deploying and
 * managing an API" in
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html;
 * Lambda's Invoke), which their SDK models do not mark retryable: the
 * key-management API answers it 503 (lambdas/key-admin/handler.ts), the
 * ingest's key closer backs off (lambdas/ingest/key-closer.ts). Matched by
 * name too, since errors that crossed a module or SDK copy boundary fail
 * `instanceof`.
 */
const THROTTLE_NAMES = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'TooManyRequestsException', 'UnprocessedKeysError', 'FeedHeadFullError']);

export function isThrottle(error: unknown): boolean {
  const e = error as { name?: string; $retryable?: { throttling?: boolean } } | null;
  return !!e && (THROTTLE_NAMES.has(String(e.name)) || e.$retryable?.throttling === true);
}
