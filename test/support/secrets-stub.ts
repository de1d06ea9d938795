/**
 * A loopback stand-in for Secrets Manager's DescribeSecret and GetSecretValue
 * (the AWS SDK's JSON 1.1 protocol), for tests that run the Lambda entry points as AWS would
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
  /** Calls answered: `DescribeSecret`, `GetSecretValue {stage or version id}`. */
  calls: string[];
  /** Makes `value` the current version and the current one the previous (what put-secret-value does). */
  rotate(value: string): void;
  /** Stages `value` as the pending version (put-secret-value --version-stages AWSPENDING). */
  stage(value: string): void;
  /** Moves AWSCURRENT to the pending version, the current one becoming the previous (update-secret-version-stage); AWSPENDING stays on it, as on AWS. */
  promote(): void;
  close(): Promise<void>;
}

/**
 * A secret's versions as Secrets Manager keeps them: each an immutable value
 * with its staging labels, a label on one version at a time. The operations
 * an operator runs (docs/deploy.md) and the reads a function makes.
 */
export class SecretVersions {
  private readonly versions: { id: string; value: string; stages: Set<string> }[] = [];
  constructor(current: string) {
    this.add(current, ['AWSCURRENT']);
  }
  /** put-secret-value with these stages: a new version, each stage moved onto it (AWSCURRENT's old holder becomes AWSPREVIOUS). */
  add(value: string, stages: string[]): string {
    const id = `${String(this.versions.length + 1).padStart(8, '0')}-0000-4000-8000-${'0'.repeat(12)}`;
    this.versions.push({ id, value, stages: new Set() });
    for (const stage of stages) this.move(stage, id);
    return id;
  }
  /** update-secret-version-stage --move-to-version-id: AWSCURRENT moved makes its old holder AWSPREVIOUS. */
  move(stage: string, to: string): void {
    const from = this.versions.find((v) => v.stages.has(stage));
    if (from?.id === to) return;
    from?.stages.delete(stage);
    this.versions.find((v) => v.id === to)!.stages.add(stage);
    if (stage === 'AWSCURRENT' && from) this.move('AWSPREVIOUS', from.id);
  }
  holder(stage: string): string | undefined {
    return this.versions.find((v) => v.stages.has(stage))?.id;
  }
  /** DescribeSecret's VersionIdsToStages: every version that holds a label, with its labels, in one answer. */
  describe(): Record<string, string[]> {
    return Object.fromEntries(this.versions.filter((v) => v.stages.size).map((v) => [v.id, [...v.stages]]));
  }
  /** GetSecretValue by version id or stage, or undefined when no version answers it. */
  value(by: { VersionId?: string; VersionStage?: string }): { id: string; value: string; stages: string[] } | undefined {
    const v = by.VersionId !== undefined ? this.versions.find((x) => x.id === by.VersionId) : this.versions.find((x) => x.stages.has(by.VersionStage ?? 'AWSCURRENT'));
    return v && (by.VersionStage === undefined || v.stages.has(by.VersionStage)) ? { id: v.id, value: v.value, stages: [...v.stages] } : undefined;
  }
}

export async function startSecretsStub(current: string, arn = 'arn:aws:secretsmanager:local:123456789012:secret:CursorKey-AbCdEf'): Promise<SecretsStub> {
  const versions = new SecretVersions(current);
  const calls: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { SecretId?: string; VersionStage?: string; VersionId?: string };
      const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1];
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(json));
      };
      const notFound = (message: string) => answer(400, { __type: 'ResourceNotFoundException', message });
      if (operation === 'DescribeSecret') {
        calls.push(operation);
        return body.SecretId === arn ? answer(200, { ARN: arn, Name: 'CursorKey', VersionIdsToStages: versions.describe() }) : notFound("Secrets Manager can't find the specified secret.");
      }
      calls.push(`GetSecretValue ${body.VersionId ?? body.VersionStage ?? 'AWSCURRENT'}`);
      const found = body.SecretId === arn ? versions.value(body) : undefined;
      if (!found) return notFound(`Secrets Manager can't find the specified secret value for ${body.VersionId ? `VersionId: ${body.VersionId}` : `staging label: ${body.VersionStage ?? 'AWSCURRENT'}`}`);
      answer(200, { ARN: arn, Name: 'CursorKey', VersionId: found.id, SecretString: found.value, VersionStages: found.stages });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arn,
    calls,
    rotate: (value) => void versions.add(value, ['AWSCURRENT']),
    stage: (value) => void versions.add(value, ['AWSPENDING']),
    promote: () => versions.move('AWSCURRENT', versions.holder('AWSPENDING')!),
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
