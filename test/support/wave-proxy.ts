/**
 * A recording proxy in front of a store's HTTP port that counts round trips
 * as DynamoDB sees them: requests as they reach the wire, after everything
 * the SDK does to a call (its serializing, signing and retries, its socket
 * pool), not calls as the code issues them (scripts/bench-round-trips.ts,
 * waveClient, counts those at the SDK's first step).
 *
 * It holds the requests that arrive until the process that sends them has
 * quieted (no new request for a few turns of the event loop), forwards them
 * all at once, and hands every answer back together: one wave. A request
 * that could only be sent once another was answered (a dependent call, or
 * one waiting for a socket of the client's pool) lands in a later wave, so a
 * change's round trips are the waves from its first request to its last,
 * whatever this machine's speed (a timed proxy would count a wave whose
 * calls leave one by one as several). Requests are told apart by the header
 * WAVE_TAG_HEADER (withWaveTag puts the caller's tag on a client's calls).
 * In-process: the quiet is the sender's, so both run in one process (a test).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export const WAVE_TAG_HEADER = 'x-wave-tag';

export interface ProxiedRequest {
  tag: string;
  /** The DynamoDB operation (x-amz-target's). */
  operation: string;
  wave: number;
}

/** Turns of the event loop with no new request that end a wave: the SDK's steps between a call and its bytes on the socket take a few. */
const QUIET_TURNS = 4;

export async function startWaveProxy(upstream: string): Promise<{ endpoint: string; requests: ProxiedRequest[]; close(): Promise<void> }> {
  const target = new URL(upstream);
  const requests: ProxiedRequest[] = [];
  type Held = { headers: IncomingHttpHeaders; method: string; url: string; body: Buffer; answer: (status: number, headers: IncomingHttpHeaders, body: Buffer) => void };
  let held: Held[] = [];
  let arrivals = 0;
  let releasing: Promise<void> | undefined;
  let waves = 0;
  const forward = (h: Held) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      // A connection of its own per request (agent: false): a kept-alive socket the store closes while idle
      // resets the next request sent on it (ECONNRESET), a race that only a loaded machine loses.
      const up = request({ host: target.hostname, port: target.port, method: h.method, path: h.url, headers: h.headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 500, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      up.on('error', reject);
      up.end(h.body);
    });
  const release = async () => {
    for (let quiet = 0; quiet < QUIET_TURNS; ) {
      const before = arrivals;
      await new Promise((resolve) => setImmediate(resolve));
      quiet = arrivals === before ? quiet + 1 : 0;
    }
    const wave = held;
    held = [];
    const number = waves++;
    for (const h of wave) requests.push({ tag: String(h.headers[WAVE_TAG_HEADER] ?? ''), operation: String(h.headers['x-amz-target'] ?? '').split('.').pop()!, wave: number });
    const answers = await Promise.all(wave.map(forward));
    wave.forEach((h, i) => h.answer(answers[i]!.status, answers[i]!.headers, answers[i]!.body));
    releasing = undefined;
    if (held.length) releasing = release();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrivals++;
      held.push({
        headers: req.headers,
        method: req.method ?? 'POST',
        url: req.url ?? '/',
        body: Buffer.concat(chunks),
        answer: (status, headers, body) => {
          res.writeHead(status, headers);
          res.end(body);
        },
      });
      releasing ??= release();
    });
  });
  // The client's kept-alive sockets must not be closed under it between waves (Node's 5 s default): its retry
  // of a reset request would land a wave late and count as a round trip the code never made.
  server.keepAliveTimeout = 10 * 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The round trips of each tag's requests: the waves from its first request's to its last's. */
export function roundTripsByTag(requests: readonly ProxiedRequest[]): Map<string, number> {
  const span = new Map<string, { first: number; last: number }>();
  for (const r of requests) {
    const s = span.get(r.tag);
    span.set(r.tag, s ? { first: Math.min(s.first, r.wave), last: Math.max(s.last, r.wave) } : { first: r.wave, last: r.wave });
  }
  return new Map([...span].map(([tag, s]) => [tag, s.last - s.first + 1]));
}

const tags = new AsyncLocalStorage<string>();

/** Puts the tag of the code running (runTagged) on each request `client` sends (its build step: after the SDK chose what to send, before it is signed). */
export function withWaveTag(client: DynamoDBDocumentClient): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const tag = tags.getStore();
      if (tag !== undefined) (args.request as { headers: Record<string, string> }).headers[WAVE_TAG_HEADER] = tag;
      return next(args);
    },
    { step: 'build', name: 'waveTag' },
  );
}

export function runTagged<T>(tag: string, run: () => Promise<T>): Promise<T> {
  return tags.run(tag, run);
}
