/**
 * The path prefix before the rename in the spec's history (PRODUCT P15):
 * `/api/ext/v1/…` answers 308 with `Location: /api/public/v1/…`, the rest of
 * the path and the query kept, whatever the method and with or without a key.
 */
import { SURFACES } from './surfaces.js';

export const LEGACY_PREFIX = '/api/ext/v1';

/**
 * The redirect target for a path under the legacy prefix, or undefined. The
 * prefix may follow a stage segment (`/staging/api/ext/v1/…` on an execute-api
 * URL), which is kept so the target stays on the same stage.
 */
export function legacyRedirectTarget(path: string, search: string): string | undefined {
  const at = path.indexOf(LEGACY_PREFIX);
  if (at < 0) return undefined;
  const before = path.slice(0, at);
  const rest = path.slice(at + LEGACY_PREFIX.length);
  // Only whole segments: /api/ext/v1 or /api/ext/v1/…, at the start or after one stage segment.
  if (rest !== '' && !rest.startsWith('/')) return undefined;
  if (before !== '' && !/^\/[^/]+$/.test(before)) return undefined;
  return `${before}${SURFACES.public}${rest}${search}`;
}

/** The query of an API Gateway proxy event, rebuilt (API Gateway passes it parsed, not raw). */
export function searchOf(multi: Record<string, string[] | undefined> | null | undefined): string {
  const pairs = Object.entries(multi ?? {}).flatMap(([name, values]) => (values ?? []).map((v) => `${encodeURIComponent(name)}=${encodeURIComponent(v)}`));
  return pairs.length ? `?${pairs.join('&')}` : '';
}
