/**
 * What a million requests cost on AWS, from what `npm run bench` measures per
 * request (read units, DynamoDB round trips, handler time, response and log
 * bytes) and the list prices below. Pure: no I/O, no clock; the bench feeds it
 * and docs/performance.md quotes the table the bench prints.
 *
 * Scope: the per-request (variable) cost only, on-demand list prices in
 * us-east-1, no free tier, first volume tier of every service. Fixed monthly
 * costs (WAF web ACL and rules, dashboard, alarms) and storage are in
 * scripts/idle-cost.ts; custom metrics and the write side are in neither
 * (docs/performance.md, "Cost per million requests").
 */

/** When the prices below were looked up (from stored copies of the AWS pricing pages and summaries quoting them). */
export const PRICES_AS_OF = '2026-11-23';
export const PRICE_REGION = 'us-east-1';

export interface UnitPrice {
  /** USD per `unit`. */
  readonly usd: number;
  readonly unit: string;
  /** The AWS pricing page the figure belongs to. */
  readonly source: string;
  /** Where the figure was read: the AWS page itself, or a summary quoting it where the page's text could not be read. */
  readonly seenIn: string;
}

export const PRICES = {
  /** REST APIs, first 333 million requests a month. */
  apiGatewayRestRequest: { usd: 3.5 / 1e6, unit: 'request', source: 'Amazon API Gateway pricing (REST APIs)', seenIn: 'AWS whitepaper quoting the pricing page' },
  /** Same for x86 and Arm. */
  lambdaRequest: { usd: 0.2 / 1e6, unit: 'invocation', source: 'AWS Lambda pricing (requests)', seenIn: 'third-party summaries' },
  /** Arm (the functions are arm64), first 7.5 billion GB-seconds a month. */
  lambdaArmGbSecond: { usd: 0.0000133334, unit: 'GB-second', source: 'AWS Lambda pricing (duration, Arm)', seenIn: 'third-party summaries' },
  /** On-demand read request unit (after the 50 % cut of November 2024; it was $0.25 per million). */
  dynamoReadRequestUnit: { usd: 0.125 / 1e6, unit: 'read request unit', source: 'Amazon DynamoDB pricing (on-demand)', seenIn: 'third-party summaries of the November 2024 cut' },
  /** HTTPS GET/HEAD, United States and Europe. */
  cloudFrontHttpsRequest: { usd: 0.01 / 1e4, unit: 'request', source: 'Amazon CloudFront pricing (requests, HTTPS)', seenIn: 'third-party summaries (not confirmed on the AWS page)' },
  /** Data transfer out to the internet, United States / Europe, first 10 TB a month. */
  cloudFrontTransferOutGb: { usd: 0.085, unit: 'GB', source: 'Amazon CloudFront pricing (regional data transfer out)', seenIn: 'AWS pricing page' },
  /** API Gateway answers to the internet are billed at the EC2 data transfer out rate, first 10 TB a month (after 100 GB free across the account). */
  internetTransferOutGb: { usd: 0.09, unit: 'GB', source: 'Amazon EC2 on-demand pricing (data transfer out to the internet)', seenIn: 'an AWS re:Post billing answer and summaries' },
  /** Requests a regional web ACL inspects (the web ACL's and each rule's monthly fee are fixed costs, outside this model). */
  wafRequest: { usd: 0.6 / 1e6, unit: 'request', source: 'AWS WAF pricing (requests)', seenIn: 'third-party summaries' },
  /** Standard log class, first tier (Lambda's own logs are tiered from this rate down). */
  logsIngestionGb: { usd: 0.5, unit: 'GB', source: 'Amazon CloudWatch pricing (Logs, data ingestion)', seenIn: 'third-party summaries' },
} as const satisfies Record<string, UnitPrice>;

export type Prices = { readonly [K in keyof typeof PRICES]: Pick<UnitPrice, 'usd'> };

/** As lib/route-function.ts deploys every function, the authorizer included (a unit test keeps the two in step). */
export const LAMBDA_MEMORY_MB = 512;

/**
 * Lambda gives a function CPU in proportion to its memory, one full vCPU at
 * 1,769 MB (AWS Lambda developer guide, "memory and computing power"), so CPU
 * time measured on one core of this machine takes about 1769 / 512 = 3.5× as
 * long at 512 MB.
 */
