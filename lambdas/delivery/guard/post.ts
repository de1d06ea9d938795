/**
 * The one way our code connects to an address someone else chose (ARCHITECTURE rule 13): a webhook's POST.
 *
 * It resolves the host once, checks every address, and connects only to those: node's own http/https with a
 * `lookup` that answers the checked addresses whatever it is asked, so no second resolution can move the connection
 * (DNS rebinding), and a check of the connected socket's remote address besides. Its agent is its own (no proxy from
 * the environment, no pooled socket), no redirect is followed (node's client never follows one), one deadline
 * covers resolution, connection, TLS and the answer (a receiver dripping a byte at a time still times out), and
 * the answer is taken once its body has ended or `maxAnswerBytes` of it have been read (counted and dropped, the rest
 * never read); a head over node's 16 KiB is too large.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { classifyAddress } from './address-classes.js';
import type { GuardPolicy, Resolver } from './policy.js';
import { systemResolver } from './resolve.js';
import { literalAddress, screenUrl } from './url-check.js';

export interface PostRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Asked once the connection is made (TLS included) and just before the request is written: whether it may still
   * be sent. False, or a failure to say, writes nothing (`withdrawn`). The caller's last look at what may have
   * changed while the address was resolved and the connection made (a webhook closed meanwhile), so that nothing
   * slower than writing to a connected socket lies between that look and the send.
   */
  readonly beforeSend?: () => Promise<boolean>;
}

export type PostOutcome =
  | { kind: 'answered'; status: number } // any status, 3xx included (never followed); at most maxAnswerBytes of the body read, then dropped
  | { kind: 'refused'; errorClass: 'url' | 'address' } // the guard refused before connecting (a private address at delivery time...)
  | { kind: 'failed'; errorClass: 'dns' | 'connect' | 'tls' | 'timeout' | 'too_large' | 'protocol' }
  | { kind: 'withdrawn' }; // beforeSend said no once connected: nothing was written

export interface PostOptions {
  resolver?: Resolver;
  timeoutMs?: number /* 10_000 */;
  maxAnswerBytes?: number /* 65_536 */;
  /* test-only TLS trust, e.g. */ ca?: string | Buffer;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_ANSWER_BYTES = 65_536;
/** An answer's status line and headers: node's default bound, stated so that it cannot drift. */
export const MAX_ANSWER_HEAD_BYTES = 16_384;

/**
 * Headers the guard writes itself or that would change how it talks to the receiver: a request's own copies are
 * dropped (Host is the URL's host, Content-Length the body's; no Expect, Upgrade or hop-by-hop header).
 */
const GUARD_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade', 'expect']);

/**
 * An agent of its own per POST: nothing pooled, and no proxy. `proxyEnv: null` is node's documented opt-out: from
 * node 24, NODE_USE_ENV_PROXY=1, --use-env-proxy or http.setGlobalProxyFromEnv() build the global agents from
 * HTTP(S)_PROXY, and a change proposed to node (nodejs/node#64528) would give that default to every agent made without
 * the option; null opts out either way. Node 20's types do not know the option, hence the assertion; node 20 reads no
 * proxy from the environment at all.
 */
const AGENT_OPTIONS = { keepAlive: false, proxyEnv: null } as https.AgentOptions;

const failed = (errorClass: Extract<PostOutcome, { kind: 'failed' }>['errorClass']): PostOutcome => ({ kind: 'failed', errorClass });
const TIMED_OUT = failed('timeout');

/** Whether a connected socket's peer is one of the checked addresses (compared in one normal form). */
export function connectedToChecked(remoteAddress: string | undefined, checked: ReadonlySet<string>): boolean {
  return remoteAddress !== undefined && checked.has(classifyAddress(remoteAddress).address);
}

/** Never throws. Resolves once, checks, connects to the checked address (SNI and Host = the URL's host), no proxy from the environment, no redirect, one deadline for connect + answer (a slow drip is a timeout), reads at most maxAnswerBytes. */
export async function guardedPost(req: PostRequest, policy: GuardPolicy, opts: PostOptions = {}): Promise<PostOutcome> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    const screening = await untilAborted(screenUrl(req.url, policy, opts.resolver ?? systemResolver), deadline.signal);
    if (screening === undefined) return TIMED_OUT;
    if (!screening.ok) return screening.errorClass === 'dns' ? failed('dns') : { kind: 'refused', errorClass: screening.errorClass };
    return await send(screening.url, screening.addresses.map((v) => v.address), req, opts, deadline.signal);
  } catch {
    // Only a request node refuses to build (a header it will not send) gets here: nothing was sent.
    return failed('protocol');
  } finally {
    clearTimeout(timer);
  }
}

