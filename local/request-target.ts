/**
 * Splits an HTTP request target into the path API Gateway routes on and its
 * query, without `new URL()`: a WHATWG URL resolves dot segments, re-encodes
 * characters and reads `//host:port/...` as an authority (throwing on a bad
 * port), so the path it yields is not the one the client sent.
 *
 * - origin form (`/a/b?q`): the path as sent, dot segments and doubled
 *   slashes kept, so they match no route and are answered 404 like any
 *   unknown resource;
 * - absolute form (`http://host/a/b?q`, RFC 9112 §3.2.2: servers must accept
 *   it): the scheme and authority are dropped, the rest routes as usual;
 * - anything else (authority form `host:port`, `*`, junk): kept as the path,
 *   which matches nothing (404).
 *
 * Query names and values are form-decoded by URLSearchParams, which never
 * throws: a malformed or non-UTF-8 escape stays as written or becomes U+FFFD.
 */
import { SURFACES } from '../lambdas/routes.js';

/** Named like URL's fields, so code written against a URL reads the same. */
export interface RequestTarget {
  pathname: string;
  searchParams: URLSearchParams;
}

const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

export function parseRequestTarget(raw: string): RequestTarget {
  let rest = raw;
  const absolute = ABSOLUTE_FORM.exec(rest);
  if (absolute) rest = rest.slice(absolute[0].length);
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash); // a fragment is never sent to the server; ignore one that is
  const q = rest.indexOf('?');
  const path = q >= 0 ? rest.slice(0, q) : rest;
  const search = q >= 0 ? rest.slice(q + 1) : '';
  return { pathname: path || '/', searchParams: new URLSearchParams(search) };
}

/** Whether a path is the Embed API's, whose every answer carries CORS (PRODUCT P11). */
export function isEmbedPath(path: string): boolean {
  return path === SURFACES.embed || path.startsWith(`${SURFACES.embed}/`);
}
