/**
 * What a flood of a million Public API requests without a valid key costs
 * (issue 22), with and without the abuse limits of lib/rest-apis.ts (the
 * stage throttle) and lib/public-waf.ts (the per-address rate rule). Pure:
 * the bench feeds it the authorizer's measured profile.
 *
 * Such a request never reaches a route's Lambda: the authorizer (result
 * cache off, so revocation is immediate) is invoked for every one that API
 * Gateway admits and refuses it (401); made-up keys also cost it one strongly
 * consistent GetItem. API Gateway's stage throttle answers what exceeds its
 * rate itself (429, no Lambda); a web ACL blocks an address past its limit
 * before API Gateway sees the request.
 *
 * Assumed, and said so in docs/performance.md: API Gateway bills every request it
 * receives, throttled or refused included (an upper bound: AWS has said it
 * does not bill requests that fail authorization); every request it receives
 * writes an access-log line.
 */
import { GB, LAMBDA_MEMORY_MB, MILLION, PRICES, type CostBreakdown, type InvocationProfile, type Prices } from './cost-model.js';

/** The flood the table prices: a million requests in ten minutes (about 1,667 a second). */
export const FLOOD = { requests: 1e6, seconds: 600 } as const;

export interface FloodAdmission {
  /** Share of the flood that reaches API Gateway (the rest is blocked by the web ACL). */
  readonly gateway: number;
  /** Share that API Gateway admits past its throttle, and so invokes the authorizer. */
  readonly authorizer: number;
  /** Whether a web ACL inspects every request. */
  readonly waf: boolean;
}

export interface FloodProfile {
  /** One authorizer invocation refusing the request. */
  readonly authorizer: InvocationProfile;
  readonly accessLogBytes: number;
  /** The 401 or 429 on the wire, headers included. */
  readonly answerBytes: number;
}

/** The services a flood reaches: a CloudFront distribution is not in front of the Public API, a web ACL may be. */
export type FloodCost = Omit<CostBreakdown, 'cloudFront'> & { readonly waf: number };

/** USD per million flood requests. */
export function floodCostPerMillion(profile: FloodProfile, admitted: FloodAdmission, prices: Prices = PRICES): FloodCost {
  for (const share of [admitted.gateway, admitted.authorizer]) if (!(share >= 0 && share <= 1)) throw new RangeError(`a share must be within [0, 1], got ${share}`);
  if (admitted.authorizer > admitted.gateway) throw new RangeError('the authorizer cannot see more than API Gateway admits');
  const inv = profile.authorizer;
  const gbSeconds = (inv.billedMs / 1000) * (LAMBDA_MEMORY_MB / 1024);
  const parts = {
    apiGateway: admitted.gateway * prices.apiGatewayRestRequest.usd * MILLION,
    lambda: admitted.authorizer * (prices.lambdaRequest.usd + gbSeconds * prices.lambdaArmGbSecond.usd) * MILLION,
    dynamodb: admitted.authorizer * inv.readUnits * prices.dynamoReadRequestUnit.usd * MILLION,
    logs: ((admitted.gateway * profile.accessLogBytes + admitted.authorizer * inv.logBytes) / GB) * prices.logsIngestionGb.usd * MILLION,
    dataTransfer: ((admitted.gateway * profile.answerBytes) / GB) * prices.internetTransferOutGb.usd * MILLION,
    waf: admitted.waf ? prices.wafRequest.usd * MILLION : 0,
  };
  return { ...parts, total: parts.apiGateway + parts.lambda + parts.dynamodb + parts.logs + parts.dataTransfer + parts.waf };
}

export interface FloodLimits {
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /** The web ACL's requests per address per 5 minutes. */
  readonly wafLimit: number;
}

/** The scenarios the flood table of docs/performance.md shows, for the FLOOD above. */
export function floodScenarios(limits: FloodLimits): { name: string; admitted: FloodAdmission }[] {
  const { requests, seconds } = FLOOD;
  // A token bucket: the burst at once, then the rate.
  const throttled = Math.min(1, (limits.throttle.rateLimit * seconds + limits.throttle.burstLimit) / requests);
  // One address: the rate rule lets its limit through per five-minute window, then blocks.
  const oneAddress = Math.min(1, (limits.wafLimit * Math.ceil(seconds / 300)) / requests);
  return [
    { name: 'no limits (before issue 22)', admitted: { gateway: 1, authorizer: 1, waf: false } },
    { name: 'stage throttle', admitted: { gateway: 1, authorizer: throttled, waf: false } },
    { name: 'stage throttle + web ACL, one address', admitted: { gateway: oneAddress, authorizer: Math.min(oneAddress, throttled), waf: true } },
    { name: 'stage throttle + web ACL, many addresses under its limit', admitted: { gateway: 1, authorizer: throttled, waf: true } },
  ];
}

