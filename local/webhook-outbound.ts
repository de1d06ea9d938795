/**
 * The local server's webhook sends and URL checks: the outbound guard
 * (lambdas/delivery/guard/) under the local policy, loopback receivers only
 * with `--allow-loopback-webhooks`.
 */
import type { UrlChecker } from '../lambdas/key-admin/webhook-manager.js';
import type { Poster } from '../lambdas/delivery/outbound.js';

export function localOutbound(_policy: { allowLoopback: boolean }): { post: Poster; checkUrl: UrlChecker } {
  // Until the outbound guard lands on this branch, nothing is sent and every URL is refused (no second guard is written).
  return {
    post: async () => ({ kind: 'refused', errorClass: 'url' }),
    checkUrl: async () => ({ ok: false, message: 'Webhooks are not available on this server yet (the outbound guard is missing)' }),
  };
}