export const FULL_VCPU_MB = 1769;

export interface DurationAssumptions {
  /** Wall time of one DynamoDB round trip from Lambda in the same region. */
  readonly dynamoRoundTripMs: number;
  /** Multiplier from CPU time measured here to CPU time at LAMBDA_MEMORY_MB. */
  readonly cpuScale: number;
}

/**
 * 5 ms a round trip: DynamoDB answers a small GetItem/Query in single-digit
 * milliseconds; 5 is a middle value, not a measurement (the local store is
 * in-process, so the bench cannot measure it).
 */
export const DURATION_ASSUMPTIONS: DurationAssumptions = { dynamoRoundTripMs: 5, cpuScale: FULL_VCPU_MB / LAMBDA_MEMORY_MB };

/**
 * The billed duration of one warm invocation: this project's own CPU time
 * (handler time minus the time the same DynamoDB calls take with a bare
 * client, both measured by the bench), scaled to Lambda's CPU share, plus one
 * assumed latency per round trip (counted one after another, an upper bound
 * where a handler makes two in parallel). Lambda bills whole milliseconds,
 * at least 1.
 */
export function billedDurationMs(
  measured: { handlerMs: number; dynamoMs: number; roundTrips: number },
  assumptions: DurationAssumptions = DURATION_ASSUMPTIONS,
): number {
  const ownCpuMs = Math.max(0, measured.handlerMs - measured.dynamoMs) * assumptions.cpuScale;
  return Math.max(1, Math.ceil(ownCpuMs + measured.roundTrips * assumptions.dynamoRoundTripMs));
}

/** One Lambda invocation on the request's path. */
export interface InvocationProfile {
  /** DynamoDB read request units (eventually consistent RCU from the bench = RRU one for one; 1 strongly consistent 4 KB read = 1 RRU). */
  readonly readUnits: number;
  readonly billedMs: number;
  /** CloudWatch Logs bytes the invocation writes (platform lines + EMF document). */
  readonly logBytes: number;
}

/** What one request of a route costs to serve, as measured. */
export interface RequestProfile {
  readonly route: InvocationProfile;
  /** The Public API's REQUEST authorizer: one more invocation per keyed request, its result never cached (TTL 0). */
  readonly authorizer?: InvocationProfile;
  /** API Gateway's access log line for the request. */
  readonly accessLogBytes: number;
  /** Bytes on the wire as API Gateway sends them (uncompressed: the REST APIs do not compress). */
  readonly originBytes: number;
  /** Bytes on the wire as CloudFront sends them (compressed when the body is large enough). */
  readonly edgeBytes: number;
}

/** USD per million requests, by service. */
export interface CostBreakdown {
  readonly apiGateway: number;
  readonly lambda: number;
  readonly dynamodb: number;
  readonly logs: number;
  readonly dataTransfer: number;
  readonly cloudFront: number;
  readonly total: number;
}

export const GB = 1e9;
export const MILLION = 1e6;

function invocationCost(inv: InvocationProfile, prices: Prices) {
  const gbSeconds = (inv.billedMs / 1000) * (LAMBDA_MEMORY_MB / 1024);
  return {
    lambda: prices.lambdaRequest.usd + gbSeconds * prices.lambdaArmGbSecond.usd,
    dynamodb: inv.readUnits * prices.dynamoReadRequestUnit.usd,
    logs: (inv.logBytes / GB) * prices.logsIngestionGb.usd,
  };
}

/**
 * USD per million requests of one route. Without `cloudFrontHitRatio` the
 * client talks to API Gateway. With it, every request is a CloudFront request
 * and CloudFront sends every answer; only misses reach API Gateway, Lambda
 * and DynamoDB (origin fetches from an AWS origin are not billed as transfer).
 */
