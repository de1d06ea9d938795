/**
 * `npm run smoke -- --public-url URL --embed-url URL --key KEY
 *                   [--username NAME] [--event-id ID] [--service-name NAME]
 *                   [--quota-key KEY [--quota-pace-ms MS]]
 *                   [--widget-url URL --widget-integrity HASH]`
 *
 * Exercises every route of a deployment (or the local server) and reports
 * pass/fail per check; exits 1 if any failed. With --username and --event-id
 * (data known to exist) routes must answer 200; without them, ids that cannot
 * exist are used and routes must answer their 404 envelope, which still proves
 * routing, the authorizer, the Lambda and the table are wired. The key is
 * never printed.
 *
 * In AWS, --public-url is the `PublicApiUrl` output and --embed-url the
 * `EmbedApiUrl` output: the CloudFront address widgets use (the execute-api
 * URL when deployed with embedCdn=false). `EmbedOriginUrl`, the Embed API's
 * own execute-api URL behind the distribution, checks the origin directly.
 *
 * With --quota-key (a key whose day may be used up: make one for it), it also
 * spends that key's daily quota until API Gateway answers the quota's 429, and
 * reports which rate-limit headers that 429 carries: which ones a deployment
 * sends depends on `-c quotaHeaders` (lib/gateway-responses.ts). Requests are
 * paced (--quota-pace-ms, default 350: under the per-key throttle and the
 * production web ACL's 1000 per address per 5 minutes), so it takes about
 * six minutes in AWS; a per-second throttle's 429 on the way is waited out.
 *
 * With --widget-url and --widget-integrity (the `WidgetUrl` and
 * `WidgetIntegrity` outputs, where the stage has the Embed distribution), it
 * fetches the widget as a host page's tag does (CORS mode) and checks what a
 * browser and the edge rely on: 200, JavaScript, `immutable`, CORS, nosniff,
 * a SHA-384 equal to the integrity, and the API at the script's origin (the
 * widget's default) is the --embed-url one and answers.
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { DAILY_QUOTA, RATE_LIMIT_HEADERS } from '../lambdas/core/rate-limit.js';
import { OPENAPI_HANDLER, routes, type RouteDefinition } from '../lambdas/routes.js';

export interface SmokeOptions {
  publicUrl: string;
  embedUrl: string;
  key: string;
  username?: string;
  eventId?: string;
  serviceName?: string;
  /** A key whose daily quota the run may use up, to see the quota's 429. */
  quotaKey?: string;
  /** Pause between the quota run's requests (default 350 ms). */
  quotaPaceMs?: number;
  /** The widget's release (WidgetUrl) and its integrity (WidgetIntegrity): checked together. */
  widgetUrl?: string;
  widgetIntegrity?: string;
}

export interface SmokeResult {
  name: string;
  ok: boolean;
  detail: string;
  /** The quota check: each rate-limit header of the 429, null where it was not sent. */
  headers?: Record<string, string | null>;
}

/** The headers a 429 of the daily quota may carry (PRODUCT P4), in the order reported. */
export const QUOTA_429_HEADERS = [RATE_LIMIT_HEADERS.limit, RATE_LIMIT_HEADERS.remaining, RATE_LIMIT_HEADERS.reset, 'Retry-After'] as const;
/** API Gateway's quotas are not exact to the request; past this many beyond the quota the run gives up. */
const QUOTA_SLACK = 100;

const MISSING_USER = 'smoke-check-no-such-user';
const MISSING_EVENT = 'evt_smoke_check_no_such_event';

