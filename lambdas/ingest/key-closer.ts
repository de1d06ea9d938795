/**
 * A user's deletion, as the ingest closes their keys in AWS: its role may
 * read no key record (PRODUCT P3: only the authorizer's and the key
 * manager's may), so it invokes the key-management function's `close` task
 * (lambdas/key-admin/tasks.ts) synchronously and waits for it, the settle
 * of the user's tombstone going on only once every key of theirs is
 * closed. One invoke closes a bounded share (the task answers `done`, or
 * not yet: the settle invokes it again, between invokes checking its own
 * time: lambdas/store/changes/settle.ts). A throttle, the invoke's (Lambda's
 * concurrency used up) or one the task met inside (it answers `throttled`),
 * throws a KeyCloseFailed marked as a throttle, so the ingest backs off as
 * for a DynamoDB throttle without using up the record's deliveries
 * (lambdas/ingest/handler.ts); any other failure (a function error, a
 * timeout, a refusal) throws, so the change fails and SQS delivers it again.
 * Closing is idempotent and resumable.
 *
 * The SDK's Lambda client signs and retries the call (its standard
 * strategy, like every other AWS call here); a throttle that outlasts its
 * retries is marked `$retryable.throttling`, so the ingest backs off as for
 * a DynamoDB throttle (lambdas/store/table/throttling.ts). The endpoint
 * follows the SDK's own settings (AWS_ENDPOINT_URL_LAMBDA, AWS_ENDPOINT_URL),
 * which the rehearsal points at its AWS stand-in.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { CloseTaskResult, KeyTask } from '../key-admin/tasks.js';
import { isThrottle } from '../store/table/throttling.js';

export class KeyCloseFailed extends Error {
  constructor(
    message: string,
    /** A throttle of the invoke: the change backs off as for a DynamoDB throttle. */
    readonly $retryable?: { throttling: boolean },
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'KeyCloseFailed';
  }
}

export interface KeyCloserOptions {
  region: string;
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Default: the SDK's (AWS_ENDPOINT_URL_LAMBDA, AWS_ENDPOINT_URL, else Lambda's regional endpoint). */
  endpoint?: string;
  /** The SDK's attempts per invoke (its default: 3). */
  maxAttempts?: number;
}

interface SdkError {
  name?: string;
  message?: string;
  $retryable?: { throttling?: boolean };
  $metadata?: { httpStatusCode?: number };
}

/** Lambda's throttle (TooManyRequestsException, 429: a concurrency or rate limit) is not marked retryable in its model: isThrottle knows its name, and a 429 of another name is one too. */
const isInvokeThrottle = (err: SdkError): boolean => isThrottle(err) || err.$metadata?.httpStatusCode === 429;

/**
 * What a close task's answer means for the settle: true when done, false
 * when the task stopped at its bound (invoke it again); a throttle inside it
 * throws as a throttle. An answer without `done` is a function deployed
 * before closes were bounded, which closed everything or failed.
 */
export function closeOutcome(userId: string, answer: unknown): boolean {
  const result = answer as Partial<CloseTaskResult> | null;
  if (result?.throttled) throw new KeyCloseFailed(`closing ${userId}'s keys: the key-management function was throttled (the table or API Gateway); backing off`, { throttling: true });
  return result?.done !== false;
}

export function invokeKeyCloser(functionArn: string, opts: KeyCloserOptions): (userId: string, version: number) => Promise<boolean> {
  const client = new LambdaClient({
    region: opts.region,
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
  });
  return async (userId, version) => {
    const task: KeyTask = { task: 'close', userId, version };
    let out;
    try {
      out = await client.send(new InvokeCommand({ FunctionName: functionArn, InvocationType: 'RequestResponse', Payload: new TextEncoder().encode(JSON.stringify(task)) }));
    } catch (e) {
      const err = e as SdkError;
      throw new KeyCloseFailed(`closing ${userId}'s keys: Lambda refused the invoke (${err.name ?? 'Error'}): ${String(err.message ?? e).slice(0, 300)}`, isInvokeThrottle(err) ? { throttling: true } : undefined, { cause: e });
    }
    const text = out.Payload ? new TextDecoder().decode(out.Payload) : '';
    if (out.FunctionError) throw new KeyCloseFailed(`closing ${userId}'s keys failed in the key-management function (${out.FunctionError}): ${text.slice(0, 300)}`);
    return closeOutcome(userId, text ? (JSON.parse(text) as unknown) : null);
  };
}
