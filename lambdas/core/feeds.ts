/**
 * The changes feeds (PRODUCT P16) over the FeedReader port: which scope a
 * request reads, the cursor's checks, and each entry turned into a change
 * from the member's current item (docs/data-model.md, "Changes feeds").
 * Pure rules: every read is the port's (lambdas/store/feed-reads.ts).
 */
import { encodeCursor, feedScopes, CURSOR_INVALID, CURSOR_LIFETIME_SECONDS, type FeedCursor } from './feed-cursor.js';
import { HttpError, MESSAGES, NotFoundError, ValidationError, BadRequestError } from './errors.js';
import { isPublicPayload, toGuest, toPublicEvent, type Guest, type PublicEvent } from './event-mapper.js';
import type { EventPayload, EventReader, FeedMemberState, FeedReader, RsvpItem } from './ports.js';
import { requirePublicEvent } from './queries.js';

export type EventChange = { id: string; change: 'upserted'; event: PublicEvent } | { id: string; change: 'removed' };
export type GuestChange = { id: string; change: 'upserted'; guest: Guest } | { id: string; change: 'removed' };

export interface FeedPage<C> {
  changes: C[];
  next_cursor: string;
  has_more: boolean;
}

export const CURSOR_EXPIRED = 'Cursor expired: start again without a cursor.';

export class CursorExpiredError extends HttpError {
  constructor() {
    super(410, CURSOR_EXPIRED);
  }
}

const badCursor = () => new ValidationError([{ field: 'cursor', message: CURSOR_INVALID }]);

interface FeedRequest {
  cursor?: FeedCursor;
  limit: number;
}

/** A cursor of another kind of feed is refused before anything is read; an expired one answers 410. */
function checkCursor(cursor: FeedCursor | undefined, scopePrefix: string, now: Date): void {
  if (!cursor) return;
  if (!cursor.scope.startsWith(scopePrefix)) throw badCursor();
  if (now.getTime() / 1000 - cursor.issued > CURSOR_LIFETIME_SECONDS) throw new CursorExpiredError();
}

type Item = Record<string, unknown>;
const shownEvent = (state: FeedMemberState | undefined): state is FeedMemberState & { item: Item & EventPayload } =>
  !!state?.shown && state.item?.type === 'EVENT' && isPublicPayload(state.item as unknown as EventPayload);

/**
 * One page of a scope: the entries after the cursor (one more than the page,
 * to tell has_more), then every member's pointer and item at once. An entry
 * below its member's pointer is skipped (a newer one follows); a member not
 * shown now is `removed`, except during a start from no cursor, which leaves
 * out what the consumer was never given.
 */
async function page<C>(feeds: FeedReader, scope: string, req: FeedRequest, now: Date, toChange: (member: string, state: FeedMemberState | undefined) => C | null): Promise<FeedPage<C>> {
  const after = req.cursor?.position ?? 0;
  const [entries, head] = await Promise.all([feeds.feedEntries(scope, after, req.limit + 1), req.cursor ? Promise.resolve(req.cursor.start) : feeds.feedHead(scope)]);
  const taken = entries.slice(0, req.limit);
  const states = taken.length ? await feeds.feedStates(scope, taken.map((e) => e.member)) : new Map<string, FeedMemberState>();
  const changes: C[] = [];
  for (const entry of taken) {
    const state = states.get(entry.member);
    if (state?.pointer !== undefined && state.pointer > entry.position) continue;
    const change = toChange(entry.member, state);
    if (change) changes.push(change);
    else if (entry.position > head) changes.push({ id: entry.member, change: 'removed' } as C);
  }
  const position = taken.length ? taken[taken.length - 1]!.position : after;
  return { changes, next_cursor: encodeCursor({ scope, position, start: head, issued: Math.floor(now.getTime() / 1000) }), has_more: entries.length > req.limit };
}

export async function catalogueChanges(feeds: FeedReader, req: FeedRequest, now: Date, siteUrl: string): Promise<FeedPage<EventChange>> {
  const scope = feedScopes.catalogue();
  if (req.cursor && req.cursor.scope !== scope) throw badCursor();
  checkCursor(req.cursor, scope, now);
  return page<EventChange>(feeds, scope, req, now, (id, state) => (shownEvent(state) ? { id, change: 'upserted', event: toPublicEvent(state.item, siteUrl) } : null));
}

/**
 * A host's events, following the user's id: the name finds the user now (as
 * the read route does), and a cursor names the user's id, so it keeps working
 * after a rename.
 *
 * At most two round trips a page, like the other feeds. With a cursor the
 * user's id is in it, so the name's lookup and the page go at once (and must
 * agree). Without one the id is known only after the lookup, and a page
 * after it would be a third trip: so the first answer holds no changes, only
 * the cursor of a start from no cursor (position 0, the scope's head now as
 * its `start`) and `has_more: true` when the scope holds any entry; the
 * members follow from the next request on, each once, as upserts.
 */
export async function hostChanges(feeds: FeedReader, req: FeedRequest & { username: string; variant: 'typed' | 'dated' }, now: Date, siteUrl: string): Promise<FeedPage<EventChange>> {
  checkCursor(req.cursor, feedScopes.host(''), now);
  const read = (userId: string) =>
    page<EventChange>(feeds, feedScopes.host(userId), req, now, (id, state) =>
      shownEvent(state) && (state.item.creator as { id: string }).id === userId ? { id, change: 'upserted', event: toPublicEvent(state.item, siteUrl) } : null,
    );
  const cursorUser = req.cursor?.scope.slice(feedScopes.host('').length);
  const [userId, answer] = await Promise.all([feeds.userIdByName(req.username), cursorUser !== undefined ? read(cursorUser) : Promise.resolve(undefined)]);
  if (userId === null) throw req.variant === 'typed' ? new BadRequestError(MESSAGES.typedUserNotFound) : new NotFoundError(MESSAGES.userNotFound);
  if (cursorUser !== undefined && cursorUser !== userId) throw badCursor();
  if (answer) return answer;
  const scope = feedScopes.host(userId);
  const head = await feeds.feedHead(scope);
  return { changes: [], next_cursor: encodeCursor({ scope, position: 0, start: head, issued: Math.floor(now.getTime() / 1000) }), has_more: head > 0 };
}

/** An event's guests: 404 as the guest list while the event is not public. */
export async function guestChanges(feeds: FeedReader, reader: EventReader, req: FeedRequest & { eventId: string }, now: Date): Promise<FeedPage<GuestChange>> {
  const scope = feedScopes.guests(req.eventId);
  if (req.cursor && req.cursor.scope !== scope) throw badCursor();
  checkCursor(req.cursor, scope, now);
  const [, answer] = await Promise.all([
    requirePublicEvent(reader, req.eventId),
    page<GuestChange>(feeds, scope, req, now, (id, state) =>
      state?.shown && state.item?.type === 'RSVP' ? { id, change: 'upserted', guest: toGuest(state.item as unknown as RsvpItem) } : null,
    ),
  ]);
  return answer;
}
