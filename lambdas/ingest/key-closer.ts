/**
 * A user's deletion, as the ingest closes their keys in AWS: its role may
 * read no key record (PRODUCT P3: only the authorizer's and the key
 * manager's may), so it invokes the key-management function's `close` task
 * (lambdas/key-admin/tasks.ts) synchronously and waits for it, the settle
 * of the user's tombstone going on only once every key of theirs answers
 * 401. Any failure (a function error, a throttle, a timeout, a refusal)
 * throws, so the change fails and SQS delivers it again; closing is
 * idempotent.
 *
 * Lambda's Invoke API (POST /2015-03-31/functions/{name}/invocations, a
 * function error told by X-Amz-Function-Error), signed with Signature
 * Version 4 by the AWS SDK's own signer: @aws-sdk/client-lambda is not a
 * dependency of the project (one request shape is all the ingest needs).
 * The endpoint follows the SDK's own settings (AWS_ENDPOINT_URL_LAMBDA,
 * AWS_ENDPOINT_URL), which the rehearsal points at its AWS stand-in.
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { KeyTask } from '../key-admin/tasks.js';

export class KeyCloseFailed extends Error {
  constructor(
    message: string,
    /** A throttle of the invoke: the change backs off as for a DynamoDB throttle (lambdas/store/throttling.ts). */
    readonly $retryable?: { throttling: boolean },
  ) {
    super(message);
    this.name = 'KeyCloseFailed';
  }
}

export interface KeyCloserOptions {
  region: string;
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Default: AWS_ENDPOINT_URL_LAMBDA, AWS_ENDPOINT_URL, else Lambda's regional endpoint. */
  endpoint?: string;
}

export function invokeKeyCloser(functionArn: string, opts: KeyCloserOptions): (userId: string, version: number) => Promise<void> {
  const endpoint = new URL(opts.endpoint ?? process.env.AWS_ENDPOINT_URL_LAMBDA ?? process.env.AWS_ENDPOINT_URL ?? `https://lambda.${opts.region}.amazonaws.com`);
  const signer = new SignatureV4({ service: 'lambda', region: opts.region, sha256: Sha256, credentials: opts.credentials ?? defaultProvider() });
  const path = `${endpoint.pathname.replace(/\/$/, '')}/2015-03-31/functions/${encodeURIComponent(functionArn)}/invocations`;
  return async (userId, version) => {
    const task: KeyTask = { task: 'close', userId, version };
    const body = JSON.stringify(task);
    const signed = await signer.sign({
      method: 'POST',
      protocol: endpoint.protocol,
      hostname: endpoint.hostname,
      ...(endpoint.port ? { port: Number(endpoint.port) } : {}),
      // The signer signs the path as sent: its one segment that is escaped (the function's ARN) must be escaped in both.
      path,
      headers: { host: endpoint.host, 'content-type': 'application/json', 'x-amz-invocation-type': 'RequestResponse' },
      body,
    });
    const response = await fetch(`${endpoint.origin}${path}`, { method: 'POST', headers: signed.headers, body });
    const text = await response.text();
    if (!response.ok) {
      const type = (response.headers.get('x-amzn-errortype') ?? `HTTP ${response.status}`).split(':')[0]!;
      throw new KeyCloseFailed(`closing ${userId}'s keys: Lambda refused the invoke (${type}): ${text.slice(0, 300)}`, response.status === 429 ? { throttling: true } : undefined);
    }
    const functionError = response.headers.get('x-amz-function-error');
    if (functionError) throw new KeyCloseFailed(`closing ${userId}'s keys failed in the key-management function (${functionError}): ${text.slice(0, 300)}`);
  };
}
