/**
 * The OpenAPI documents' and the docs' example bodies, taken from real
 * answers: the local server over the demo data (clock pinned, the stack's
 * default siteUrl), one request per example. `npm run openapi:examples`
 * writes them to lambdas/openapi/examples.generated.ts;
 * test/e2e/openapi-examples.test.ts fails when that file is out of date.
 */
import { fixedClock } from '../lambdas/core/clock.js';
import { MESSAGES } from '../lambdas/core/errors.js';
import { windowTooLarge } from '../lambdas/core/queries.js';
import { CURSOR_LIFETIME_SECONDS, encodeCursor, everyShardAt } from '../lambdas/core/feed-cursor.js';
import { errorBody } from '../lambdas/http/envelope.js';
import { SURFACES } from '../lambdas/routes.js';
import { startLocalServer } from './server.js';

const DEMO_FILE = new URL('../data/demo.json', import.meta.url).pathname;
export const EXAMPLE_CLOCK = '2026-11-21T12:00:00.000Z';
export const EXAMPLE_SITE_URL = 'https://events.example.com';
/** The examples' cursor key: fixed, so that the cursors in the examples are the same at every run (a deployment has its own secret). */
const EXAMPLE_CURSOR_KEY = Buffer.from('documentation-examples-cursor-key');
/** A catalogue cursor of a consumer last up to date a day past the feeds' 30 days before the example clock. */
const EXPIRED_CURSOR = encodeCursor({ scope: 'EVENTS', mode: 'entries', position: everyShardAt(0), after: '', asOf: Date.parse(EXAMPLE_CLOCK) / 1000 - CURSOR_LIFETIME_SECONDS - 86_400 }, EXAMPLE_CURSOR_KEY);
/** Demo keys from data/demo.json (test data, documented in docs/local-server.md). */
const BOTH = 'pk_demo_0123456789abcdefghijklmnopqrstuv';
const EVENTS_ONLY = 'pk_events_only_0123456789abcdefghijklmnop';

interface ExampleRequest {
  variant?: 'typed' | 'dated';
  surface: 'public' | 'embed';
  path: string;
  key?: string;
  /** Extra request headers (the header-size example). */
  headers?: Record<string, string>;
  status: number;
}

