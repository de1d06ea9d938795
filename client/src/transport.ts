/**
 * One GET with the retry rules: another attempt on 408, 429, 5xx and
 * transient network failures, with exponential backoff and jitter, or the wait
 * the API asks for (Retry-After, then X-RateLimit-Reset); never on other 4xx.
 * Only global fetch and AbortSignal: it runs unchanged in Node 20+ and browsers.
 *
 * Sleep, randomness and the per-attempt timeout signal are injectable so tests
 * count attempts and waits without waiting.
 */
import { backoffMs, isRetryableStatus, rateLimitResetMs, retryAfterMs, transientFailure } from './retry.js';

export interface RetryOptions {
  /** Per attempt, in milliseconds. Default 15000. */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt (so at most 1 + maxRetries requests). Default 2. */
  maxRetries?: number | undefined;
  /** Base of the exponential backoff, in milliseconds. Default 250. */
  retryDelayMs?: number | undefined;
  /** The longest wait the client sleeps on the API's say-so. Default 30000. */
  maxRetryDelayMs?: number | undefined;
  /**
   * When the API asks for a longer wait than maxRetryDelayMs: 'fail' (default)
   * gives up at once (a 429 becomes a RateLimitError carrying the wait);
   * 'clamp' waits maxRetryDelayMs and tries again.
   */
  onLongWait?: 'fail' | 'clamp' | undefined;
  /** Read X-RateLimit-Reset when Retry-After is absent. Default true. */
  honourRateLimitReset?: boolean | undefined;
}

export interface RetryEvent {
  path: string;
  /** The status that failed, or null for a network failure. */
  status: number | null;
  /** Why the attempt failed, without any request detail. */
  reason: string;
  delayMs: number;
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  maxAttempts: number;
}

export interface TransportHooks {
  /** Defaults to the global fetch. */
  fetch?: typeof fetch | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
  /** A signal that aborts after `ms`; AbortSignal.timeout by default. */
  timeoutSignal?: ((ms: number) => AbortSignal) | undefined;
  now?: (() => number) | undefined;
  /** Called before each retry; the client logs nothing by itself. */
  onRetry?: ((event: RetryEvent) => void) | undefined;
}

export interface TransportOptions extends RetryOptions, TransportHooks {
  baseUrl: string;
  /** Sent with every request (the key header, if any). Never echoed in errors. */
  headers?: Record<string, string> | undefined;
}

export type Query = Record<string, string | number | undefined>;

/** An answer as it came, after the last attempt. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON when it is an object, else null. */
  json: Record<string, unknown> | null;
  attempts: number;
  /** The wait the API asked for and the client declined (over maxRetryDelayMs), or null. */
  declinedWaitMs: number | null;
}

/** No answer at all after the last attempt; `reason` is null for a non-transient failure. */
export interface NoAnswer {
  status: null;
  reason: string | null;
  attempts: number;
}

export const RETRY_DEFAULTS = {
  timeoutMs: 15_000,
  maxRetries: 2,
  retryDelayMs: 250,
  maxRetryDelayMs: 30_000,
  onLongWait: 'fail',
  honourRateLimitReset: true,
} as const satisfies Settled<RetryOptions>;

/** Every option given: none absent, none undefined. */
type Settled<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };

export class Transport {
  private readonly o: Settled<RetryOptions> & Settled<Omit<TransportHooks, 'onRetry'>> & Pick<TransportOptions, 'onRetry' | 'headers' | 'baseUrl'>;

  constructor(options: TransportOptions) {
    // An option given as undefined is absent: the default applies.
    const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<Settled<TransportOptions>>;
    this.o = {
      ...RETRY_DEFAULTS,
      fetch: (...args) => fetch(...args),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      random: Math.random,
      timeoutSignal: (ms) => AbortSignal.timeout(ms),
      now: Date.now,
      ...defined,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
  }

  backoffMs(retry: number): number {
    return backoffMs(retry, this.o.retryDelayMs, this.o.random);
  }

  /** GET `path` (already encoded) with `query`; retries per the rules above. */
  async get(path: string, query: Query = {}, accept = 'application/json'): Promise<Answer | NoAnswer> {
    const url = new URL(`${this.o.baseUrl}${path}`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const maxAttempts = 1 + this.o.maxRetries;

    for (let attempt = 1; ; attempt++) {
      let wait: number | null = null;
      let result: Answer | NoAnswer;
      try {
        const res = await this.o.fetch(url, {
          headers: { ...this.o.headers, accept },
          signal: this.o.timeoutSignal(this.o.timeoutMs),
        });
        const text = await res.text();
        result = { status: res.status, headers: res.headers, text, json: parseObject(text), attempts: attempt, declinedWaitMs: null };
        if (!isRetryableStatus(res.status)) return result;
        const asked = this.askedWaitMs(res.headers);
        if (asked !== null) {
          if (asked > this.o.maxRetryDelayMs && this.o.onLongWait === 'fail') return { ...result, declinedWaitMs: asked };
          wait = Math.min(asked, this.o.maxRetryDelayMs);
        }
      } catch (error) {
        const reason = transientFailure(error, this.o.timeoutMs);
        result = { status: null, reason, attempts: attempt };
        if (reason === null) return result;
      }
      if (attempt >= maxAttempts) return result;
      const delayMs = wait ?? this.backoffMs(attempt);
      this.o.onRetry?.({
        path,
        status: result.status,
        reason: result.status === null ? (result as NoAnswer).reason ?? 'network error' : `HTTP ${result.status}`,
        delayMs,
        attempt: attempt + 1,
        maxAttempts,
      });
      await this.o.sleep(delayMs);
    }
  }

  /** Retry-After first, then (if enabled) X-RateLimit-Reset; null when neither says. */
  private askedWaitMs(headers: Headers): number | null {
    const now = this.o.now();
    const retryAfter = retryAfterMs(headers.get('retry-after'), now);
    if (retryAfter !== null || !this.o.honourRateLimitReset) return retryAfter;
    return rateLimitResetMs(headers.get('x-ratelimit-reset'), now);
  }
}

function parseObject(text: string): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
