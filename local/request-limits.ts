/**
 * The request size limits of an API Gateway REST API, enforced by the local
 * server before routing, and envelopes for whatever Node's HTTP parser itself
 * refuses, so no client ever gets a bare status line or a reset connection.
 *
 * API Gateway's published quotas for REST APIs ("Quotas for configuring and
 * running a REST API"): the URL of a regional API is at most 10,240
 * characters; all headers together (names, values, line terminators and
 * white space) at most 10,240 bytes; and on a method with authorization (the
 * Public API) the method ARN at most 1,600 bytes, else `414`.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { MESSAGES } from '../lambdas/core/errors.js';
import { API_GATEWAY_LIMITS } from '../lambdas/core/gateway-limits.js';
import { EMBED_CORS } from '../lambdas/http/embed-cors.js';
import { JSON_HEADERS, errorBody } from '../lambdas/http/envelope.js';
import { isEmbedPath, parseRequestTarget } from './request-target.js';
import { DAILY_QUOTA, RATE_LIMIT_HEADERS } from '../lambdas/core/rate-limit.js';

export { API_GATEWAY_LIMITS };

/**
 * Node's own header limit (default 16 KB), raised far above API Gateway's so
 * that an oversized request is read whole and answered by the check below
 * rather than cut off; beyond it, `answerClientError` still answers.
 */
export const NODE_MAX_HEADER_SIZE = 1024 * 1024;

export const LIMIT_MESSAGES = {
  uriTooLong: MESSAGES.uriTooLong,
  headersTooLarge: MESSAGES.headersTooLarge,
  badRequest: 'Bad request.',
  timeout: 'Request timeout.',
} as const;

export interface LimitBreach {
  status: 414 | 431;
  message: string;
}

/** The first API Gateway size limit a request breaks, if any (checked before routing, as API Gateway does). */
export function sizeLimitBreach(target: string, rawHeaders: readonly string[]): LimitBreach | null {
  if (target.length > API_GATEWAY_LIMITS.urlLength) return { status: 414, message: LIMIT_MESSAGES.uriTooLong };
  let bytes = 0;
  // Node decodes header bytes as latin1, so latin1 length is the size on the wire.
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) bytes += Buffer.byteLength(`${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`, 'latin1');
  if (bytes > API_GATEWAY_LIMITS.headerBytes) return { status: 431, message: LIMIT_MESSAGES.headersTooLarge };
  return null;
}

export function methodArnTooLong(methodArn: string): LimitBreach | null {
  return Buffer.byteLength(methodArn) > API_GATEWAY_LIMITS.methodArnBytes ? { status: 414, message: LIMIT_MESSAGES.uriTooLong } : null;
}

/** A complete HTTP/1.1 error response with the envelope, for a socket that has no ServerResponse (no body for HEAD). */
export function rawEnvelopeResponse(status: number, message: string, embed: boolean, head = false): string {
  const body = JSON.stringify(errorBody(message));
  const headers: Record<string, string | number> = {
    ...JSON_HEADERS,
    // Elsewhere the Public API's: its daily quota, as every answer API Gateway gives itself says it.
    ...(embed ? { 'access-control-allow-origin': EMBED_CORS.allowOrigin, 'cache-control': 'no-store' } : { [RATE_LIMIT_HEADERS.limit]: String(DAILY_QUOTA) }),
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${lines.join('')}\r\n${head ? '' : body}`;
}

const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+)/;
interface RequestLine {
  method: string;
  target: string;
}
/** The request line of the latest chunk that began a request, per connection. */
const lastRequestLines = new WeakMap<Duplex, RequestLine>();

function requestLineOf(chunk: Buffer): RequestLine | null {
  const m = REQUEST_LINE.exec(chunk.subarray(0, API_GATEWAY_LIMITS.urlLength + 64).toString('latin1'));
  return m ? { method: m[1]!, target: m[2]! } : null;
}

/**
 * The server's `connection` listener: remembers the request target of every
 * chunk that starts with a request line, so that a request Node refuses in a
 * later chunk (headers beyond its limit) can still be told Embed or not.
 * Prepended, so it sees a chunk before the parser does.
 */
export function rememberRequestTargets(socket: Duplex): void {
  socket.prependListener('data', (chunk: Buffer) => {
    const line = requestLineOf(chunk);
    if (line) lastRequestLines.set(socket, line);
  });
}

/** The request line of a request Node could not parse: from the failing chunk, or the chunk that began it. */
function failedRequestLine(rawPacket: Buffer | undefined, socket: Duplex): RequestLine | null {
  return (rawPacket && requestLineOf(rawPacket)) ?? lastRequestLines.get(socket) ?? null;
}

function clientErrorStatus(code: string | undefined, target: string | null): LimitBreach | { status: 400 | 404 | 408; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return target !== null && target.length > API_GATEWAY_LIMITS.urlLength
        ? { status: 414, message: LIMIT_MESSAGES.uriTooLong }
        : { status: 431, message: LIMIT_MESSAGES.headersTooLarge };
    case 'HPE_INVALID_METHOD':
      // An unknown method is an unknown route to API Gateway.
      return { status: 404, message: MESSAGES.resourceNotFound };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: LIMIT_MESSAGES.timeout };
    default:
      return { status: 400, message: LIMIT_MESSAGES.badRequest };
  }
}

const answered = new WeakSet<Duplex>();
/** How long a refused client may go on sending before its connection is dropped. */
const DRAIN_MS = 2_000;

/**
 * The server's `clientError` listener: what Node's parser refused (malformed
 * request, headers beyond NODE_MAX_HEADER_SIZE, timeouts) is answered with
 * the envelope (CORS when the request line names an Embed path) instead of
 * Node's bare status line. A response still being written on the connection
 * (the error came from bytes after a complete request) goes out first. The
 * connection is then closed gracefully: what the client is still sending is
 * read and dropped, so it sees the answer and not a reset.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex, inFlight?: ServerResponse): void {
  if (answered.has(socket)) return; // the parser reports every further chunk again
  answered.add(socket);
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const line = failedRequestLine(error.rawPacket, socket);
  const { status, message } = clientErrorStatus(error.code, line?.target ?? null);
  const embed = line !== null && isEmbedPath(parseRequestTarget(line.target).pathname);
  const answer = () => {
    if (socket.writable) socket.end(rawEnvelopeResponse(status, message, embed, line?.method === 'HEAD'));
    socket.on('data', () => undefined);
    socket.resume();
    setTimeout(() => socket.destroy(), DRAIN_MS).unref();
  };
  if (inFlight && !inFlight.writableFinished) inFlight.once('close', answer);
  else answer();
}

/** CONNECT (authority form) is no route of either API: 404, on a connection Node hands over raw. */
export function answerConnect(target: string | undefined, socket: Duplex): void {
  socket.on('error', () => undefined);
  socket.end(rawEnvelopeResponse(404, MESSAGES.resourceNotFound, isEmbedPath(parseRequestTarget(target ?? '').pathname)));
}
