/**
 * The local server's HTTP listener, built so that no request can go
 * unanswered: the request handler is attached before the port opens (a
 * request arriving during start-up waits for the app and is answered), and
 * every way Node can receive a request reaches the app or an envelope.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { NODE_MAX_HEADER_SIZE, answerClientError, answerConnect, rememberRequestTargets } from './request-limits.js';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * The HTTP server, with every way Node can receive a request wired to the
 * app (once `app` resolves): whatever Node's parser refuses or would answer
 * itself (malformed requests, oversized headers, CONNECT, an unknown
 * `Expect`) gets the envelope too, never a bare status line or a reset.
 */
/**
 * How long an idle kept-alive connection stays open. Node's 5 s lets a client
 * (fetch keeps connections, and stops reusing one 1 s before the server's
 * announced timeout) send on a connection the server is closing at that
 * moment, a reset (ECONNRESET) that a busy machine, whose event loops lag by
 * seconds, made happen in tests; a minute makes the race as rare as a minute's
 * silence between two requests.
 */
export const KEEP_ALIVE_MS = 60_000;

export function servingWhenReady(app: Promise<RequestListener>): Server {
  // The response being written on each connection, so an error answer never interleaves with it.
  const inFlight = new WeakMap<Duplex, ServerResponse>();
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    inFlight.set(req.socket, res);
    res.once('close', () => inFlight.get(req.socket) === res && inFlight.delete(req.socket));
    void app.then((handle) => handle(req, res));
  };
  const server = createServer({ maxHeaderSize: NODE_MAX_HEADER_SIZE, requireHostHeader: false, keepAliveTimeout: KEEP_ALIVE_MS }, serve);
  server.on('checkExpectation', serve);
  server.on('connection', rememberRequestTargets);
  server.on('clientError', (error: Error, socket: Duplex) => answerClientError(error, socket, inFlight.get(socket)));
  server.on('connect', (req: IncomingMessage, socket) => answerConnect(req.url, socket));
  return server;
}
