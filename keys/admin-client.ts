/**
 * The typed client of the key-management API, for the web product's backend:
 * every request signed with Signature Version 4 by the AWS SDK's own signer
 * (@smithy/signature-v4, service `execute-api`), with credentials from the
 * SDK's default chain (the web product's role in AWS) unless given. Answers
 * are unwrapped from the envelope; refusals throw KeyAdminError with the
 * status, the field and the code. See docs/managing-keys.md.
 *
 * Self-contained on purpose (only AWS SDK packages): the web product can
 * take this one file without taking the rest of this project.
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

export type KeyScope = 'events:read' | 'guests:read';

/** What may be shown about a key: never the key, never its hash. */
export interface KeyInfo {
  keyId: string;
  name: string;
  scopes: KeyScope[];
  /** null for keys seeded from a dataset. */
  createdAt: string | null;
  revoked: boolean;
  revokedAt: string | null;
}

/** The first answer to a create: the key, shown this once. */
export interface CreatedKey extends KeyInfo {
  key: string;
  replayed: false;
}

/** A retried create (same idempotency key, same parameters): the key it made, without the key itself. */
export interface ReplayedKey extends KeyInfo {
  replayed: true;
}

export interface RevokedKey extends KeyInfo {
  revoked: true;
  revokedAt: string;
  /** false: the key is revoked, but its API Gateway plan key could not be deleted yet (the next revoke tries again). */
  planKeyRemoved: boolean;
}

export interface CreateKeyInput {
  /** One per intended key (a UUID): a retry with it never makes a second key. */
  idempotencyKey: string;
  username: string;
  name: string;
  /** Default: both scopes. */
  scopes?: KeyScope[];
}

export interface KeyAdminClientOptions {
  /** The stack's KeyAdminApiUrl output (locally: the server's "Key admin" URL). */
  baseUrl: string;
  /** The stack's region (the signature's scope). */
  region: string;
  /** Default: the AWS SDK's default credential chain. */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  fetch?: typeof fetch;
}

export class KeyAdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The request field the refusal is about (absent for IAM refusals). */
    readonly field?: string,
    /** The refusal's code: UNKNOWN_USER, LIMIT_REACHED, ALREADY_REVOKED, IDEMPOTENCY_MISMATCH, IN_PROGRESS, … */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'KeyAdminError';
  }
}

interface Envelope<T> {
  success: boolean;
  message: string;
  data?: T;
  errors?: { field: string; message: string }[];
  code?: string;
}

export class KeyAdminClient {
  private readonly signer: SignatureV4;
  private readonly base: URL;
  private readonly fetch: typeof fetch;

  constructor(options: KeyAdminClientOptions) {
    this.base = new URL(options.baseUrl.replace(/\/+$/, ''));
    this.fetch = options.fetch ?? globalThis.fetch;
    this.signer = new SignatureV4({ service: 'execute-api', region: options.region, sha256: Sha256, credentials: options.credentials ?? defaultProvider() });
  }

  /** Creates a key; a retry with the same idempotency key answers the same key id without the key (`replayed: true`). */
  create(input: CreateKeyInput): Promise<CreatedKey | ReplayedKey> {
    return this.send('POST', '/keys', input);
  }

  /** The user's keys, revoked ones included; never a key or its hash. */
  list(username: string): Promise<KeyInfo[]> {
    return this.send('GET', `/users/${encodeURIComponent(username)}/keys`);
  }

  /** Revokes at once: the key's next request is refused. A key already revoked throws KeyAdminError 409 ALREADY_REVOKED. */
  revoke(keyId: string): Promise<RevokedKey> {
    return this.send('DELETE', `/keys/${encodeURIComponent(keyId)}`);
  }

  private async send<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = new URL(`${this.base.pathname}${path}`, this.base);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const query: Record<string, string> = Object.fromEntries(url.searchParams);
    const signed = await this.signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query,
      // host is signed; fetch sends the same value itself.
      headers: { host: url.host, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(payload !== undefined ? { body: payload } : {}),
    });
    const { host: _host, ...headers } = signed.headers;
    void _host;
    const response = await this.fetch(url, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
    const text = await response.text();
    let parsed: Envelope<T> | { message?: string } | undefined;
    try {
      parsed = JSON.parse(text) as Envelope<T>;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const envelope = parsed as Envelope<T> | undefined;
      throw new KeyAdminError(response.status, envelope?.message ?? (text || response.statusText), envelope?.errors?.[0]?.field, envelope?.code);
    }
    return (parsed as Envelope<T>).data as T;
  }
}
