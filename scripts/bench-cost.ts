/**
 * The "Cost per million requests" table of `npm run bench`: the figures the
 * bench measured for each route in the same run (read units, round trips,
 * handler and raw DynamoDB time, response bytes) plus the log bytes measured
 * here, priced by scripts/cost-model.ts.
 */
import { PUBLIC_LIMIT_DEFAULTS } from '../lib/stack-config.js';
import { powertoolsEnvironment } from '../lib/observability.js';
import { MESSAGES } from '../lambdas/core/errors.js';
import { FLOOD, floodCostPerMillion, floodScenarios } from './flood-cost.js';
import { lambdaMetrics } from '../lambdas/http/powertools.js';
import { DIMENSIONS, METRICS } from '../lambdas/http/metrics.js';
import type { Surface } from '../lambdas/routes.js';
import {
  DURATION_ASSUMPTIONS,
  GATEWAY_HEADER_BYTES,
  LAMBDA_MEMORY_MB,
  PLATFORM_LOG_SAMPLE,
  PRICES,
  PRICES_AS_OF,
  PRICE_REGION,
  accessLogSample,
  billedDurationMs,
  costPerMillion,
  edgeBodyBytes,
  usd,
  type InvocationProfile,
} from './cost-model.js';

/** What the bench measured for one invocation of a function. */
export interface MeasuredInvocation {
  readUnits: number;
  roundTrips: number;
  /** Median handler time against the local store. */
  handlerMs: number;
  /** Median time of the same DynamoDB calls with a bare client (0 when it makes none). */
  dynamoMs: number;
}

export interface MeasuredRoute extends MeasuredInvocation {
  id: string;
  surface: Surface;
  keyed: boolean;
  /** Handler's body and headers, uncompressed. */
  bodyBytes: number;
  headerBytes: number;
  /** The body gzipped. */
  gzipBytes: number;
}

/** The stated hit ratio, and the others shown beside it. */
export const STATED_HIT_RATIO = 0.9;
export const HIT_RATIOS = [0, STATED_HIT_RATIO, 0.99];

const bytes = (s: string) => Buffer.byteLength(s);

/**
 * The EMF document Powertools Metrics writes for one HTTP request and for one
 * authorizer decision: measured by running the real sink (production's
 * namespace) and capturing what it writes to stdout.
 */
function emfBytes(): { request: number; authorizer: number } {
  for (const [name, value] of Object.entries(powertoolsEnvironment({ stage: 'production', logLevel: 'INFO', logSampleRate: 0.01 }))) {
    process.env[name] ??= value;
  }
  const captured: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
    return true;
  }) as typeof process.stdout.write;
  try {
    const metrics = lambdaMetrics();
    metrics.publish({ [DIMENSIONS.route]: 'embedGetUserEvents', [DIMENSIONS.statusClass]: '2xx' }, [
      { name: METRICS.requests, unit: 'Count', value: 1 },
      { name: METRICS.errors, unit: 'Count', value: 0 },
    ]);
    const request = bytes(captured.join(''));
    captured.length = 0;
    metrics.publish({ [DIMENSIONS.outcome]: 'allowed' }, [{ name: METRICS.authorizerDecisions, unit: 'Count', value: 1 }]);
    return { request, authorizer: bytes(captured.join('')) };
  } finally {
    process.stdout.write = write;
  }
}

