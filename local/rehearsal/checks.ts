/**
 * What `npm run rehearse` and the rehearsal tests run on each stage: the
 * stages' contexts and one documented request per route.
 */
import { SURFACES, routes } from '../../lambdas/routes.js';
import { encodeCursor, feedScopes } from '../../lambdas/core/feed-cursor.js';

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
/** Alice's user id in the demo data (a host feed's cursor names the user, not the name). */
const SAMPLE_USER_ID = 'usr_alice';

export function rehearsalRequests(key: string): { route: string; path: string; headers: Record<string, string> }[] {
  const requests = routes.map((r) => ({
    route: r.id,
    path: `${SURFACES[r.surface]}${r.path.replace(/\{(\w+)\}/g, (_m, p: string) => SAMPLE[p] ?? p)}`,
    headers: r.auth === 'key' ? { 'x-events-api-key': key } : ({} as Record<string, string>),
  }));
  // The profile list through the typed variant's `type=profile` (BatchGetItem, like profile-events).
  const typed = requests.find((r) => r.route === 'getUserEvents')!;
  // A host's changes feed from no cursor answers with only its cursor (two round trips: the name, then the head);
  // its pages follow with a cursor (BatchGetItem of the members): one from the start of Alice's feed.
  const host = requests.find((r) => r.route === 'getUserEventChanges')!;
  const cursor = encodeCursor({ scope: feedScopes.host(SAMPLE_USER_ID), position: 0, start: 0, issued: Math.floor(Date.now() / 1000) });
  return [...requests, { ...typed, route: 'getUserEvents?type=profile', path: `${typed.path}?type=profile` }, { ...host, route: 'getUserEventChanges?cursor', path: `${host.path}?cursor=${cursor}` }];
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
