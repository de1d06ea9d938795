/**
 * Hostile requests for the fuzz tests (fast-check arbitraries), and the
 * invariants every answer must keep whatever it was asked: never a 5xx, the
 * JSON envelope for every error and every answer PRODUCT P15 does not except
 * (the OpenAPI documents, the 308 of the old prefix, the iCalendar feeds, and
 * the local server's static pages, widget and images), CORS on every Embed
 * answer and never on a Public one, no private field in any body.
 *
 * The default run is short and seeded; FUZZ_RUNS runs more, FUZZ_SEED
 * another sequence (a failure prints the seed and path that replay it).
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { LEGACY_PREFIX } from '../../lambdas/core/legacy-prefix.js';
import { OPERATIONS } from '../../lambdas/openapi/operations.js';
import { SURFACES, resourcePath, routes, type RouteDefinition, type RouteId } from '../../lambdas/routes.js';
import { DEFAULT_IMAGES } from '../../local/default-images.js';
import { machineContention } from '../../local/rehearsal/contention.js';
import { docsAssets } from '../../local/docs-page.js';
import { matchRoute } from '../../local/gateway.js';
import { parseRequestTarget } from '../../local/request-target.js';
import { widgetAssets } from '../../local/widget.js';
import { KEYS, demoDataset } from './fixtures.js';

export const FUZZ = {
  runs: Number(process.env.FUZZ_RUNS ?? 300),
  seed: Number(process.env.FUZZ_SEED ?? 20261121),
};

/** fast-check parameters for every fuzz property: seeded, FUZZ_RUNS cases, replayable from the seed and path a failure prints. */
export const fuzzParameters = (runs = FUZZ.runs) => ({ numRuns: runs, seed: FUZZ.seed });

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__'];

/** Values for a route's placeholders: mostly real ids, often hostile. */
const placeholderValue = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('evt_jazz01', 'evt_secret03', 'evt_nope', 'alice', 'Alice', 'bob.builder', 'eve-series', 'nobody') },
  { weight: 1, arbitrary: fc.constantFrom('evt_jazz01.ics', 'evt_nope.ics', 'evt_secret03.ics', '.ics', 'alice.ics', 'evt_jazz01.ICS', 'evt_jazz01.ics.ics') },
  { weight: 4, arbitrary: fc.constantFrom('.', '..', '%2E%2E', '%2e', 'a%2Fb', '%2F', '%C0%AE', '%FF', '%', '%zz', '%00', '%C3%A9', '', '@alice', 'a'.repeat(65), 'é') },
  { weight: 2, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
);

