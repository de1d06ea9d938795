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
}

/** One page of a user's keys; `cursor` (null on the last page) asks for the next. */
export interface KeyPage {
  keys: KeyInfo[];
  cursor: string | null;
}

export interface CreateKeyInput {
  /** One per intended key (a UUID): a retry with it never makes a second key. */
  idempotencyKey: string;
  /** The web product's user id (usr_…): a key belongs to a user id, never to a username (usernames change and are reused). */
  userId: string;
  name: string;
  /** Default: both scopes. */
  scopes?: KeyScope[];
}

/** What a webhook follows (PRODUCT P18): one changes feed, a host and an event named by id. */
export type WebhookScope =
  | { type: 'catalogue' }
  | { type: 'host'; userId: string }
  | { type: 'place'; city?: string; country?: string }
  | { type: 'guests'; eventId: string };

export interface CreateWebhookInput {
  /** https, port 443, no credentials, at most 2,048 characters; its host must resolve to public addresses only. */
  url: string;
  scope: WebhookScope;
  /** Deliveries start after this P16 cursor of the scope's feed (the consumer's own, from a pull). */
  start_cursor?: string;
  /** The scope's present contents first, then its changes (default: from the scope's next change). */
  backfill?: boolean;
  /** A retry with the same one answers the webhook it made, without its secret. */
  idempotencyKey?: string;
}

/** A webhook's state: never its secret, never a receiver's answer. */
export interface WebhookInfo {
  webhookId: string;
  keyId: string;
  scope: WebhookScope;
  url: string;
  state: 'active' | 'retrying' | 'disabled';
  createdAt: string;
  retryAt: string | null;
  disabledReason: 'gone' | 'failing' | 'key_closed' | null;
  disabledAt: string | null;
  lastFailure: { at: string; status?: number; errorClass?: string } | null;
  lastSuccessAt: string | null;
  previousSecretValidUntil: string | null;
}

/** The first answer to a create: the secret, shown this once (the receiver verifies deliveries with it). */
export interface CreatedWebhook extends WebhookInfo {
  secret: string;
  replayed: false;
}

/** A retried create (same idempotency key, same parameters): the webhook it made, without its secret. */
export interface ReplayedWebhook extends WebhookInfo {
  replayed: true;
}

/** A rotation's answer: the new secret, shown this once; until `previousSecretValidUntil` deliveries carry both signatures. */
export interface RotatedWebhook extends WebhookInfo {
  secret: string;
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
    /**
     * The refusal's code: UNKNOWN_USER, LIMIT_REACHED, CREATE_LIMIT, ALREADY_REVOKED, IDEMPOTENCY_MISMATCH, IN_PROGRESS, …;
     * for webhooks also UNKNOWN_KEY, KEY_REVOKED, BAD_URL, BAD_SCOPE, UNKNOWN_SCOPE, BAD_CURSOR, UNKNOWN_WEBHOOK, NOT_DISABLED
     * (docs/webhooks.md).
     */
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

  /** Every key of the user, revoked ones included, oldest first (page after page); never a key or its hash. */
  async list(userId: string): Promise<KeyInfo[]> {
    const keys: KeyInfo[] = [];
    let cursor: string | null = null;
    do {
      const page: KeyPage = await this.listPage(userId, { cursor });
      keys.push(...page.keys);
      cursor = page.cursor;
    } while (cursor);
    return keys;
  }

  /** One page of the user's keys (at most `limit`, 100 by default). */
  async listPage(userId: string, page: { cursor?: string | null; limit?: number } = {}): Promise<KeyPage> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    if (page.cursor) query.set('cursor', page.cursor);
    const { data, envelope } = await this.request<KeyInfo[]>('GET', `/users/${encodeURIComponent(userId)}/keys${query.size ? `?${query}` : ''}`);
    return { keys: data, cursor: (envelope as { cursor?: string | null }).cursor ?? null };
  }

  /**
   * Revokes a user's key at once: its next request is refused, whatever else
   * was in flight. A key already revoked throws KeyAdminError 409
   * ALREADY_REVOKED; a key that is not this user's, 404 UNKNOWN_KEY.
   */
  revoke(userId: string, keyId: string): Promise<RevokedKey> {
    return this.send('DELETE', `/users/${encodeURIComponent(userId)}/keys/${encodeURIComponent(keyId)}`);
  }

  /**
   * Creates a webhook of the key (at most 5 per key); its secret is in this answer only. A retry with the same
   * `idempotencyKey` and parameters answers the same webhook, replayed, without the secret.
   */
  createWebhook(userId: string, keyId: string, input: CreateWebhookInput): Promise<CreatedWebhook | ReplayedWebhook> {
    return this.send('POST', `${this.keyPath(userId, keyId)}/webhooks`, input);
  }

  /** The key's webhooks (at most 5), oldest first; never a secret. */
  listWebhooks(userId: string, keyId: string): Promise<WebhookInfo[]> {
    return this.send('GET', `${this.keyPath(userId, keyId)}/webhooks`);
  }

  /** Its state: active, retrying (and when), disabled (and why), the last failure's status or error class and time. */
  getWebhook(userId: string, keyId: string, webhookId: string): Promise<WebhookInfo> {
    return this.send('GET', `${this.keyPath(userId, keyId)}/webhooks/${encodeURIComponent(webhookId)}`);
  }

  /** No delivery of it starts from the answer on; a second delete is 404 UNKNOWN_WEBHOOK (treat it as done). */
  deleteWebhook(userId: string, keyId: string, webhookId: string): Promise<{ webhookId: string; deleted: true }> {
    return this.send('DELETE', `${this.keyPath(userId, keyId)}/webhooks/${encodeURIComponent(webhookId)}`);
  }

  /** A new secret, shown once; for 24 hours deliveries carry the previous one's signature too. */
  rotateWebhookSecret(userId: string, keyId: string, webhookId: string): Promise<RotatedWebhook> {
    return this.send('POST', `${this.keyPath(userId, keyId)}/webhooks/${encodeURIComponent(webhookId)}/rotate-secret`);
  }

  /** A disabled webhook goes on from where it stopped; one that is not disabled is 409 NOT_DISABLED. */
  resumeWebhook(userId: string, keyId: string, webhookId: string): Promise<WebhookInfo> {
    return this.send('POST', `${this.keyPath(userId, keyId)}/webhooks/${encodeURIComponent(webhookId)}/resume`);
  }

  private keyPath(userId: string, keyId: string): string {
    return `/users/${encodeURIComponent(userId)}/keys/${encodeURIComponent(keyId)}`;
  }

  private async send<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.request<T>(method, path, body)).data;
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<{ data: T; envelope: Envelope<T> }> {
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
    const envelope = parsed as Envelope<T>;
    return { data: envelope.data as T, envelope };
  }
}
