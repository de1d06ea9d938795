/**
 * What `npm run rehearse` and the rehearsal tests run on each stage: the
 * stages' contexts and one documented request per route.
 */
import { SURFACES, routes } from '../../lambdas/routes.js';
import { encodeCursor, feedScopes, everyShardAt, signToken } from '../../lambdas/core/feed-cursor.js';
import { placeName } from '../../lambdas/core/place.js';
import { SEARCH_CURSOR_VERSION } from '../../lambdas/core/search-cursor.js';

/** The web product's role in the rehearsal's account: the one caller the key-management API's resource policy lets in. */
export const REHEARSAL_WEB_PRODUCT_ROLE = 'arn:aws:iam::123456789012:role/web-product';

/**
 * Staging as cdk.json sets it, and production with its custom domain and web
 * ACL (context keys of bin/app.ts); both name the web product's role as the
 * key-management API's caller, as a deploy does (docs/deploy.md).
 */
export const REHEARSAL_STAGES: Record<string, Record<string, string>> = {
  staging: { stage: 'staging', keyAdminCallers: REHEARSAL_WEB_PRODUCT_ROLE },
  production: {
    stage: 'production',
    keyAdminCallers: REHEARSAL_WEB_PRODUCT_ROLE,
    domainName: 'api.events.example.com',
    certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000',
    embedWebAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/embed/00000000-0000-0000-0000-000000000000',
  },
};

/** Path parameters of the demo data (data/demo.json) that every route answers 200 for. */
const SAMPLE: Record<string, string> = { eventId: 'evt_jazz01', username: 'Alice' };
/** The query a route needs to answer 200 (a place's feed and a place's calendar name a place; the demo data has events in Amsterdam; discovery's requests are below). */
const AMSTERDAM = 'city=Amsterdam&country=NL';
const SAMPLE_QUERY: Record<string, string> = { getPlaceEventChanges: AMSTERDAM, embedGetPlaceFeed: AMSTERDAM };
/** A window of the demo data's weekly series in Amsterdam (data/demo.json). */
const SEARCH_WINDOW = { from: '2026-08-01', to: '2026-10-31' };
/** Alice's user id in the demo data (a host feed's cursor names the user, not the name). */
const SAMPLE_USER_ID = 'usr_alice';

/**
 * One request per route, and a page with a cursor of each changes feed in both of its modes (a start's
 * members, then entries): from no cursor a feed answers only its cursor (its position), its members and
 * entries follow with one (BatchGetItem of the members). `cursorKey`: the rehearsal's cursor secret; `now`: the
 * functions' clock (a cursor dated after it is refused).
 */
export function rehearsalRequests(key: string, cursorKey: Uint8Array, now: Date = new Date()): { route: string; path: string; headers: Record<string, string> }[] {
  const requests = routes.map((r) => ({
    route: r.id,
    path: `${SURFACES[r.surface]}${r.path.replace(/\{(\w+)\}/g, (_m, p: string) => SAMPLE[p] ?? p)}${SAMPLE_QUERY[r.id] ? `?${SAMPLE_QUERY[r.id]}` : ''}`,
    headers: r.auth === 'key' ? { 'x-events-api-key': key } : ({} as Record<string, string>),
  }));
  // The profile list through the typed variant's `type=profile` (BatchGetItem, like profile-events).
  const typed = requests.find((r) => r.route === 'getUserEvents')!;
  const asOf = Math.floor(now.getTime() / 1000);
  const feeds = [
    ['getEventChanges', feedScopes.catalogue()],
    ['getUserEventChanges', feedScopes.host(SAMPLE_USER_ID)],
    ['getEventGuestChanges', feedScopes.guests(SAMPLE.eventId!)],
    ['getPlaceEventChanges', feedScopes.place(placeName({ country: 'NL', city: 'amsterdam' }))],
  ] as const;
  const pages = feeds.flatMap(([route, scope]) => {
    const base = requests.find((r) => r.route === route)!;
    return (['members', 'entries'] as const).map((mode) => {
      const cursor = encodeCursor({ scope, mode, position: everyShardAt(mode === 'members' ? 1 : 0), after: '', asOf }, cursorKey);
      return { ...base, route: `${route}?cursor (${mode})`, path: `${base.path}${base.path.includes('?') ? '&' : '?'}cursor=${cursor}` };
    });
  });
  // Discovery answers 400 without a place: each surface's search reads a page of a city (its shards' Queries, then BatchGetItem), and one after a cursor.
  const searches = (['searchEvents', 'embedSearchEvents'] as const).flatMap((route) => {
    const base = requests.find((r) => r.route === route)!;
    const query = `city=Amsterdam&from=${SEARCH_WINDOW.from}&to=${SEARCH_WINDOW.to}&limit=2`;
    const cursor = signToken(SEARCH_CURSOR_VERSION, [null, 'amsterdam', SEARCH_WINDOW.from, SEARCH_WINDOW.to, '2026-09-10T20:00:00#evt_series_02'], cursorKey);
    return [
      { ...base, path: `${base.path}?${query}` },
      { ...base, route: `${route}?cursor`, path: `${base.path}?${query}&cursor=${cursor}` },
    ];
  });
  return [...requests.filter((r) => !searches.some((s) => s.route === r.route)), ...searches, { ...typed, route: 'getUserEvents?type=profile', path: `${typed.path}?type=profile` }, ...pages];
}

/** The siteUrl jest's rehearsal suites serve: cdk.json's, so staging's assembly serves them too (one bundling less). */
export const REHEARSED_SITE_URLS = ['https://events.example.com'];

/**
 * A setting given to production only that breaks the Public API there: a
 * stage throttle of one request per second. test/rehearsal/stage-only.test.ts
 * shows the rehearsal of that template refusing what staging's serves.
 */
export const PRODUCTION_WITH_BAD_THROTTLE: Record<string, string> = { ...REHEARSAL_STAGES.production!, publicThrottleRate: '1', publicThrottleBurst: '1' };

/** Every context jest's "rehearsal" project serves: bundled once per run by its globalSetup (local/rehearsal/prepare.ts). */
export const JEST_REHEARSAL_CONTEXTS: Record<string, string>[] = [
  ...Object.values(REHEARSAL_STAGES),
  ...REHEARSED_SITE_URLS.map((siteUrl) => ({ ...REHEARSAL_STAGES.staging!, siteUrl })),
  PRODUCTION_WITH_BAD_THROTTLE,
];
