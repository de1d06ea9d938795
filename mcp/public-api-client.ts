/**
 * Calls the Public API with retries (spec §1 rule 3): on 408, 429 and any 5xx,
 * and on transient network failures (timeout, DNS, connection reset or
 * refused), with exponential backoff and jitter from the configured delay,
 * honouring Retry-After (capped by the timeout); never on other 4xx. A 200
 * whose body says `success: false` is a failure, not retried.
 *
 * The key goes in `Authorization: Bearer` and is never part of a result,
 * message or log line. Sleep, randomness and the timeout signal are injected
 * so tests count attempts and waits without waiting.
 */
import type { AdapterConfig } from './config.js';

export type Outcome =
  | { ok: true; status: number; body: { success: true; message: string; data: unknown; pagination?: unknown }; attempts: number }
  | { ok: false; status: number | null; message: string; details: unknown; attempts: number };

export interface ClientDeps {
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** A signal that aborts after `ms` (AbortSignal.timeout in production). */
  timeoutSignal: (ms: number) => AbortSignal;
  log: (message: string) => void;
}

export const defaultClientDeps: ClientDeps = {
  fetch: (...args) => fetch(...args),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
  timeoutSignal: (ms) => AbortSignal.timeout(ms),
  log: (message) => process.stderr.write(`${message}\n`),
};

const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** A network failure worth retrying, described without any request detail. */
function transientFailure(error: unknown, timeoutMs: number): string | null {
  // By name, not instanceof: the abort reason may be a DOMException from another realm.
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no response within ${timeoutMs} ms`;
  let cause: unknown = error;
  for (let depth = 0; cause && depth < 4; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return `network error (${code})`;
    cause = (cause as { cause?: unknown }).cause;
  }
  return null;
}

export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/** Retry-After as milliseconds (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export class PublicApiClient {
  constructor(
    private readonly config: AdapterConfig,
    private readonly deps: ClientDeps = defaultClientDeps,
  ) {}

  /** Exponential backoff with "equal jitter": half fixed, half random. */
  backoffMs(retry: number): number {
    const ceiling = this.config.retryDelayMs * 2 ** (retry - 1);
    return Math.round(ceiling / 2 + this.deps.random() * (ceiling / 2));
  }

  async get(path: string, query: Record<string, string | number | undefined> = {}): Promise<Outcome> {
    const url = new URL(`${this.config.baseUrl}${path}`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const maxAttempts = 1 + this.config.retryAttempts;

    for (let attempt = 1; ; attempt++) {
      let wait: number | null = null;
      let failure: Extract<Outcome, { ok: false }>;
      try {
        const res = await this.deps.fetch(url, {
          headers: { authorization: `Bearer ${this.config.apiKey}`, accept: 'application/json' },
          signal: this.deps.timeoutSignal(this.config.timeoutMs),
        });
        const text = await res.text();
        let body: Record<string, unknown> | null = null;
        try {
          body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
        } catch {
          body = null;
        }
        if (res.ok && body?.success === true) {
          return { ok: true, status: res.status, body: body as Extract<Outcome, { ok: true }>['body'], attempts: attempt };
        }
        failure = {
          ok: false,
          status: res.status,
          message: typeof body?.message === 'string' ? body.message : `The API answered HTTP ${res.status}${body ? '' : ' without a JSON body'}`,
          details: body?.errors ?? null,
          attempts: attempt,
        };
        if (!isRetryableStatus(res.status)) return failure;
        const hinted = retryAfterMs(res.headers.get('retry-after'), Date.now());
        if (hinted !== null) wait = Math.min(hinted, this.config.timeoutMs);
      } catch (error) {
        const reason = transientFailure(error, this.config.timeoutMs);
        failure = { ok: false, status: null, message: reason ?? 'The request failed', details: null, attempts: attempt };
        if (!reason) return failure;
      }
      if (attempt >= maxAttempts) return failure;
      const delay = wait ?? this.backoffMs(attempt);
      this.deps.log(`retrying ${path} after ${failure.status ?? failure.message} in ${delay} ms (attempt ${attempt + 1} of ${maxAttempts})`);
      await this.deps.sleep(delay);
    }
  }
}
