/**
 * Tests' stand-in for the outbound guard's send (lambdas/delivery/guard/),
 * for receivers on this machine only: it refuses any URL that is not
 * http://127.0.0.1, and times out as the guard does (its deadline
 * injectable). The guard itself is tested on its own (its test files).
 */
import { request } from 'node:http';
import type { PostOutcome, PostRequest } from '../../lambdas/delivery/outbound.js';
import type { UrlChecker } from '../../lambdas/key-admin/webhook-manager.js';

export const loopbackCheck: UrlChecker = async (raw) => (/^http:\/\/127\.0\.0\.1:\d+\//.test(raw) ? { ok: true } : { ok: false, message: 'url must be https (tests: a receiver on 127.0.0.1)' });

export function loopbackPost(timeoutMs = 10_000): (req: PostRequest) => Promise<PostOutcome> {
  return (req) =>
    new Promise((resolve) => {
      if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(req.url)) return resolve({ kind: 'refused', errorClass: 'address' });
      const r = request(req.url, { method: 'POST', headers: { ...req.headers, 'content-length': Buffer.byteLength(req.body) }, timeout: timeoutMs }, (res) => {
        res.resume();
        res.on('end', () => resolve({ kind: 'answered', status: res.statusCode ?? 0 }));
      });
      r.on('timeout', () => {
        r.destroy();
        resolve({ kind: 'failed', errorClass: 'timeout' });
      });
      r.on('error', () => resolve({ kind: 'failed', errorClass: 'connect' }));
      r.end(req.body);
    });
}
