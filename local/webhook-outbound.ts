/**
 * The local server's webhook sends and URL checks: the outbound guard
 * (lambdas/delivery/guard/) under the local policy, loopback receivers only
 * with `--allow-loopback-webhooks` (docs/local-server.md); without it a
 * receiver at 127.0.0.1 is refused like any other private address.
 *
 * `options` are the tests': the resolver the guard asks (a host that
 * resolves to a private address, or moves to one after its create) and the
 * guard's deadline (a receiver that never answers fails in a fraction of
 * P18's 10 s). The create's check and every delivery ask the same resolver,
 * as they ask the system's in AWS.
 */
import { checkUrl, guardedPost, type GuardPolicy, type Resolver } from '../lambdas/delivery/guard/guard.js';
import type { Poster } from '../lambdas/delivery/outbound.js';
import type { UrlChecker } from '../lambdas/key-admin/webhook-manager.js';

export interface LocalGuardOptions {
  resolver?: Resolver;
  /** The whole exchange's deadline (default the guard's, P18's 10 s). */
  timeoutMs?: number;
}

export function localOutbound(policy: GuardPolicy, options: LocalGuardOptions = {}): { post: Poster; checkUrl: UrlChecker } {
  const post = { ...(options.resolver ? { resolver: options.resolver } : {}), ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) };
  return {
    post: (req) => guardedPost(req, policy, post),
    checkUrl: async (raw) => {
      const checked = await checkUrl(raw, policy, options.resolver);
      return checked.ok ? { ok: true } : { ok: false, message: checked.message };
    },
  };
}