/**
 * A one-client flood of the Embed API (issue 58, s4): a million requests in
 * ten minutes, each with a new cache-busting query string, to a cacheable
 * route. Every request is a CloudFront request (billed, its answer sent);
 * what misses the cache goes on to API Gateway (billed, an upper bound as
 * above); what the Embed stage throttle admits invokes the route's Lambda
 * and reads DynamoDB; a web ACL inspects (and bills) every request and
 * blocks an address past its limit before the cache.
 */
export interface EmbedFloodAdmission {
  /** Share that misses the cache and reaches API Gateway. */
  readonly origin: number;
  /** Share that API Gateway admits past its throttle: the route's Lambda runs. */
  readonly lambda: number;
  readonly waf: boolean;
}

export interface EmbedFloodProfile {
  /** One origin invocation of the route, as the bench measured it. */
  readonly route: InvocationProfile;
  /** API Gateway's access-log line, per request it receives. */
  readonly accessLogBytes: number;
  /** The answer CloudFront sends, headers included (compressed where it compresses). */
  readonly edgeBytes: number;
}

export type EmbedFloodCost = Omit<CostBreakdown, 'dataTransfer'> & { readonly waf: number };

/** USD per million Embed flood requests. */
export function embedFloodCostPerMillion(profile: EmbedFloodProfile, admitted: EmbedFloodAdmission, prices: Prices = PRICES): EmbedFloodCost {
  for (const share of [admitted.origin, admitted.lambda]) if (!(share >= 0 && share <= 1)) throw new RangeError(`a share must be within [0, 1], got ${share}`);
  if (admitted.lambda > admitted.origin) throw new RangeError('the Lambda cannot see more than API Gateway admits');
  const inv = profile.route;
  const gbSeconds = (inv.billedMs / 1000) * (LAMBDA_MEMORY_MB / 1024);
  const parts = {
    cloudFront: (prices.cloudFrontHttpsRequest.usd + (profile.edgeBytes / GB) * prices.cloudFrontTransferOutGb.usd) * MILLION,
    apiGateway: admitted.origin * prices.apiGatewayRestRequest.usd * MILLION,
    lambda: admitted.lambda * (prices.lambdaRequest.usd + gbSeconds * prices.lambdaArmGbSecond.usd) * MILLION,
    dynamodb: admitted.lambda * inv.readUnits * prices.dynamoReadRequestUnit.usd * MILLION,
    logs: ((admitted.origin * profile.accessLogBytes + admitted.lambda * inv.logBytes) / GB) * prices.logsIngestionGb.usd * MILLION,
    waf: admitted.waf ? prices.wafRequest.usd * MILLION : 0,
  };
  return { ...parts, total: parts.cloudFront + parts.apiGateway + parts.lambda + parts.dynamodb + parts.logs + parts.waf };
}

export interface EmbedFloodLimits {
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly wafLimit: number;
  /** The route's max-age: how often the one cached URL misses at an edge. */
  readonly maxAgeSeconds: number;
}

/** The scenarios of docs/performance.md's Embed flood table, for the FLOOD above from one client. */
export function embedFloodScenarios(limits: EmbedFloodLimits): { name: string; admitted: EmbedFloodAdmission }[] {
  const { requests, seconds } = FLOOD;
  const throttled = Math.min(1, (limits.throttle.rateLimit * seconds + limits.throttle.burstLimit) / requests);
  const oneAddress = Math.min(1, (limits.wafLimit * Math.ceil(seconds / 300)) / requests);
  // One URL after the edge drops the parameter: one miss per max-age (at one edge location).
  const oneUrl = Math.min(1, Math.ceil(seconds / limits.maxAgeSeconds) / requests);
  return [
    { name: 'before: every query string in the cache key, no web ACL', admitted: { origin: 1, lambda: throttled, waf: false } },
    { name: 'cache key of the route\'s own parameters, busting with one it does not read', admitted: { origin: oneUrl, lambda: oneUrl, waf: false } },
    { name: '+ web ACL, one address busting with a parameter the route reads', admitted: { origin: oneAddress, lambda: Math.min(oneAddress, throttled), waf: true } },
    { name: '+ web ACL, many addresses under its limit, busting with a parameter the route reads', admitted: { origin: 1, lambda: throttled, waf: true } },
  ];
}
