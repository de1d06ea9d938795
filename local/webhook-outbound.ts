/**
 * The local server's webhook sends and URL checks: the outbound guard
 * (lambdas/delivery/guard/) under the local policy, loopback receivers only
 * with `--allow-loopback-webhooks` (docs/local-server.md); without it a
 * receiver at 127.0.0.1 is refused like any other private address.
 */
import { checkUrl, guardedPost, type GuardPolicy } from '../lambdas/delivery/guard/guard.js';
import type { Poster } from '../lambdas/delivery/outbound.js';
import type { UrlChecker } from '../lambdas/key-admin/webhook-manager.js';

export function localOutbound(policy: GuardPolicy): { post: Poster; checkUrl: UrlChecker } {
  return {
    post: (req) => guardedPost(req, policy),
    checkUrl: async (raw) => {
      const checked = await checkUrl(raw, policy);
      return checked.ok ? { ok: true } : { ok: false, message: checked.message };
    },
  };
}