async function request(url: string, init: RequestInit = {}) {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  let body: { success?: boolean; message?: string; openapi?: string } | undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

function pathFor(route: RouteDefinition, user: string, event: string): string {
  // Discovery needs a place: every place answers 200, events there or not (PRODUCT P17).
  const query = 'takesPlace' in route && route.takesPlace ? `?country=US${route.path.endsWith('.ics') ? '' : '&limit=1'}` : '';
  return `${route.path.replace('{username}', encodeURIComponent(user)).replace('{eventId}', encodeURIComponent(event))}${query}`;
}

export async function runSmoke(o: SmokeOptions): Promise<SmokeResult[]> {
  const results: SmokeResult[] = [];
  const check = async (name: string, fn: () => Promise<string>) => {
    try {
      results.push({ name, ok: true, detail: await fn() });
    } catch (error) {
      results.push({ name, ok: false, detail: (error as Error).message });
    }
  };
  const expect = (cond: boolean, message: string) => {
    if (!cond) throw new Error(message);
  };
  const keyHeader = { [`x-${o.serviceName ?? 'events'}-api-key`]: o.key };
  const user = o.username ?? MISSING_USER;
  const event = o.eventId ?? MISSING_EVENT;
  const known = o.username !== undefined && o.eventId !== undefined;

  for (const route of routes) {
    const base = route.surface === 'public' ? o.publicUrl : o.embedUrl;
    const url = `${base.replace(/\/+$/, '')}${pathFor(route, user, event)}`;
    await check(`${route.method} ${route.surface} ${route.path}`, async () => {
      const res = await request(url, { headers: route.surface === 'public' ? keyHeader : { origin: 'https://smoke.example' } });
      // The iCalendar feeds answer text/calendar; their errors are envelopes like everyone's (PRODUCT P15).
      const calendar = route.path.endsWith('.ics') && res.status === 200;
      const type = res.headers.get('content-type') ?? '';
      expect(calendar ? type === 'text/calendar; charset=utf-8' && res.text.startsWith('BEGIN:VCALENDAR\r\n') : type.startsWith('application/json'), `content-type ${type}`);
      // The OpenAPI documents are there whatever the data (PRODUCT P15); Variant B
      // answers an unknown user with 400, everything else with 404.
      // A route without path parameters (the catalogue's changes feed, PRODUCT P16) answers 200 whatever the data.
      const fine =
        route.handler === OPENAPI_HANDLER
          ? res.status === 200 && res.body?.openapi === '3.1.0'
          : known || !route.path.includes('{')
            ? res.status === 200 && (calendar || res.body?.success === true)
            : [400, 404].includes(res.status) && res.body?.success === false;
      expect(fine, `status ${res.status}: ${res.text.slice(0, 160)}`);
      if (route.surface === 'embed') expect(res.headers.get('access-control-allow-origin') === '*', 'no Access-Control-Allow-Origin: *');
      else {
        expect(res.headers.get('access-control-allow-origin') === null, 'Public API sent CORS headers');
        // Every answer of a Public route says the daily quota and when it resets (issue 19).
        expect(res.headers.get(RATE_LIMIT_HEADERS.limit) === String(DAILY_QUOTA), `${RATE_LIMIT_HEADERS.limit} ${res.headers.get(RATE_LIMIT_HEADERS.limit)}`);
        expect(/^\d+$/.test(res.headers.get(RATE_LIMIT_HEADERS.reset) ?? ''), `${RATE_LIMIT_HEADERS.reset} ${res.headers.get(RATE_LIMIT_HEADERS.reset)}`);
      }
      return `${res.status}`;
    });
  }

  const publicBase = o.publicUrl.replace(/\/+$/, '');
  const embedBase = o.embedUrl.replace(/\/+$/, '');
  await check('Public API without a key answers 401', async () => {
    const res = await request(`${publicBase}/events/${event}`);
    expect(res.status === 401 && res.body?.message === 'Not authenticated.', `status ${res.status}`);
    expect(res.headers.get(RATE_LIMIT_HEADERS.limit) === String(DAILY_QUOTA), `${RATE_LIMIT_HEADERS.limit} ${res.headers.get(RATE_LIMIT_HEADERS.limit)}`);
    return '401';
  });
  await check('Public API unknown route answers the 404 envelope', async () => {
    const res = await request(`${publicBase}/smoke-check-no-such-route`, { headers: keyHeader });
    expect(res.status === 404 && res.body?.message === 'Resource not found.', `status ${res.status}: ${res.text.slice(0, 120)}`);
    return '404';
  });
  await check('The old prefix /api/ext/v1 answers 308 to /api/public/v1', async () => {
    // publicUrl ends in /api/public/v1 (after the stage on an execute-api URL).
    const legacy = `${publicBase.replace(/\/api\/public\/v1$/, '/api/ext/v1')}/events/${event}?smoke=1`;
    const res = await request(legacy, { redirect: 'manual' });
    const location = res.headers.get('location') ?? '';
    expect(res.status === 308 && location.endsWith(`/api/public/v1/events/${event}?smoke=1`), `status ${res.status}, location ${location}`);
    return '308';
  });
  await check('Embed API preflight answers 204 with CORS', async () => {
    const res = await request(`${embedBase}/users/${user}/events`, {
      method: 'OPTIONS',
      headers: { origin: 'https://smoke.example', 'access-control-request-method': 'GET' },
    });
    expect(res.status === 204, `status ${res.status}`);
    expect(res.headers.get('access-control-allow-origin') === '*', 'no Access-Control-Allow-Origin: *');
    expect((res.headers.get('access-control-allow-methods') ?? '').replace(/\s/g, '').toUpperCase().includes('GET,OPTIONS'), `methods ${res.headers.get('access-control-allow-methods')}`);
    return '204';
  });
  if (known) {
    await check('Embed API revalidates with ETag (304)', async () => {
      const first = await request(`${embedBase}/events/${event}`);
      const etag = first.headers.get('etag');
      expect(etag !== null, 'no ETag');
      const second = await request(`${embedBase}/events/${event}`, { headers: { 'if-none-match': etag! } });
      expect(second.status === 304 && second.text === '', `status ${second.status}`);
      return '304';
    });
  }
  if (o.widgetUrl !== undefined) {
    const widgetUrl = o.widgetUrl;
    await check("The widget's release: immutable, CORS, its integrity, and the Embed API at its origin", async () => {
      const res = await fetch(widgetUrl, { headers: { origin: 'https://smoke.example' }, signal: AbortSignal.timeout(15_000) });
      const body = Buffer.from(await res.arrayBuffer());
      const header = (name: string) => res.headers.get(name) ?? '';
      expect(res.status === 200, `status ${res.status}`);
      expect(/^(text|application)\/javascript\b/.test(header('content-type')), `content-type ${header('content-type')}`);
      expect(/\bimmutable\b/.test(header('cache-control')) && /max-age=31536000\b/.test(header('cache-control')), `cache-control ${header('cache-control')}`);
      expect(header('access-control-allow-origin') === '*', 'no Access-Control-Allow-Origin: * (a crossorigin tag would refuse it)');
      expect(header('x-content-type-options') === 'nosniff', 'no X-Content-Type-Options: nosniff');
      const integrity = `sha384-${createHash('sha384').update(body).digest('base64')}`;
      expect(integrity === o.widgetIntegrity, `integrity ${integrity}, not ${o.widgetIntegrity}`);
      // The widget's default API address: its script's origin + /api/embed/v1.
      const api = `${new URL(widgetUrl).origin}/api/embed/v1`;
      expect(api === embedBase, `the widget would call ${api}, not ${embedBase}`);
      const doc = await request(`${api}/openapi.json`);
      expect(doc.status === 200, `${api}/openapi.json: status ${doc.status}`);
      return `${body.length} bytes`;
    });
  }
  if (o.quotaKey !== undefined) results.push(await quotaCheck(`${publicBase}/events/${event}`, { [`x-${o.serviceName ?? 'events'}-api-key`]: o.quotaKey }, o.quotaPaceMs ?? 350));
  return results;
}

/**
 * Spends a key's day until the quota's 429 and reports its rate-limit headers.
 * Told apart from the other 429s by X-RateLimit-Remaining, which only the
 * quota's carries (0): a throttle's says Retry-After: 1 and is waited out; a
 * 429 with neither is the web ACL's block, which this run must not provoke.
 */
export async function quotaCheck(url: string, headers: Record<string, string>, paceMs: number): Promise<SmokeResult> {
  const name = "Daily quota's 429: the rate-limit headers it carries";
  for (let sent = 1; sent <= DAILY_QUOTA + QUOTA_SLACK; sent++) {
    const res = await request(url, { headers });
    if (res.status === 429) {
      const report = Object.fromEntries(QUOTA_429_HEADERS.map((h) => [h, res.headers.get(h)]));
      if (report[RATE_LIMIT_HEADERS.remaining] === null) {
        if (report['Retry-After'] === '1') {
          await sleep(1000);
          continue;
        }
        return { name, ok: false, detail: `request ${sent}: a 429 without X-RateLimit-Remaining or a throttle's Retry-After (the web ACL's block?): slow down with --quota-pace-ms`, headers: report };
      }
      const sentList = QUOTA_429_HEADERS.filter((h) => report[h] !== null).map((h) => `${h}: ${report[h]}`);
      const missing = QUOTA_429_HEADERS.filter((h) => report[h] === null);
      const envelope = res.body?.success === false && res.body.message === 'Too many requests. Please try again later.';
      const limit = report[RATE_LIMIT_HEADERS.limit] === String(DAILY_QUOTA) && report[RATE_LIMIT_HEADERS.remaining] === '0';
      const detail = `429 after ${sent} requests; sent ${sentList.join(', ')}; not sent: ${missing.join(', ') || 'none'}`;
      return { name, ok: envelope && limit, detail: envelope && limit ? detail : `${detail} (expected the envelope, ${RATE_LIMIT_HEADERS.limit}: ${DAILY_QUOTA} and ${RATE_LIMIT_HEADERS.remaining}: 0)`, headers: report };
    }
    if (res.status >= 500 || res.status === 401 || res.status === 403) return { name, ok: false, detail: `request ${sent}: status ${res.status} before any 429` };
    if (paceMs > 0) await sleep(paceMs);
  }
  return { name, ok: false, detail: `no 429 after ${DAILY_QUOTA + QUOTA_SLACK} requests` };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'public-url': { type: 'string' },
      'embed-url': { type: 'string' },
      key: { type: 'string' },
      username: { type: 'string' },
      'event-id': { type: 'string' },
      'service-name': { type: 'string' },
      'quota-key': { type: 'string' },
      'quota-pace-ms': { type: 'string' },
      'widget-url': { type: 'string' },
      'widget-integrity': { type: 'string' },
    },
    strict: true,
  });
  if (!values['public-url'] || !values['embed-url'] || !values.key || (values['widget-url'] === undefined) !== (values['widget-integrity'] === undefined)) {
    process.stderr.write(
      'Usage: npm run smoke -- --public-url URL --embed-url URL --key KEY [--username NAME] [--event-id ID] [--service-name NAME] [--quota-key KEY [--quota-pace-ms MS]] [--widget-url URL --widget-integrity HASH]\n',
    );
    process.exit(2);
  }
  const results = await runSmoke({
    publicUrl: values['public-url'],
    embedUrl: values['embed-url'],
    key: values.key,
    username: values.username,
    eventId: values['event-id'],
    serviceName: values['service-name'],
    quotaKey: values['quota-key'],
    quotaPaceMs: values['quota-pace-ms'] === undefined ? undefined : Number(values['quota-pace-ms']),
    widgetUrl: values['widget-url'],
    widgetIntegrity: values['widget-integrity'],
  });
  for (const r of results) process.stdout.write(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name}  (${r.detail})\n`);
  const failed = results.filter((r) => !r.ok).length;
  process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
  process.exit(failed ? 1 : 0);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`smoke: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
