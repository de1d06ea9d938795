/**
 * The authorizer's decision (PRODUCT P2, P3): no plausible key, an unknown
 * key, a revoked key or a key whose user is not live (deleted: their keys'
 * close may still be under way) is 401; a valid key without the route's
 * scope is 403. Two GetItems per request (the key, then its user), no
 * caching, so a revocation or a deletion wins on the next request.
 */
import { extractApiKey, hashApiKey } from './api-key.js';
import type { Scope } from './dataset.js';
import { NotAuthenticatedError } from './errors.js';
import { DAILY_QUOTA, quotaReset } from './rate-limit.js';
import type { ApiKeyReader } from './ports.js';

export interface AuthDecision {
  allow: boolean;
  /** Non-secret key id: the policy's principal and the log's subject. */
  principalId: string;
  /** The key's API Gateway plan key value, for the usage plan's quota (absent until provisioned). */
  usageIdentifierKey?: string;
  /**
   * Values the gateway's own 429 responses map into headers (PRODUCT P4):
   * `rateLimitReset` is the Unix time of the next UTC midnight, `retryAfter`
   * the whole seconds until then, rounded up.
   */
  context: { keyId: string; userId: string; scopes: string; rateLimitReset: number; retryAfter: number };
}

export { DAILY_QUOTA, quotaReset };

/**
 * The headers of the daily-quota 429 (PRODUCT P4): fixed values, or the
 * authorizer context key each is read from. The deployed gateway response
 * (lib/gateway-responses.ts) and the local gateway both derive from this.
 */
export const QUOTA_EXCEEDED_HEADERS = {
  'X-RateLimit-Limit': { value: String(DAILY_QUOTA) },
  'X-RateLimit-Remaining': { value: '0' },
  'X-RateLimit-Reset': { context: 'rateLimitReset' },
  'Retry-After': { context: 'retryAfter' },
} as const satisfies Record<string, { value: string } | { context: keyof AuthDecision['context'] }>;

export async function authorize(
  keys: ApiKeyReader,
  request: { headers: Record<string, string | undefined> | null | undefined; requiredScope: Scope | undefined },
  serviceName: string,
  now: Date,
): Promise<AuthDecision> {
  const key = extractApiKey(request.headers, serviceName);
  if (key === null) throw new NotAuthenticatedError();
  const item = await keys.getApiKey(hashApiKey(key));
  if (!item || item.revoked) throw new NotAuthenticatedError();
  // A key belongs to its user: from the deletion's tombstone on, whatever fails in closing their keys after it.
  if (!(await keys.isLiveUser(item.user_id))) throw new NotAuthenticatedError();
  const allow = request.requiredScope !== undefined && item.scopes.includes(request.requiredScope);
  const { resetEpochSeconds, retryAfterSeconds } = quotaReset(now);
  return {
    allow,
    principalId: item.key_id,
    ...(item.usage_identifier ? { usageIdentifierKey: item.usage_identifier } : {}),
    context: {
      keyId: item.key_id,
      userId: item.user_id,
      scopes: item.scopes.join(' '),
      rateLimitReset: resetEpochSeconds,
      retryAfter: retryAfterSeconds,
    },
  };
}