/** The promise's value, or undefined once the signal aborts first (a resolver that never answers). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve(undefined);
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => (signal.removeEventListener('abort', onAbort), resolve(value)),
      (error: unknown) => (signal.removeEventListener('abort', onAbort), reject(error)),
    );
  });
}

function ownHeaders(url: URL, req: PostRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (!GUARD_HEADERS.has(name.toLowerCase())) headers[name] = value;
  headers.host = url.host;
  headers['content-length'] = String(Buffer.byteLength(req.body, 'utf8'));
  return headers;
}

function send(url: URL, addresses: readonly string[], req: PostRequest, opts: PostOptions, signal: AbortSignal): Promise<PostOutcome> {
  return new Promise((resolve) => {
    const secure = url.protocol === 'https:';
    const literal = literalAddress(url);
    const maxAnswerBytes = opts.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
    const checked = new Set(addresses);
    const answers = addresses.map((address) => ({ address, family: isIP(address) }));
    // Asked for any name, it answers the checked addresses: node's connect (happy eyeballs included) tries only those.
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if (options.all) callback(null, answers);
      else callback(null, answers[0]!.address, answers[0]!.family);
    };
    const agent = secure ? new https.Agent(AGENT_OPTIONS) : new http.Agent(AGENT_OPTIONS);
    /** Where the exchange stands, which names the failure: the TCP connect, the TLS handshake, or the HTTP exchange. */
    let phase: 'connect' | 'tls' | 'http' = 'connect';
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      request.destroy();
      agent.destroy();
      resolve(outcome);
    };
    const onAbort = () => finish(TIMED_OUT);
    const request = (secure ? https : http).request({
      method: 'POST',
      host: literal ?? url.hostname,
      port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
      headers: ownHeaders(url, req),
      agent,
      lookup: pinned,
      maxHeaderSize: MAX_ANSWER_HEAD_BYTES,
      ...(secure ? { servername: literal === undefined ? url.hostname.replace(/\.$/, '') : undefined, rejectUnauthorized: true, ...(opts.ca ? { ca: opts.ca } : {}) } : {}),
    });
    // Nothing is written before the connection is made and beforeSend agrees (node writes a request's head with its
    // first write or its end, not before).
    const write = () => {
      if (settled) return;
      const asked = req.beforeSend ? req.beforeSend().catch(() => false) : Promise.resolve(true);
      void asked.then((ok) => (settled ? undefined : ok ? request.end(req.body) : finish({ kind: 'withdrawn' })));
    };
    request.on('socket', (socket: Socket) => {
      socket.once('connect', () => {
        if (!connectedToChecked(socket.remoteAddress, checked)) return finish({ kind: 'refused', errorClass: 'address' });
        phase = secure ? 'tls' : 'http';
        if (!secure) write();
      });
      if (secure) socket.once('secureConnect', () => ((phase = 'http'), write()));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'HPE_HEADER_OVERFLOW') return finish(failed('too_large'));
      finish(failed(phase === 'http' ? 'protocol' : phase));
    });
    // A 101 to a request that asked for no upgrade: not an answer.
    request.on('upgrade', () => finish(failed('protocol')));
    request.on('response', (answer: http.IncomingMessage) => {
      const status = answer.statusCode ?? 0;
      let read = 0;
      // The answer is taken once its body has ended or reached the bound (a 2xx with a large body is still a 2xx);
      // what has been read is dropped, and the rest is never read.
      answer.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= maxAnswerBytes) finish({ kind: 'answered', status });
      });
      answer.on('end', () => finish({ kind: 'answered', status }));
      // Cut off before its end (a shorter body than its Content-Length, a reset mid-answer).
      answer.on('error', () => finish(failed('protocol')));
      answer.on('close', () => finish(answer.complete ? { kind: 'answered', status } : failed('protocol')));
    });
    if (signal.aborted) return finish(TIMED_OUT);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