/** Path segments: the routes' own words and ids, and every shape that has broken a router somewhere. */
const segment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('events', 'users', 'guests', 'profile-events', 'upcoming-events', 'past-events', 'evt_jazz01', 'evt_secret03', 'alice', 'Alice', 'bob.builder', 'eve-series') },
  { weight: 2, arbitrary: fc.constantFrom('openapi.json', 'events.ics', 'event.ics', 'evt_jazz01.ics', 'docs', 'embed', 'images', 'widget.js', 'demo.html', 'default-cover.png', 'redoc.standalone.js') },
  { weight: 3, arbitrary: fc.constantFrom('.', '..', '...', '%2E', '%2e%2E', '.%2E', '%2F', 'a%2Fb', '%2f..%2f', '%5C', '\\..', '%C0%AE', '%C0%AE%C0%AE', '%FF', '%', '%%', '%zz', '%E0%A4%A', '%00', '%C3%A9', '') },
  { weight: 2, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
  { weight: 1, arbitrary: fc.constantFrom('@alice', 'evt_', 'evt_<script>', ';', '*', ':', 'é', 'ÿ', '~', '$', 'a'.repeat(65), `evt_${'x'.repeat(70)}`) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 12 }).map((s) => s.replace(/[\s/?#]/g, '')) },
);

/** Where a path starts: both surfaces (with odd spellings), the root, absolute and authority forms. */
const pathPrefix = fc.constantFrom(
  SURFACES.embed,
  SURFACES.embed,
  SURFACES.public,
  SURFACES.public,
  `${SURFACES.embed}/`,
  `${SURFACES.public}/`,
  '',
  '/api',
  '/API/EMBED/V1',
  '/api/embed/v2',
  '//127.0.0.1:99999/api/embed/v1',
  '//other/api/public/v1',
  'http://other',
  'http://127.0.0.1:99999',
  'https://x.example:443',
  // The old prefix (a 308) and the local server's own pages and files.
  LEGACY_PREFIX,
  LEGACY_PREFIX,
  `${LEGACY_PREFIX}/`,
  '/api/ext/v10',
  '/staging/api/ext/v1',
  '/docs',
  '/embed',
  '/images',
);

const queryName = fc.oneof(
  fc.constantFrom('limit', 'offset', 'type', 'status', 'since', 'from', 'to'),
  fc.constantFrom(...PROTOTYPE_NAMES),
  fc.constantFrom('a[]', 'limit[]', 'limit[0]', 'a[b]', '', '%', '%FF', '%C0%AE', 'li%6Dit', 'x'.repeat(300)),
);
const queryValue = fc.oneof(
  fc.constantFrom('1', '0', '-1', '100', '101', '1e2', '0x10', '+5', '%205', 'abc', '', 'upcoming', 'past', 'profile', 'all', 'yes'),
  fc.constantFrom('2027-01-01', '2027-01-01T00:00:00+01:00', '2027-01-01T00:00:00%2001:00', '2027-13-45', '9999999-01-01', 'now'),
  fc.constantFrom('%FF', '%', '%C0%AE', '%2F', '..', '__proto__', 'a&b', 'a=b'),
  fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 300 }) }, { weight: 1, arbitrary: fc.integer({ min: 9_000, max: 12_000 }) }).map((n) => 'v'.repeat(n)),
);
/** A raw query string: repeated names, array-style names, bare names, stray separators. */
const query = fc
  .array(fc.tuple(queryName, queryValue, fc.constantFrom('=', '=', '')), { maxLength: 6 })
  .chain((pairs) => fc.constantFrom('', '?', '?&', '?=').map((start) => (pairs.length ? `?${pairs.map(([n, v, eq]) => (eq ? `${n}=${v}` : n)).join('&')}` : start)));

/** A route of the table with hostile values in its placeholders, sometimes in absolute form or with a trailing slash. */
const routeShapedPath = fc
  .constantFrom(...routes.map((r) => resourcePath(r)))
  .chain((template) => {
    const holes = template.match(/\{[^}]+\}/g) ?? [];
    return fc.tuple(fc.tuple(...holes.map(() => placeholderValue)), fc.constantFrom('', '', '', '/', 'http://other', 'legacy')).map(([values, variant]) => {
      let i = 0;
      const path = template.replace(/\{[^}]+\}/g, () => values[i++] ?? '');
      // The same route under the old prefix, which answers 308 whatever follows it.
      if (variant === 'legacy') return `${LEGACY_PREFIX}${path.slice(path.indexOf('/v1/') + 3)}`;
      return variant === '/' ? `${path}/` : `${variant}${path}`;
    });
  });

/** Any path: a prefix (surface, odd spelling, absolute or authority-like form) and random segments. */
const anyPath = fc.tuple(pathPrefix, fc.array(segment, { maxLength: 5 }), fc.boolean()).map(([prefix, segments, trailingSlash]) => {
  const path = `${prefix}${segments.map((s) => `/${s}`).join('')}${trailingSlash ? '/' : ''}` || '/';
  // A target must start with "/" unless it is in absolute form.
  return path.startsWith('/') || /^https?:/.test(path) ? path : `/${path}`;
});

/** A raw request target, as sent on the request line (no client-side normalisation). */
export const requestTarget = fc
  .tuple(fc.oneof({ weight: 3, arbitrary: routeShapedPath }, { weight: 2, arbitrary: anyPath }), query)
  .map(([path, q]) => `${path}${q}`);

