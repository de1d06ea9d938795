/**
 * The adapter's view of the Public API, on the client package's transport
 * (client/): the same retry rules as any consumer gets, set from the adapter's
 * configuration (spec §1 rule 3). The adapter needs the API's envelope as it
 * came (both variants of the user-events route, the status and `errors` of a
 * failure) rather than the client's unwrapped results, so it reads answers
 * through the transport and keeps its own outcome shape for its tools.
 *
 * What the adapter keeps from before the client existed, exactly: a wait the
 * API asks for (Retry-After only) is capped by the timeout and then waited
 * (never refused), and every retry is logged to stderr without the key.
 */
import { Transport, failureMessage, isSuccess, retryAfterMs, type TransportHooks } from '../client/src/index.js';
import type { ApiSettings } from './config.js';

export { retryAfterMs };

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

export class PublicApiClient {
  private readonly transport: Transport;

  constructor(config: ApiSettings, deps: ClientDeps = defaultClientDeps) {
    const hooks: TransportHooks = {
      fetch: deps.fetch,
      sleep: deps.sleep,
      random: deps.random,
      timeoutSignal: deps.timeoutSignal,
      onRetry: (e) => deps.log(`retrying ${e.path} after ${e.status ?? e.reason} in ${e.delayMs} ms (attempt ${e.attempt} of ${e.maxAttempts})`),
    };
    this.transport = new Transport({
      ...hooks,
      baseUrl: config.baseUrl,
      headers: { authorization: `Bearer ${config.apiKey}` },
      timeoutMs: config.timeoutMs,
      maxRetries: config.retryAttempts,
      retryDelayMs: config.retryDelayMs,
      maxRetryDelayMs: config.timeoutMs,
      onLongWait: 'clamp',
      honourRateLimitReset: false,
    });
  }

  /** Exponential backoff with "equal jitter": half fixed, half random. */
  backoffMs(retry: number): number {
    return this.transport.backoffMs(retry);
  }

  async get(path: string, query: Record<string, string | number | undefined> = {}): Promise<Outcome> {
    const answer = await this.transport.get(path, query);
    if (isSuccess(answer)) return { ok: true, status: answer.status, body: answer.json, attempts: answer.attempts };
    return {
      ok: false,
      status: answer.status,
      message: failureMessage(answer),
      details: answer.status === null ? null : (answer.json?.errors ?? null),
      attempts: answer.attempts,
    };
  }
}
