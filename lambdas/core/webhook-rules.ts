/**
 * Webhooks (PRODUCT P18): a key's feeds pushed to its owner's endpoint. The
 * pure rules: what a webhook follows (one feed scope of P16/P17), the bounds
 * of a create, the retry schedule, when a failing webhook is disabled, how a
 * webhook's state is shown. The items are the store's
 * (lambdas/store/webhooks/), the sends the delivery function's
 * (lambdas/delivery/).
 */
import * as z from 'zod';
import { EVENT_ID_PATTERN, USER_ID_PATTERN } from './ids.js';
import { feedScopes } from './feed-cursor.js';
import { cityKey, countryKey, placeName, PLACE_QUERY_MAX_LENGTH, type PlaceKey } from './place.js';
import type { Scope } from './dataset.js';

/** At most this many webhooks per key (PRODUCT P18). */
export const MAX_WEBHOOKS_PER_KEY = 5;
/** The longest URL a webhook may have (P18). */
export const WEBHOOK_URL_MAX_LENGTH = 2048;
/** Changes in one delivery: a feed page's limit. */
export const DELIVERY_MAX_CHANGES = 100;
/** A receiver that has not answered within this long has failed the attempt (P18: 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * How long an attempt holds its delivery (the attempt's write, delivery-state.ts): the send's deadline and a margin
 * for the clocks of two containers. No other run of the webhook starts a send until the attempt is answered or
 * this has passed, so one webhook's sends never overlap even when its wake-up runs twice at once (a queue's
 * visibility timeout passing while the first run still goes on).
 */
export const DELIVERY_LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;
/**
 * A webhook whose scope is not shown now (a guest list whose event is hidden or deleted, a host no longer there)
 * looks again after this long: nothing is sent meanwhile, and the write that shows the scope again is another
 * scope's (the event's own, in the catalogue), so no change of its own feed need wake it. What changed while it
 * was hidden then arrives within this long of its showing again.
 */
export const HIDDEN_RECHECK_SECONDS = 300;
/** A webhook without a 2xx for this long is disabled (P18: 3 days). */
export const FAILING_DISABLE_SECONDS = 3 * 86_400;
/** After a rotation, deliveries carry the previous secret's signature too for this long (P18: 24 hours). */
export const SECRET_OVERLAP_SECONDS = 86_400;
/** The first retry's wait, doubling up to RETRY_CAP_SECONDS (drawn between half and all of it). */
export const RETRY_FIRST_SECONDS = 5;
export const RETRY_CAP_SECONDS = 3600;
/** A create's idempotency key: the key-management API's rule. */
export const WEBHOOK_IDEMPOTENCY_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;
/** `wh_` and 20 base62 characters: the first 8 its creation time (ids sort by creation), or a hash of the create's idempotency key. */
export const WEBHOOK_ID_PATTERN = /^wh_[0-9A-Za-z]{20}$/;

/**
 * Seconds until the next attempt after the `attempt`-th failed one (1 for the
 * first): 5 s doubling to an hour, drawn between half and all of it ("equal
 * jitter", so webhooks that failed together do not come back together);
 * `random` in [0, 1). About 96 attempts in the 3 days before the disable.
 */
export function retryDelaySeconds(attempt: number, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(attempt));
  const full = n > 20 ? RETRY_CAP_SECONDS : Math.min(RETRY_CAP_SECONDS, RETRY_FIRST_SECONDS * 2 ** (n - 1));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.max(1, Math.ceil(full / 2 + (full / 2) * r));
}

/** What a webhook follows, as the management API takes and shows it. */
export type WebhookScope =
  | { type: 'catalogue' }
  | { type: 'host'; userId: string }
  | { type: 'place'; city?: string; country?: string }
  | { type: 'guests'; eventId: string };

/**
 * A place part as the search and feed routes take it (search-params.ts): at most PLACE_QUERY_MAX_LENGTH characters as
 * sent, and something left once folded (a value of spaces, punctuation or marks names no place). Every place a pull
 * consumer can follow, a webhook can, and nothing else.
 */
const placePart = (field: 'city' | 'country', key: (raw: string) => string | undefined) =>
  z
    .string({ error: `scope.${field} must be a string` })
    .max(PLACE_QUERY_MAX_LENGTH, { error: `scope.${field} is at most ${PLACE_QUERY_MAX_LENGTH} characters` })
    .trim()
    .refine((v) => key(v) !== undefined, { error: `scope.${field} must not be empty` });