const garbageKey = fc.constantFrom('junk', 'pk_', 'Bearer', '', ' ', 'pk_demo_0123456789abcdefghijklmnopqrstu', `pk_${'x'.repeat(600)}`, 'pk_é_0123456789abcdefghijklmnop');
const keyValue = fc.oneof(fc.constantFrom(KEYS.both, KEYS.eventsOnly, KEYS.guestsOnly, KEYS.revoked), garbageKey);
const headerName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('x-events-api-key', 'X-Events-Api-Key', 'X-EVENTS-API-KEY', 'authorization', 'Authorization') },
  { weight: 2, arbitrary: fc.constantFrom('if-none-match', 'origin', 'accept', 'content-type', 'cookie', 'x-forwarded-for', 'x-amzn-requestid', 'access-control-request-method') },
  { weight: 2, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
);
/** Header values Node's client accepts: visible ASCII, spaces, tabs and Latin-1 (non-ASCII) bytes. */
const headerValue = fc.oneof(
  { weight: 3, arbitrary: keyValue },
  { weight: 3, arbitrary: keyValue.chain((k) => fc.constantFrom(`Bearer ${k}`, `bearer   ${k}`, `BEARER ${k} extra`, `Basic ${k}`, `Bearer\t${k}`, `Token ${k}`)) },
  { weight: 2, arbitrary: fc.constantFrom('*', '"abc"', 'W/"x", "y"', 'https://host.example', 'null', 'é', 'Ã©ÿ', 'application/json', 'GET') },
  { weight: 1, arbitrary: fc.oneof(fc.integer({ min: 100, max: 2_000 }), fc.integer({ min: 9_000, max: 40_000 })).map((n) => 'h'.repeat(n)) },
);
/** Headers in order, duplicates kept (each pair becomes one header line). */
export const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 });

export const method = fc.oneof(
  { weight: 12, arbitrary: fc.constant('GET') },
  { weight: 4, arbitrary: fc.constantFrom('HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS') },
  { weight: 1, arbitrary: fc.constantFrom('TRACE', 'PROPFIND', 'PURGE', 'SEARCH', 'FOO', 'get', 'M-SEARCH') },
);

/** A hostile request for the HTTP server. */
export const hostileRequest = fc.record({
  method,
  target: requestTarget,
  headers,
  body: fc.option(fc.constantFrom('{}', '{"__proto__":{"x":1}}', 'a=1', 'x'.repeat(5000)), { nil: undefined }),
});
export type HostileRequest = typeof hostileRequest extends fc.Arbitrary<infer T> ? T : never;

/** Values of the demo data that must never appear in any answer. */
export function privateStrings(): string[] {
  const demo = demoDataset() as unknown as { users: { email?: string; phone?: string }[]; rsvps: { email?: string; phone?: string; name?: string }[] };
  const personal = [...demo.users, ...demo.rsvps].flatMap((p) => [p.email, p.phone]).filter((v): v is string => typeof v === 'string' && v !== '');
  const keys = Object.values(KEYS);
  const hashes = keys.map((k) => createHash('sha256').update(k, 'utf8').digest('hex'));
  return [...new Set([...personal, ...keys, ...hashes, 'APIKEY#', 'gsi1pk'])];
}

const under = (path: string, base: string) => path === base || path.startsWith(`${base}/`);

/**
 * Which surface a raw request target addresses (absolute form routes on its
 * path). The old prefix is the Public API's (its REST API answers the 308),
 * so it gets no CORS either.
 */
export function surfaceOf(target: string): 'embed' | 'public' | 'other' {
  const path = parseRequestTarget(target).pathname;
  return under(path, SURFACES.embed) ? 'embed' : under(path, SURFACES.public) || under(path, LEGACY_PREFIX) ? 'public' : 'other';
}

/**
 * What a successful answer is, by PRODUCT P15: the JSON envelope, or one of
 * the exceptions. Errors are the envelope whatever the kind.
 */
export type AnswerKind = 'envelope' | 'envelope-or-feed-redirect' | 'openapi' | 'calendar' | 'legacy-redirect' | 'asset';

/** The local server's own files (not an API): the /docs pages and Redoc, the widget (both names) and its demo, the default images. */
const ASSET_PATHS: ReadonlySet<string> = new Set([...docsAssets().keys(), ...widgetAssets().keys(), ...DEFAULT_IMAGES.keys()]);

export function kindOfRoute(route: RouteDefinition): AnswerKind {
  if (route.handler === 'openapi') return 'openapi';
  // `…/events/{eventId}.ics` lands on the event route, which redirects it to the event's feed.
  if (OPERATIONS[route.id as RouteId]({ userEventsVariant: 'typed' }).redirect) return 'envelope-or-feed-redirect';
  return route.path.endsWith('.ics') ? 'calendar' : 'envelope';
}

/** The kind of answer a raw request may get when it succeeds. */
export function answerKindOf(method: string, target: string): AnswerKind {
  const path = parseRequestTarget(target).pathname;
  if (under(path, LEGACY_PREFIX)) return 'legacy-redirect';
  if (ASSET_PATHS.has(path)) return 'asset';
  const match = matchRoute(method, path);
  return match ? kindOfRoute(match.route) : 'envelope';
}

