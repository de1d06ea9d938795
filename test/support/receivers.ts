/**
 * Webhook receivers on this machine's loopback for the outbound guard's tests: HTTP and HTTPS servers that record
 * what reaches them, raw TCP listeners that misbehave at will, and one that never accepts. Each listens on an
 * ephemeral port; `closeReceivers()` (in an afterEach) ends every one and every connection they hold.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Worker } from 'node:worker_threads';
import { ROOT } from './process.js';

const fixture = (name: string) => readFileSync(`${ROOT}test/fixtures/tls/${name}`);
/** test/fixtures/tls/make-certs.sh: a test CA, and receiver.test / localhost / 127.0.0.1 / ::1 signed by it. */
export const TLS = {
  ca: fixture('ca.pem'),
  key: fixture('receiver-key.pem'),
  cert: fixture('receiver.pem'),
  expired: fixture('expired.pem'),
};

export interface Received {
  method: string;
  url: string;
  /** Header names in the order sent, lowercased, and their values. */
  headers: [string, string][];
  body: string;
  /** The SNI name the client sent (false when it sent none); undefined over plain HTTP. */
  servername: string | false | undefined;
}

export interface Receiver {
  port: number;
  /** `http://HOST:PORT` (the host bracketed when IPv6). */
  origin: string;
  received: Received[];
  /** Every TCP connection accepted, and how many the other side has closed. */
  connections: net.Socket[];
  closedConnections: () => number;
}

type Answer = (req: http.IncomingMessage, res: http.ServerResponse, received: Received) => void;

const running: { close: () => Promise<void> }[] = [];

function track(server: net.Server, connections: net.Socket[]) {
  server.on('connection', (socket: net.Socket) => {
    connections.push(socket);
    socket.on('error', () => {});
  });
  running.push({
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of connections) socket.destroy();
        server.close(() => resolve());
      }),
  });
}

function listen(server: net.Server, host: string, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => resolve((server.address() as net.AddressInfo).port));
  });
}

function receiverOf(server: net.Server, host: string, port: number, received: Received[], connections: net.Socket[], scheme: string): Receiver {
  const origin = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return { port, origin, received, connections, closedConnections: () => connections.filter((c) => c.destroyed || c.readableEnded).length };
}

function recording(answer: Answer, received: Received[]) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!]);
      const servername = 'encrypted' in req.socket ? ((req.socket as TLSSocket).servername ?? false) : undefined;
      const entry: Received = { method: req.method ?? '', url: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8'), servername };
      received.push(entry);
      answer(req, res, entry);
    });
  };
}

/** An HTTP receiver; `answer` answers each request once its body has arrived (by default `204`). */
export async function httpReceiver(answer: Answer = (_req, res) => res.writeHead(204).end(), { host = '127.0.0.1', port = 0 } = {}): Promise<Receiver> {
  const received: Received[] = [];
  const connections: net.Socket[] = [];
  const server = http.createServer(recording(answer, received));
  track(server, connections);
  return receiverOf(server, host, await listen(server, host, port), received, connections, 'http');
}

/** An HTTPS receiver with the test CA's certificate for receiver.test, localhost, 127.0.0.1 and ::1 (or the expired one). */
export async function httpsReceiver(answer: Answer = (_req, res) => res.writeHead(204).end(), { host = '127.0.0.1', port = 0, expired = false } = {}): Promise<Receiver> {
  const received: Received[] = [];
  const connections: net.Socket[] = [];
  const server = https.createServer({ key: TLS.key, cert: expired ? TLS.expired : TLS.cert }, recording(answer, received));
  server.on('tlsClientError', () => {});
  track(server, connections);
  return receiverOf(server, host, await listen(server, host, port), received, connections, 'https');
}

/** A TCP listener that does whatever `onSocket` does with each connection (answer garbage, drip, stay silent). */
export async function rawReceiver(onSocket: (socket: net.Socket) => void, { host = '127.0.0.1', port = 0 } = {}): Promise<Receiver> {
  const connections: net.Socket[] = [];
  const server = net.createServer(onSocket);
  track(server, connections);
  return receiverOf(server, host, await listen(server, host, port), [], connections, 'http');
}

/** A port on 127.0.0.1 where nothing listens (bound, then let go): connecting to it is refused at once. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server, '127.0.0.1');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A listener that never accepts: its thread is blocked (Atomics.wait) so it never calls accept(), and its backlog
 * of one is filled first, so the kernel drops the next connection's SYN and that connect hangs, as it does at a
 * host that never answers, with no packet leaving loopback. `stillConnecting()` is a probe connection's state.
 */
export async function neverAccepting(): Promise<{ port: number; stillConnecting: () => boolean }> {
  const gate = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const server = require('node:net').createServer();
     server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
       parentPort.postMessage(server.address().port);
       Atomics.wait(workerData, 0, 0);
     });`,
    { eval: true, workerData: gate },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const sockets: net.Socket[] = [];
  // The accept queue holds backlog + 1 connections on Linux: these two fill it (the kernel completes their handshakes).
  for (let i = 0; i < 2; i++) {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    sockets.push(socket);
    await new Promise((resolve) => socket.once('connect', resolve));
  }
  const probe = net.connect(port, '127.0.0.1');
  probe.on('error', () => {});
  sockets.push(probe);
  running.push({
    close: async () => {
      for (const socket of sockets) socket.destroy();
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      await worker.terminate();
    },
  });
  return { port, stillConnecting: () => probe.connecting };
}

export async function closeReceivers(): Promise<void> {
  await Promise.all(running.splice(0).map((r) => r.close()));
}