const REQUESTS: Record<string, ExampleRequest> = {
  getEvent: { surface: 'public', path: '/events/evt_jazz01', key: BOTH, status: 200 },
  getEventGuests: { surface: 'public', path: '/events/evt_jazz01/guests?status=all&limit=2', key: BOTH, status: 200 },
  getUserEventsTyped: { surface: 'public', path: '/users/alice/events?type=upcoming&limit=2', key: BOTH, status: 200 },
  getUserEventsDated: { variant: 'dated', surface: 'public', path: '/users/alice/events?since=2027-03-01&to=2027-04-30', key: BOTH, status: 200 },
  getUserProfileEvents: { surface: 'public', path: '/users/bob.builder/profile-events?since=2027-02-01&to=2027-02-28', key: BOTH, status: 200 },
  getUserUpcomingEvents: { surface: 'public', path: '/users/alice/upcoming-events?limit=2', key: BOTH, status: 200 },
  getUserPastEvents: { surface: 'public', path: '/users/alice/past-events?limit=2', key: BOTH, status: 200 },
  searchEvents: { surface: 'public', path: '/events?city=amsterdam&country=NL&from=2026-11-21&to=2026-12-31&limit=2', key: BOTH, status: 200 },
  searchValidationError: { surface: 'public', path: '/events?country=XX&from=2027-02-30&limit=0', key: BOTH, status: 400 },
  searchNoPlace: { surface: 'public', path: '/events?from=2027-01-01', key: BOTH, status: 400 },
  embedGetEvent: { surface: 'embed', path: '/events/evt_jazz01', status: 200 },
  embedSearchEvents: { surface: 'embed', path: '/events?city=Amsterdam&from=2026-11-21&limit=2', status: 200 },
  embedGetUserEvents: { surface: 'embed', path: '/users/alice/events?limit=2', status: 200 },
  embedGetUserFeed: { surface: 'embed', path: '/users/alice/events.ics', status: 200 },
  embedGetEventFeed: { surface: 'embed', path: '/events/evt_jazz01/event.ics', status: 200 },
  embedGetPlaceFeed: { surface: 'embed', path: '/events.ics?city=Amsterdam&country=NL', status: 200 },
  placeFeedNoPlace: { surface: 'embed', path: '/events.ics', status: 400 },
  // A place's feed from no cursor: the cursor of a start, no changes yet.
  getPlaceEventChanges: { surface: 'public', path: '/changes/places/events?city=amsterdam&country=Netherlands', key: BOTH, status: 200 },
  placeMissing: { surface: 'public', path: '/changes/places/events', key: BOTH, status: 400 },
  validationError: { surface: 'public', path: '/events/evt_jazz01/guests?status=going&limit=0', key: BOTH, status: 400 },
  invalidEventId: { surface: 'public', path: '/events/jazz01', key: BOTH, status: 400 },
  invalidUsername: { surface: 'embed', path: '/users/%40alice/events.ics', status: 400 },
  typedUserNotFound: { surface: 'public', path: '/users/nobody/events', key: BOTH, status: 400 },
  notFound: { surface: 'public', path: '/events/evt_secret03', key: BOTH, status: 404 },
  // A cursor issued 31 days before the demo's clock (lambdas/core/feed-cursor.ts).
  cursorExpired: { surface: 'public', path: `/changes/events?cursor=${EXPIRED_CURSOR}`, key: BOTH, status: 410 },
  userNotFound: { surface: 'public', path: '/users/nobody/upcoming-events', key: BOTH, status: 404 },
  notAuthenticated: { surface: 'public', path: '/events/evt_jazz01', status: 401 },
  insufficientScope: { surface: 'public', path: '/events/evt_jazz01/guests', key: EVENTS_ONLY, status: 403 },
  // API Gateway's size quotas: a URL over 10,240 characters, headers over 10,240 bytes.
  uriTooLong: { surface: 'public', path: `/events/evt_jazz01?pad=${'a'.repeat(10_240)}`, key: BOTH, status: 414 },
  headersTooLarge: { surface: 'public', path: '/events/evt_jazz01', key: BOTH, headers: { 'x-pad': 'p'.repeat(10_240) }, status: 431 },
};

export async function collectExamples(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const variant of ['typed', 'dated'] as const) {
    const server = await startLocalServer({ dataFile: DEMO_FILE, port: 0, clock: fixedClock(EXAMPLE_CLOCK), siteUrl: EXAMPLE_SITE_URL, userEventsVariant: variant, cursorKey: EXAMPLE_CURSOR_KEY });
    try {
      for (const [name, r] of Object.entries(REQUESTS)) {
        if ((r.variant ?? 'typed') !== variant) continue;
        const res = await fetch(`${server.url}${SURFACES[r.surface]}${r.path}`, { headers: { ...(r.key ? { 'x-events-api-key': r.key } : {}), ...r.headers } });
        if (res.status !== r.status) throw new Error(`example ${name}: expected ${r.status}, got ${res.status}`);
        // The iCalendar feeds' examples are their text (PRODUCT P15); everything else is JSON.
        out[name] = res.headers.get('content-type')?.startsWith('text/calendar') ? await res.text() : await res.json();
      }
    } finally {
      await server.close();
    }
  }
  // None can be provoked on demand; each is rendered by the code that answers it
  // (test/integration/batch-get-throttle.test.ts checks a real 503 equals serviceBusy).
  out.tooManyRequests = errorBody(MESSAGES.tooManyRequests);
  out.serviceBusy = errorBody(MESSAGES.serviceBusy);
  out.internalError = errorBody(MESSAGES.internal);
  // Needs a window of more than 500 events, which the demo data has not: rendered by the code that
  // answers it; test/integration/big-host.test.ts checks a real answer equals it.
  out.windowTooLarge = errorBody(windowTooLarge().message);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** The TypeScript module holding the examples. */
export function examplesModule(examples: Record<string, unknown>): string {
  return [
    '// Generated by `npm run openapi:examples` (local/openapi-examples.ts) from real answers over data/demo.json. Do not edit.',
    `export const EXAMPLES = ${JSON.stringify(examples, null, 2)} as const;`,
    '',
    'export type ExampleName = keyof typeof EXAMPLES;',
    '',
  ].join('\n');
}