/** The scope of a create: a feed of P16/P17, named by ids (a host by user id, never by username). */
export const webhookScopeSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('catalogue') }),
    z.strictObject({ type: z.literal('host'), userId: z.string({ error: 'scope.userId is required (the host\'s user id, usr_…)' }).regex(USER_ID_PATTERN, { error: 'scope.userId must be a user id (usr_…)' }) }),
    z
      .strictObject({ type: z.literal('place'), city: placePart('city', cityKey).optional(), country: placePart('country', countryKey).optional() })
      .refine((p) => p.city !== undefined || p.country !== undefined, { error: 'A place scope needs a city, a country or both', path: ['city'] }),
    z.strictObject({ type: z.literal('guests'), eventId: z.string({ error: 'scope.eventId is required (evt_…)' }).regex(EVENT_ID_PATTERN, { error: 'scope.eventId must be an event id (evt_…)' }) }),
  ],
  { error: 'scope.type must be one of catalogue, host, place, guests' },
);

/** `POST /users/{userId}/keys/{keyId}/webhooks`: where, what, and from where. */
export const createWebhookBody = z
  .strictObject({
    url: z.string({ error: 'url is required (https://…)' }).min(1, { error: 'url is required (https://…)' }),
    scope: webhookScopeSchema,
    /** A P16 cursor of the scope the consumer holds: deliveries start after it. */
    start_cursor: z.string({ error: 'start_cursor must be a cursor of the scope\'s feed' }).min(1).max(400, { error: 'start_cursor must be a cursor of the scope\'s feed' }).optional(),
    /** The scope's present contents first, then its changes. */
    backfill: z.boolean({ error: 'backfill must be true or false' }).optional(),
    /** Optional: a retry with the same key answers the webhook it made (without its secret). */
    idempotencyKey: z.string().regex(WEBHOOK_IDEMPOTENCY_PATTERN, { error: 'idempotencyKey must be 8-128 characters of letters, digits, ".", "_", ":" or "-" (a UUID works)' }).optional(),
  })
  .refine((b) => !(b.start_cursor !== undefined && b.backfill === true), { error: 'Give start_cursor or backfill, not both', path: ['backfill'] });

export type CreateWebhookBody = z.input<typeof createWebhookBody>;
export type CreateWebhookInput = z.output<typeof createWebhookBody>;

/** A scope with its place parts as a consumer wrote them, and the feed it reads. */
export interface ResolvedScope {
  scope: WebhookScope;
  /** The feed scope (lambdas/core/feed-cursor.ts, feedScopes). */
  feed: string;
  /** The key scope the feed route needs. */
  needs: Scope;
  /** A place scope's matched place (folded city, alpha-2 country). */
  place?: PlaceKey;
}

/** The feed a scope reads, matched as the feed route matches a place (folded city, the country's code). */
export function resolveScope(scope: WebhookScope): ResolvedScope {
  switch (scope.type) {
    case 'catalogue':
      return { scope, feed: feedScopes.catalogue(), needs: 'events:read' };
    case 'host':
      return { scope, feed: feedScopes.host(scope.userId), needs: 'events:read' };
    case 'guests':
      return { scope, feed: feedScopes.guests(scope.eventId), needs: 'guests:read' };
    case 'place': {
      const place: PlaceKey = { ...(scope.country !== undefined ? { country: countryKey(scope.country)! } : {}), ...(scope.city !== undefined ? { city: cityKey(scope.city)! } : {}) };
      return { scope, feed: feedScopes.place(placeName(place)), needs: 'events:read', place };
    }
  }
}

/** What a webhook is doing, as the management API shows it. */
export type WebhookStateName = 'active' | 'retrying' | 'disabled';
export type DisabledReason = 'gone' | 'failing' | 'key_closed';

/** The last failed attempt: its status, or the class of error when there was no answer; never the answer's body. */
export interface DeliveryFailure {
  at: string;
  status?: number;
  errorClass?: string;
}

/** Whether a receiver's answer acknowledges the delivery. */
export const isAcknowledged = (status: number): boolean => status >= 200 && status < 300;

/** Whether a webhook failing since `failingSince` is to be disabled at `now` (3 days without a 2xx). */
export function failingTooLong(failingSince: string, now: Date): boolean {
  return now.getTime() - Date.parse(failingSince) >= FAILING_DISABLE_SECONDS * 1000;
}

/** A delivery's body (P18): a feed page with the webhook's identity. `reset` while a fresh start replaces what the receiver held. */
export interface DeliveryBody<C> {
  webhook_id: string;
  scope: WebhookScope;
  changes: C[];
  cursor: string;
  reset?: true;
}
