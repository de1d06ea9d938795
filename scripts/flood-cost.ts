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
