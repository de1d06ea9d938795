/**
 * A loopback stand-in for Secrets Manager's GetSecretValue (the AWS SDK's JSON
 * 1.1 protocol), for tests that run the Lambda entry points as AWS would
 * (configured from the environment, AWS_ENDPOINT_URL_SECRETS_MANAGER pointing
 * here). The rehearsal has its own, IAM-checked (local/rehearsal/aws-endpoint.ts).
 */
import { afterAll, beforeAll } from '@jest/globals';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SecretsStub {
  url: string;
  /** The ARN the stub answers for. */
  arn: string;
  /** GetSecretValue calls answered, by version stage. */
  calls: string[];
  /** Makes `value` the current version and the current one the previous (what put-secret-value does). */
  rotate(value: string): void;
  /** Stages `value` as the pending version (put-secret-value --version-stages AWSPENDING). */
  stage(value: string): void;
  /** Moves AWSCURRENT to the pending version, the current one becoming the previous (update-secret-version-stage). */
  promote(): void;
  close(): Promise<void>;
}

export async function startSecretsStub(current: string, arn = 'arn:aws:secretsmanager:local:123456789012:secret:CursorKey-AbCdEf'): Promise<SecretsStub> {
  const versions: { current: string; previous?: string; pending?: string } = { current };
  const calls: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { SecretId?: string; VersionStage?: string };
      const stage = body.VersionStage ?? 'AWSCURRENT';
      calls.push(stage);
      const value = body.SecretId !== arn ? undefined : stage === 'AWSCURRENT' ? versions.current : stage === 'AWSPREVIOUS' ? versions.previous : stage === 'AWSPENDING' ? versions.pending : undefined;
      res.writeHead(value === undefined ? 400 : 200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(value === undefined ? { __type: 'ResourceNotFoundException', message: `no ${stage} version` } : { ARN: arn, Name: 'CursorKey', SecretString: value, VersionStages: [stage] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arn,
    calls,
    rotate(value) {
      versions.previous = versions.current;
      versions.current = value;
    },
    stage(value) {
      versions.pending = value;
    },
    promote() {
      versions.previous = versions.current;
      versions.current = versions.pending!;
      versions.pending = undefined;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The stand-in for a test file's life, with an SDK client on it that never
 * retries (a refused read is the test's to see): started before the file's
 * tests, closed after them.
 */
export function useSecretsStub(current: string): { readonly stub: SecretsStub; readonly client: SecretsManagerClient } {
  let stub: SecretsStub | undefined;
  let client: SecretsManagerClient | undefined;
  beforeAll(async () => {
    stub = await startSecretsStub(current);
    client = new SecretsManagerClient({ endpoint: stub.url, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  });
  afterAll(async () => {
    client?.destroy();
    await stub?.close();
  });
  return {
    get stub() {
      return stub!;
    },
    get client() {
      return client!;
    },
  };
}
