/**
 * Verifying a webhook delivery (the API's webhooks push its changes feeds:
 * docs/webhooks.md). A delivery is signed as Standard Webhooks sign
 * (https://www.standardwebhooks.com/): `webhook-id`, `webhook-timestamp`
 * (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "{id}.{timestamp}.{body}">`, one `v1,…` per secret in use, separated by
 * spaces (two for 24 hours after a secret's rotation).
 *
 * `verifyWebhook` checks the timestamp against a tolerance (5 minutes, as
 * the specification's libraries), then each signature against each secret
 * given, comparing in constant time (every byte, whatever the first
 * difference), and only then parses the body. It is written on WebCrypto
 * (`crypto.subtle`), which Node 20+, browsers, workers, Deno and Bun all
 * have, because the client has no dependencies and runs outside Node too
 * (its build has no Node types): not on the `standardwebhooks` package (two
 * dependencies of its own, CommonJS) nor on node:crypto. The test suite
 * holds it to accept exactly what `standardwebhooks` accepts.
 */
import type { EventChange, GuestChange } from './types.js';

/** How far a delivery's timestamp may be from now, either way. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** What a webhook follows: one changes feed (a host and an event named by id). */
export type WebhookScope =
  | { type: 'catalogue' }
  | { type: 'host'; userId: string }
  | { type: 'place'; city?: string; country?: string }
  | { type: 'guests'; eventId: string };

/** A delivery's body: a feed page with its webhook's identity and the cursor after it (valid on the scope's feed route). */
export interface WebhookDelivery {
  webhook_id: string;
  scope: WebhookScope;
  /** In feed order, 1 to 100: events, or on a guests scope guests. */
  changes: (EventChange | GuestChange)[];
  /** A changes-feed cursor: pull from it with the webhook's key to go on from this delivery. */
  cursor: string;
  /** A fresh start (the scope's present contents replace the copy held), until the first delivery without it. */
  reset?: true;
}

export interface VerifiedWebhook {
  /** `webhook-id`: the same on every retry of one delivery, so it deduplicates. */
  id: string;
  /** `webhook-timestamp`: when this attempt was signed. */
  timestamp: Date;
  delivery: WebhookDelivery;
}

/** Fetch's Headers, or Node's `req.headers` (names in any case; a repeated header's values in an array). */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** The time to check the timestamp against (default: now). */
  now?: Date | number | undefined;
  /** Default WEBHOOK_TOLERANCE_SECONDS. */
  toleranceSeconds?: number | undefined;
}

export type WebhookVerificationReason = 'missing_header' | 'bad_timestamp' | 'too_old' | 'too_new' | 'no_matching_signature' | 'bad_body';

/** The delivery is not to be trusted: answer it with a 4xx and do not apply it. */
export class WebhookVerificationError extends Error {
  override readonly name: string = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

const SECRET_PREFIX = 'whsec_';
const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() !== name) continue;
    // One of these sent twice is not a delivery of ours.
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}

function base64Bytes(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** The secret's key bytes: `whsec_` and base64, as the management API shows it once. */
function secretBytes(secret: string): Uint8Array {
  const bytes = typeof secret === 'string' && secret.startsWith(SECRET_PREFIX) ? base64Bytes(secret.slice(SECRET_PREFIX.length)) : undefined;
  if (!bytes || bytes.length === 0) throw new TypeError('A webhook secret is "whsec_" followed by base64, as the management API showed it at create or rotate');
  return bytes;
}

/** Equal in constant time: every byte compared, whatever the first difference (lengths are public: a v1 signature is 44 characters). */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

function subtle(): SubtleCrypto {
  const s = (globalThis as { crypto?: Crypto }).crypto?.subtle;
  if (!s) throw new Error('verifyWebhook needs WebCrypto (globalThis.crypto.subtle): Node 20 or later, or a browser or worker');
  return s;
}

/** The v1 signature of `message` under `key`, as the header carries it: base64 of the HMAC-SHA256, as ASCII bytes. */
async function signature(key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  const s = subtle();
  const imported = await s.importKey('raw', key as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await s.sign('HMAC', imported, message as BufferSource));
  return encoder.encode(btoa(String.fromCharCode(...mac)));
}

/**
 * Checks a delivery and answers it parsed, or throws WebhookVerificationError
 * (answer the request 400 or 401 and apply nothing). `body` is the request's
 * raw body exactly as it arrived (a string, or its bytes), never a re-encoded
 * parse of it; `secrets` the webhook's secret, or the old and the new one
 * while a rotation settles.
 */
export async function verifyWebhook(body: string | Uint8Array | ArrayBuffer, headers: WebhookHeaders, secrets: string | readonly string[], options: VerifyWebhookOptions = {}): Promise<VerifiedWebhook> {
  const keys = (typeof secrets === 'string' ? [secrets] : [...secrets]).map(secretBytes);
  if (keys.length === 0) throw new TypeError('verifyWebhook needs at least one secret');
  const id = header(headers, 'webhook-id');
  const stamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const missing = [!id && 'webhook-id', !stamp && 'webhook-timestamp', !signatures && 'webhook-signature'].filter(Boolean);
  if (!id || !stamp || !signatures) throw new WebhookVerificationError('missing_header', `Missing header(s): ${missing.join(', ')}`);

  if (!/^\d{1,15}$/.test(stamp)) throw new WebhookVerificationError('bad_timestamp', 'webhook-timestamp must be Unix seconds');
  const seconds = Number(stamp);
  const now = Math.floor((options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime()) / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (now - seconds > tolerance) throw new WebhookVerificationError('too_old', `The delivery was signed more than ${tolerance} seconds ago (a replay, or this clock is wrong)`);
  if (seconds - now > tolerance) throw new WebhookVerificationError('too_new', `The delivery is signed more than ${tolerance} seconds ahead (this clock, or the sender's, is wrong)`);

  const bytes = typeof body === 'string' ? encoder.encode(body) : body instanceof Uint8Array ? body : new Uint8Array(body);
  const prefix = encoder.encode(`${id}.${stamp}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  // Compared as the header writes them (base64 text), as the specification's libraries compare.
  const given = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => encoder.encode(s.slice(3)));
  let matched = false;
  for (const key of keys) {
    const expected = await signature(key, signed);
    // Every signature compared, whichever matches: the time taken says nothing of which one did.
    for (const candidate of given) matched = constantTimeEqual(candidate, expected) || matched;
  }
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'No v1 signature of the delivery matches a secret given');

  let delivery: WebhookDelivery;
  try {
    delivery = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as WebhookDelivery;
  } catch {
    throw new WebhookVerificationError('bad_body', 'The body is not UTF-8 JSON');
  }
  if (typeof delivery !== 'object' || delivery === null || !Array.isArray(delivery.changes) || typeof delivery.cursor !== 'string') {
    throw new WebhookVerificationError('bad_body', 'The body is not a delivery: it has no changes and cursor');
  }
  return { id, timestamp: new Date(seconds * 1000), delivery };
}
