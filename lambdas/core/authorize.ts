/**
 * The authorizer's decision (PRODUCT P2, P3): no plausible key, an unknown
 * key or a revoked key is 401; a valid key without the route's scope is 403.
 * One GetItem per request, no caching, so revocation wins on the next request.
 */
import { extractApiKey, hashApiKey } from './api-key.js';
import type { Scope } from './dataset.js';
import { NotAuthenticatedError } from './errors.js';
import type { ApiKeyReader } from './ports.js';

export interface AuthDecision {
  allow: boolean;
  /** Non-secret key id: the policy's principal and the log's subject. */
  principalId: string;
  context: { keyId: string; userId: string; scopes: string };
}

export async function authorize(
  keys: ApiKeyReader,
  request: { headers: Record<string, string | undefined> | null | undefined; requiredScope: Scope | undefined },
  serviceName: string,
): Promise<AuthDecision> {
  const key = extractApiKey(request.headers, serviceName);
  if (key === null) throw new NotAuthenticatedError();
  const item = await keys.getApiKey(hashApiKey(key));
  if (!item || item.revoked) throw new NotAuthenticatedError();
  const allow = request.requiredScope !== undefined && item.scopes.includes(request.requiredScope);
  return {
    allow,
    principalId: item.key_id,
    context: { keyId: item.key_id, userId: item.user_id, scopes: item.scopes.join(' ') },
  };
}
