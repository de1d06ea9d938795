/**
 * The adapter's configuration, from the environment (spec §1 rule 5), parsed
 * once with zod. Every invalid value is reported by its variable name.
 */
import * as z from 'zod';
import { PLAUSIBLE_KEY_PATTERN } from '../lambdas/core/ids.js';
import { TOOL_NAMES, type ToolName } from './tool-names.js';

const int = (name: string, fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((value, ctx): number => {
      if (value === undefined || value === '') return fallback;
      const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

/**
 * PUBLIC_EVENTS_MCP_TOOLS: the tools to offer, comma-separated (spaces
 * around names ignored); unset or empty: all of them. An unknown name stops
 * the adapter rather than being dropped, so a typo never hides a tool quietly.
 */
const toolList = z
  .string()
  .optional()
  .transform((value, ctx): ToolName[] => {
    if (value === undefined || value.trim() === '') return [...TOOL_NAMES];
    const names = [...new Set(value.split(',').map((n) => n.trim()))];
    const unknown = names.filter((n) => n !== '' && !(TOOL_NAMES as readonly string[]).includes(n));
    if (unknown.length > 0 || names.includes('')) {
      const listed = unknown.length > 0 ? `unknown tool ${unknown.map((n) => JSON.stringify(n)).join(', ')}` : 'an empty name';
      ctx.addIssue({ code: 'custom', message: `PUBLIC_EVENTS_MCP_TOOLS names ${listed}: give a comma-separated list of ${TOOL_NAMES.join(', ')}` });
      return z.NEVER;
    }
    // In the adapter's own order, whatever order they were given in.
    return TOOL_NAMES.filter((n) => names.includes(n));
  });

const envSchema = z.object({
  PUBLIC_API_KEY: z
    .string({ error: 'PUBLIC_API_KEY is required' })
    .regex(PLAUSIBLE_KEY_PATTERN, { error: 'PUBLIC_API_KEY must be at least 20 visible ASCII characters' }),
  PUBLIC_API_BASE_URL: z
    .url({ error: 'PUBLIC_API_BASE_URL must be an http(s) URL', protocol: /^https?$/ })
    .optional()
    .transform((u) => (u ?? 'http://127.0.0.1:3000/api/public/v1').replace(/\/+$/, '')),
  PUBLIC_API_TIMEOUT_MS: int('PUBLIC_API_TIMEOUT_MS', 15_000, 1, 300_000),
  PUBLIC_API_RETRY_ATTEMPTS: int('PUBLIC_API_RETRY_ATTEMPTS', 2, 0, 10),
  PUBLIC_API_RETRY_DELAY_MS: int('PUBLIC_API_RETRY_DELAY_MS', 250, 0, 60_000),
  PUBLIC_EVENTS_MCP_TOOLS: toolList,
});

/** How the adapter reaches the Public API (mcp/public-api.ts needs nothing else). */
export interface ApiSettings {
  apiKey: string;
  baseUrl: string;
  /** Per attempt; also the cap on any Retry-After wait. */
  timeoutMs: number;
  /** Retries after the first attempt (so at most 1 + retryAttempts requests). */
  retryAttempts: number;
  /** Base of the exponential backoff. */
  retryDelayMs: number;
}

export interface AdapterConfig extends ApiSettings {
  /** The tools offered (PUBLIC_EVENTS_MCP_TOOLS), in the adapter's order. */
  tools: ToolName[];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function configFromEnv(env: Record<string, string | undefined>): AdapterConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => (/^PUBLIC_(API|EVENTS_MCP)_/.test(i.message) ? i.message : `${String(i.path[0])}: ${i.message}`)));
  }
  const e = parsed.data;
  return {
    apiKey: e.PUBLIC_API_KEY,
    baseUrl: e.PUBLIC_API_BASE_URL,
    timeoutMs: e.PUBLIC_API_TIMEOUT_MS,
    retryAttempts: e.PUBLIC_API_RETRY_ATTEMPTS,
    retryDelayMs: e.PUBLIC_API_RETRY_DELAY_MS,
    tools: e.PUBLIC_EVENTS_MCP_TOOLS,
  };
}