export function costPerMillion(profile: RequestProfile, options: { cloudFrontHitRatio?: number } = {}, prices: Prices = PRICES): CostBreakdown {
  const { cloudFrontHitRatio } = options;
  if (cloudFrontHitRatio !== undefined && !(cloudFrontHitRatio >= 0 && cloudFrontHitRatio <= 1)) {
    throw new RangeError(`cloudFrontHitRatio must be within [0, 1], got ${cloudFrontHitRatio}`);
  }
  const edge = cloudFrontHitRatio !== undefined;
  const originShare = edge ? 1 - cloudFrontHitRatio : 1;

  const route = invocationCost(profile.route, prices);
  const auth = profile.authorizer ? invocationCost(profile.authorizer, prices) : { lambda: 0, dynamodb: 0, logs: 0 };
  const perOriginRequest = {
    apiGateway: prices.apiGatewayRestRequest.usd,
    lambda: route.lambda + auth.lambda,
    dynamodb: route.dynamodb + auth.dynamodb,
    logs: route.logs + auth.logs + (profile.accessLogBytes / GB) * prices.logsIngestionGb.usd,
  };
  const parts = {
    apiGateway: perOriginRequest.apiGateway * originShare * MILLION,
    lambda: perOriginRequest.lambda * originShare * MILLION,
    dynamodb: perOriginRequest.dynamodb * originShare * MILLION,
    logs: perOriginRequest.logs * originShare * MILLION,
    dataTransfer: edge ? 0 : (profile.originBytes / GB) * prices.internetTransferOutGb.usd * MILLION,
    cloudFront: edge ? (prices.cloudFrontHttpsRequest.usd + (profile.edgeBytes / GB) * prices.cloudFrontTransferOutGb.usd) * MILLION : 0,
  };
  const total = parts.apiGateway + parts.lambda + parts.dynamodb + parts.logs + parts.dataTransfer + parts.cloudFront;
  return { ...parts, total };
}

/**
 * The Lambda platform's own lines per invocation in the TEXT log format the
 * functions use (START, END, REPORT), with typical values: a sample of the
 * format, not a capture.
 */
export const PLATFORM_LOG_SAMPLE = [
  'START RequestId: 6f1c2a4e-3b5d-4c7e-9f80-1a2b3c4d5e6f Version: $LATEST\n',
  'END RequestId: 6f1c2a4e-3b5d-4c7e-9f80-1a2b3c4d5e6f\n',
  'REPORT RequestId: 6f1c2a4e-3b5d-4c7e-9f80-1a2b3c4d5e6f\tDuration: 11.52 ms\tBilled Duration: 12 ms\tMemory Size: 512 MB\tMax Memory Used: 98 MB\t\n',
].join('');

/**
 * One line of the REST APIs' access log (the fields lib/rest-apis.ts logs),
 * with typical values: a sample, not a capture. The Embed API's lines carry
 * no key id.
 */
export function accessLogSample(keyed: boolean): string {
  return `${JSON.stringify({
    requestId: '6f1c2a4e-3b5d-4c7e-9f80-1a2b3c4d5e6f',
    ip: '203.0.113.42',
    method: 'GET',
    resource: '/api/public/v1/users/{username}/upcoming-events',
    path: '/api/public/v1/users/eve-series/upcoming-events',
    status: '200',
    responseType: '-',
    latencyMs: '23',
    integrationLatencyMs: '21',
    keyId: keyed ? 'key_4f2a9c1b7d3e' : '-',
    userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  })}\n`;
}

/**
 * Response headers API Gateway (and, through it, CloudFront) adds to what the
 * handler sets: date, content-length, x-amzn-requestid, x-amz-apigw-id,
 * x-amzn-trace-id, and CloudFront's via, x-cache, x-amz-cf-pop, x-amz-cf-id.
 * An allowance, not a capture.
 */
export const GATEWAY_HEADER_BYTES = 400;

/** CloudFront compresses answers from 1,000 bytes up (smaller ones go as they are). */
export const CLOUDFRONT_MIN_COMPRESS_BYTES = 1000;

/** What CloudFront sends for a body: compressed (gzip here; Brotli is a little smaller) from the threshold up. */
export function edgeBodyBytes(rawBytes: number, compressedBytes: number): number {
  return rawBytes >= CLOUDFRONT_MIN_COMPRESS_BYTES ? Math.min(rawBytes, compressedBytes) : rawBytes;
}

/** `$12.34`-style; three decimals below ten cents, so that small components stay apart. */
export function usd(amount: number): string {
  return `$${Math.round(amount * 100) / 100 < 0.1 ? amount.toFixed(3) : amount.toFixed(2)}`;
}
