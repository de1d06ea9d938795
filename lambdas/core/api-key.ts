/**
 * API key handling that needs no I/O: finding the key in a request's headers
 * (PRODUCT P2) and hashing it. Only the SHA-256 hash is ever stored or looked up.
 */
import { createHash } from 'node:crypto';
import { PLAUSIBLE_KEY_PATTERN } from './ids.js';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A non-secret, stable id for a key, derived from its hash (for logs and listings). */
export function keyIdFromHash(keyHash: string): string {
  return `key_${createHash('sha256').update(`key-id:${keyHash}`).digest('hex').slice(0, 20)}`;
}

export function apiKeyHeaderName(serviceName: string): string {
  return `x-${serviceName.toLowerCase()}-api-key`;
}


/**
 * The key a request carries: the `x-{service}-api-key` header wins over
 * `Authorization: Bearer` when both are present (PRODUCT P2). Header names are
 * case-insensitive, and so is the Bearer scheme. Returns null when no plausible
 * key is present.
 */
export function extractApiKey(
  headers: Record<string, string | undefined> | null | undefined,
  serviceName: string,
): string | null {
  const wanted = apiKeyHeaderName(serviceName);
  let headerKey: string | undefined;
  let authorization: string | undefined;
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value !== 'string') continue; // API Gateway sends strings; anything else is no key
    const lower = name.toLowerCase();
    if (lower === wanted) headerKey = value;
    else if (lower === 'authorization') authorization = value;
  }
  let candidate: string | undefined;
  if (headerKey !== undefined && headerKey.trim() !== '') {
    candidate = headerKey.trim();
  } else if (authorization !== undefined) {
    const m = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization);
    candidate = m?.[1];
  }
  // Anything implausible is refused without a lookup, so junk never costs a DynamoDB read.
  return candidate !== undefined && PLAUSIBLE_KEY_PATTERN.test(candidate) ? candidate : null;
}
