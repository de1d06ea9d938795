/**
 * API Gateway's request size quotas for a REST API ("Quotas for configuring
 * and running a REST API"): what the deployed gateway refuses before any
 * route runs. The local server enforces them (local/request-limits.ts) and
 * the OpenAPI documents state them as every operation's 414 and 431.
 */
export const API_GATEWAY_LIMITS = {
  /** Characters in the request target (the URL without scheme and host). */
  urlLength: 10_240,
  /** Bytes of all header lines: `name: value\r\n` each. */
  headerBytes: 10_240,
  /** Bytes of the method ARN API Gateway builds for an authorized method. */
  methodArnBytes: 1_600,
} as const;