export function costFigures(measured: MeasuredRoute[], authorizer: MeasuredInvocation): string[] {
  const emf = emfBytes();
  const platform = bytes(PLATFORM_LOG_SAMPLE);
  const invocation = (m: MeasuredInvocation, emfLine: number): InvocationProfile & { ms: number } => {
    const billedMs = billedDurationMs(m);
    return { readUnits: m.readUnits, billedMs, logBytes: platform + emfLine, ms: billedMs };
  };
  const auth = invocation(authorizer, emf.authorizer);

  const totals: { surface: Surface; document: boolean; direct: number; edge: number[] }[] = [];
  const rows = measured.map((m) => {
    const route = invocation(m, emf.request);
    const profile = {
      route,
      ...(m.keyed ? { authorizer: auth } : {}),
      accessLogBytes: bytes(accessLogSample(m.keyed)),
      originBytes: m.bodyBytes + m.headerBytes + GATEWAY_HEADER_BYTES,
      edgeBytes: edgeBodyBytes(m.bodyBytes, m.gzipBytes) + m.headerBytes + GATEWAY_HEADER_BYTES,
    };
    const direct = costPerMillion(profile);
    totals.push({
      surface: m.surface,
      document: m.readUnits === 0,
      direct: direct.total,
      edge: HIT_RATIOS.map((h) => costPerMillion(profile, { cloudFrontHitRatio: h }).total),
    });
    const logBytes = route.logBytes + profile.accessLogBytes + (m.keyed ? auth.logBytes : 0);
    const edge =
      m.surface === 'embed'
        ? HIT_RATIOS.map((h) => usd(costPerMillion(profile, { cloudFrontHitRatio: h }).total)).join(' | ')
        : HIT_RATIOS.map(() => 'n/a').join(' | ');
    const ms = m.keyed ? `${route.billedMs} + ${auth.billedMs}` : `${route.billedMs}`;
    const rru = m.readUnits + (m.keyed ? authorizer.readUnits : 0);
    return (
      `| ${m.id} | ${m.surface} | ${rru.toFixed(1)} | ${ms} | ${profile.originBytes} / ${profile.edgeBytes} | ${logBytes} | ` +
      `${usd(direct.apiGateway)} | ${usd(direct.lambda)} | ${usd(direct.dynamodb)} | ${usd(direct.logs)} | ${usd(direct.dataTransfer)} | ${usd(direct.total)} | ${edge} |`
    );
  });

  const pct = (h: number) => `${Math.round(h * 100)} %`;
  // Per surface, over the routes that read event data (the OpenAPI documents are fetched rarely and weigh more).
  const range = (xs: number[]) => `${usd(Math.min(...xs))}–${usd(Math.max(...xs))}`;
  const data = (surface: Surface) => totals.filter((t) => t.surface === surface && !t.document);
  const summary = [
    `| Public API (keyed data routes) | ${range(data('public').map((t) => t.direct))} | ${HIT_RATIOS.map(() => 'n/a').join(' | ')} |`,
    `| Embed API (data routes) | ${range(data('embed').map((t) => t.direct))} | ${HIT_RATIOS.map((_, i) => range(data('embed').map((t) => t.edge[i] ?? 0))).join(' | ')} |`,
  ];
  return [
    `USD per million requests, ${PRICE_REGION} list prices as of ${PRICES_AS_OF}, no free tier, first volume tier. Per request, from this run: read units`,
    `(the authorizer's strongly consistent GetItem included for keyed routes), bytes out (handler body + headers + ${GATEWAY_HEADER_BYTES} bytes allowed for`,
    `gateway headers; direct / through CloudFront, compressed from 1,000 bytes), log bytes (Lambda START/END/REPORT sample + measured EMF document,`,
    `${emf.request} bytes per request and ${emf.authorizer} per authorizer decision, + access-log line sample). Lambda: arm64, ${LAMBDA_MEMORY_MB} MB, billed ms per invocation`,
    `(route + authorizer) = own CPU time measured here (handler − raw DynamoDB) × ${DURATION_ASSUMPTIONS.cpuScale.toFixed(2)} + ${DURATION_ASSUMPTIONS.dynamoRoundTripMs} ms per round trip (assumed), rounded up.`,
    `CloudFront columns: Embed only, at ${HIT_RATIOS.map(pct).join(', ')} hits (${pct(STATED_HIT_RATIO)} stated); the Public API is not behind CloudFront (n/a).`,
    '',
    `| Route | Surface | RRU | Lambda ms | Bytes out direct / edge | Log bytes | API Gateway | Lambda | DynamoDB | Logs | Transfer | Direct total | ${HIT_RATIOS.map((h) => `CloudFront ${pct(h)}`).join(' | ')} |`,
    `|---|---|---|---|---|---|---|---|---|---|---|---|${HIT_RATIOS.map(() => '---|').join('')}`,
    ...rows,
    '',
    `| Surface, USD per million requests | Direct | ${HIT_RATIOS.map((h) => `CloudFront ${pct(h)} hits`).join(' | ')} |`,
    `|---|---|${HIT_RATIOS.map(() => '---|').join('')}`,
    ...summary,
    '',
    'Unit prices: ' +
      Object.values(PRICES)
        .map((p) => (p.unit === 'GB' || p.unit === 'GB-second' ? `${p.source} $${p.usd} per ${p.unit}` : `${p.source} $${+(p.usd * 1e6).toPrecision(6)} per million ${p.unit}s`))
        .join('; ') +
      '.',
    '',
    ...floodTable(authorizer, emf.authorizer + platform),
  ];
}

