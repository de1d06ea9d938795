/**
 * Standard Webhooks signatures (PRODUCT P18) with the `standardwebhooks`
 * package, the specification's own TypeScript implementation: `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64
 * HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one `v1,…` per secret in use,
 * space-separated (both for 24 hours after a rotation). A secret is
 * `whsec_` + base64 of 32 random bytes, as the specification writes them.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new secret: 256 random bits from the CSPRNG. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{43}=$/;

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of a delivery signed with each secret (the current one first). */
export function signDelivery(secrets: readonly string[], id: string, at: Date, body: string): SignedHeaders {
  if (!secrets.length) throw new Error('signDelivery: no secret');
  const signatures = secrets.map((s) => new Webhook(s).sign(id, at, body));
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signatures.join(' ') };
}