/** Surface and answer kind of a raw request, the options `violations` needs besides the body rule and secrets. */
export const expectationsFor = (method: string, target: string) => ({ surface: surfaceOf(target), kind: answerKindOf(method, target), method });

export interface Answer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * The invariants, as a list of violations (empty = fine). `bodyExpected` is
 * false for HEAD, where the status line and headers are all there is.
 */
export function violations(
  answer: Answer,
  opts: { surface: 'embed' | 'public' | 'other'; kind?: AnswerKind; bodyExpected: boolean; secrets: readonly string[]; method?: string },
): string[] {
  const problems: string[] = [];
  const { status, headers: h, body } = answer;
  const kind = opts.kind ?? 'envelope';
  if (status >= 500) problems.push(`status ${status}`);
  // The gateway answers an Embed preflight itself, unless the request is refused first (unparseable or oversized).
  if (opts.method === 'OPTIONS' && opts.surface === 'embed' && ![204, 400, 414, 431].includes(status)) problems.push(`Embed preflight answered ${status}`);
  const noBody = status === 204 || status === 304;
  const contentType = String(h['content-type']);
  if (kind === 'envelope-or-feed-redirect' && status === 308) {
    problems.push(...exceptionViolations('feed-redirect', answer, opts.bodyExpected));
  } else if (status >= 400 || kind === 'envelope' || kind === 'envelope-or-feed-redirect') {
    // Every error, and every answer P15 does not except, is the envelope.
    if (!noBody && !/^application\/json\b/.test(contentType)) problems.push(`content-type ${contentType}`);
    if (opts.bodyExpected && !noBody) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        problems.push(`body is not JSON: ${body.slice(0, 120)}`);
      }
      const envelope = parsed as { success?: unknown; message?: unknown } | undefined;
      if (parsed !== undefined && (typeof envelope?.success !== 'boolean' || typeof envelope.message !== 'string')) problems.push(`not an envelope: ${body.slice(0, 120)}`);
      if (envelope && envelope.success !== (status < 300)) problems.push(`success ${String(envelope.success)} with status ${status}`);
    }
  } else {
    problems.push(...exceptionViolations(kind, answer, opts.bodyExpected));
  }
  if (noBody && body !== '') problems.push(`status ${status} with a body`);
  const cors = Object.keys(h).filter((name) => name.startsWith('access-control-'));
  if (opts.surface === 'embed' && h['access-control-allow-origin'] !== '*') problems.push('Embed answer without Access-Control-Allow-Origin: *');
  if (opts.surface === 'public' && cors.length) problems.push(`Public answer with CORS headers: ${cors.join(', ')}`);
  for (const secret of opts.secrets) if (body.includes(secret)) problems.push(`body contains private value ${secret.slice(0, 12)}…`);
  return problems;
}

/** A successful answer that P15 lets be something else than the envelope: exactly that something. */
function exceptionViolations(kind: Exclude<AnswerKind, 'envelope' | 'envelope-or-feed-redirect'> | 'feed-redirect', answer: Answer, bodyExpected: boolean): string[] {
  const { status, headers: h, body } = answer;
  const contentType = String(h['content-type']);
  const problems: string[] = [];
  switch (kind) {
    case 'openapi': {
      if (status !== 200) return [`OpenAPI document answered ${status}`];
      if (!/^application\/json\b/.test(contentType)) problems.push(`OpenAPI document as ${contentType}`);
      if (bodyExpected) {
        try {
          const doc = JSON.parse(body) as { openapi?: unknown; paths?: unknown };
          if (typeof doc.openapi !== 'string' || typeof doc.paths !== 'object') problems.push(`not an OpenAPI document: ${body.slice(0, 120)}`);
        } catch {
          problems.push(`OpenAPI document is not JSON: ${body.slice(0, 120)}`);
        }
      }
      return problems;
    }
    case 'calendar':
      if (status === 304) return [];
      if (status !== 200) return [`iCalendar feed answered ${status}`];
      if (!/^text\/calendar\b/.test(contentType)) problems.push(`iCalendar feed as ${contentType}`);
      if (bodyExpected && !body.startsWith('BEGIN:VCALENDAR\r\n')) problems.push(`not an iCalendar body: ${body.slice(0, 120)}`);
      return problems;
    case 'legacy-redirect':
      if (status !== 308) return [`old prefix answered ${status}`];
      if (!/^\/api\/public\/v1(\/|\?|$)/.test(String(h.location))) problems.push(`308 to ${String(h.location)}`);
      if (h['cache-control'] !== 'public, max-age=86400') problems.push(`308 with cache-control ${String(h['cache-control'])}`);
      if (body !== '') problems.push('308 with a body');
      return problems;
    case 'feed-redirect':
      // Relative to …/events/{id}.ics: `{id}/event.ics`.
      if (!/^evt_[^/]+\/event\.ics$/.test(String(h.location))) problems.push(`308 to ${String(h.location)}`);
      if (h['cache-control'] !== 'public, max-age=86400') problems.push(`308 with cache-control ${String(h['cache-control'])}`);
      if (body !== '') problems.push('308 with a body');
      return problems;
    case 'asset':
      if (status !== 200) return [`static file answered ${status}`];
      if (!/^(text\/html|text\/javascript|application\/javascript|image\/png)\b/.test(contentType)) problems.push(`static file as ${contentType}`);
      if (h['access-control-allow-origin'] !== '*') problems.push('static file without Access-Control-Allow-Origin: *');
      if (bodyExpected && body === '') problems.push('static file with an empty body');
      return problems;
  }
}