/**
 * A flood of Public API requests without a valid key (scripts/flood-cost.ts):
 * keyless ones cost the authorizer no read; made-up keys one strongly
 * consistent GetItem (the measured authorizer profile).
 */
function floodTable(authorizer: MeasuredInvocation, authorizerLogBytes: number): string[] {
  const refusal = `{"success":false,"message":"${MESSAGES.notAuthenticated}"}`;
  const answerBytes = bytes(refusal) + bytes('content-type: application/json\r\nX-RateLimit-Limit: 1000\r\n') + GATEWAY_HEADER_BYTES;
  const keyless = { readUnits: 0, billedMs: billedDurationMs({ ...authorizer, roundTrips: 0 }), logBytes: authorizerLogBytes };
  const madeUp = { readUnits: authorizer.readUnits, billedMs: billedDurationMs(authorizer), logBytes: authorizerLogBytes };
  const accessLogBytes = bytes(accessLogSample(false));
  const limits = { throttle: { rateLimit: PUBLIC_LIMIT_DEFAULTS.throttleRate, burstLimit: PUBLIC_LIMIT_DEFAULTS.throttleBurst }, wafLimit: PUBLIC_LIMIT_DEFAULTS.wafRateLimit };
  const pct = (x: number) => `${+(x * 100).toPrecision(3)} %`;
  const rows = floodScenarios(limits).map(({ name, admitted }) => {
    const cost = (inv: typeof keyless) => floodCostPerMillion({ authorizer: inv, accessLogBytes, answerBytes }, admitted);
    const k = cost(keyless);
    return (
      `| ${name} | ${pct(admitted.gateway)} | ${pct(admitted.authorizer)} | ${usd(k.apiGateway)} | ${usd(k.lambda)} | ${usd(k.logs)} | ${usd(k.dataTransfer)} | ${usd(k.waf)} | ` +
      `${usd(k.total)} | ${usd(cost(madeUp).total)} |`
    );
  });
  return [
    `A flood of ${FLOOD.requests.toLocaleString('en-US')} Public API requests without a valid key in ${FLOOD.seconds / 60} minutes, USD (same prices). Limits at their defaults:`,
    `stage throttle ${limits.throttle.rateLimit}/s (burst ${limits.throttle.burstLimit}), web ACL ${limits.wafLimit} per address per 5 minutes. Authorizer: ${keyless.billedMs} ms keyless, ${madeUp.billedMs} ms`,
    `and ${madeUp.readUnits} RRU with a made-up key. API Gateway assumed to bill every request it receives (an upper bound). Fixed web ACL fees not included.`,
    '',
    '| Flood | Reaches API Gateway | Reaches the authorizer | API Gateway | Lambda | Logs | Transfer | WAF | Total, keyless | Total, made-up keys |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
}
