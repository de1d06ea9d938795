/**
 * `npm run smoke -- --public-url URL --embed-url URL --key KEY
 *                   [--username NAME] [--event-id ID] [--service-name NAME]`
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
 */
import { parseArgs } from 'node:util';
import { OPENAPI_HANDLER, routes, type RouteDefinition } from '../lambdas/routes.js';

export interface SmokeOptions {
  publicUrl: string;
  embedUrl: string;
  key: string;
  username?: string;
  eventId?: string;
  serviceName?: string;
}

export interface SmokeResult {
  name: string;
  ok: boolean;
  detail: string;
}

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
  return route.path.replace('{username}', encodeURIComponent(user)).replace('{eventId}', encodeURIComponent(event));
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
      const fine =
        route.handler === OPENAPI_HANDLER
          ? res.status === 200 && res.body?.openapi === '3.1.0'
          : known
            ? res.status === 200 && (calendar || res.body?.success === true)
            : [400, 404].includes(res.status) && res.body?.success === false;
      expect(fine, `status ${res.status}: ${res.text.slice(0, 160)}`);
      if (route.surface === 'embed') expect(res.headers.get('access-control-allow-origin') === '*', 'no Access-Control-Allow-Origin: *');
      else expect(res.headers.get('access-control-allow-origin') === null, 'Public API sent CORS headers');
      return `${res.status}`;
    });
  }

  const publicBase = o.publicUrl.replace(/\/+$/, '');
  const embedBase = o.embedUrl.replace(/\/+$/, '');
  await check('Public API without a key answers 401', async () => {
    const res = await request(`${publicBase}/events/${event}`);
    expect(res.status === 401 && res.body?.message === 'Not authenticated.', `status ${res.status}`);
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
  return results;
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
    },
    strict: true,
  });
  if (!values['public-url'] || !values['embed-url'] || !values.key) {
    process.stderr.write('Usage: npm run smoke -- --public-url URL --embed-url URL --key KEY [--username NAME] [--event-id ID] [--service-name NAME]\n');
    process.exit(2);
  }
  const results = await runSmoke({
    publicUrl: values['public-url'],
    embedUrl: values['embed-url'],
    key: values.key,
    username: values.username,
    eventId: values['event-id'],
    serviceName: values['service-name'],
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