/**
 * A map as API Gateway hands it to a Lambda: JSON-parsed, so every name the
 * client chose (`__proto__`, `constructor`, …) is an own property; or null.
 */
export const asLambdaMap = <T>(pairs: readonly (readonly [string, T])[]): Record<string, T> | null =>
  pairs.length ? (JSON.parse(JSON.stringify(Object.fromEntries(pairs))) as Record<string, T>) : null;

/** Decoded values, as path and query parameters reach a handler. */
export const decodedValue = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('evt_jazz01', 'evt_secret03', 'evt_nope', 'alice', 'Alice', 'bob.builder', 'eve-series', 'nobody') },
  { weight: 1, arbitrary: fc.constantFrom('evt_jazz01.ics', 'evt_nope.ics', '.ics', 'evt_jazz01.ics.ics') },
  { weight: 3, arbitrary: fc.constantFrom('', ' ', '.', '..', '/', 'a/b', '../..', '\u0000', '\uFFFD', 'é', '\u202E', '@alice', '1', '0', '-1', '101', 'upcoming', 'all', '2027-01-01', '2027-13-45', 'a'.repeat(65)) },
  { weight: 2, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => 'v'.repeat(n)) },
);
export const parameterName = fc.oneof(queryName, fc.constantFrom('eventId', 'username'));
export const proxyHeaders = fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 });

/**
 * How long a connection may stay silent before it counts as a hang: past the
 * gateway's own limit (29 s) as the rehearsal stretches it on a busy machine
 * (local/rehearsal/contention.ts), so that a slow answer is never taken for a
 * hang (15 s fixed was shorter than a function's stretched Timeout).
 */
const noAnswerMs = () => Math.ceil(30 * machineContention()) * 1000;

/**
 * One request on its own connection with node:http, which sends raw targets
 * and headers that fetch would refuse or normalise. Rejects on a reset, a
 * hang or no answer.
 */
export function send(port: number, req: { method: string; target: string; headers: readonly (readonly [string, string])[]; body?: string | undefined }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, method: req.method, path: req.target, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    outgoing.on('error', reject); // after an answer (the server closed while we still sent), this is a no-op
    const quiet = noAnswerMs();
    outgoing.setTimeout(quiet, () => outgoing.destroy(new Error(`no answer within ${quiet / 1000} s`)));
    for (const [name, value] of req.headers) outgoing.appendHeader(name, value);
    outgoing.end(req.body);
  });
}

/**
 * Bytes no HTTP client would send (invalid header names, CONNECT, a
 * missing Host), written to a bare socket. The answer must close the
 * connection and say its length; rejects on a reset.
 */
export function sendRaw(port: number, bytes: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    const quiet = noAnswerMs();
    socket.setTimeout(quiet, () => socket.destroy(new Error(`no answer within ${quiet / 1000} s`)));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no complete answer: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      let body = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        let rest = body;
        body = '';
        for (let size = parseInt(rest, 16); size > 0; size = parseInt(rest, 16)) {
          const start = rest.indexOf('\r\n') + 2;
          body += rest.slice(start, start + size);
          rest = rest.slice(start + size + 2);
        }
      }
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') });
    });
    socket.write(bytes);
  });
}
