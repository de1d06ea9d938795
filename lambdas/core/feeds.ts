/**
 * The changes feeds (PRODUCT P16) over the FeedReader port: which scope a
 * request reads, the cursor's checks, and the members or entries read turned
 * into changes from each member's current item (docs/data-model.md,
 * "Changes feeds"). Pure rules: every read is the port's
 * (lambdas/store/feeds/feed-reads.ts).
 *
 * A scope is read in two ways:
 * - from no cursor, its members: first only the scope's last position (the
 *   answer is the cursor of a start, no changes yet), then its current
 *   members in id order, each once, as upserts; then
 * - its entries after that position, each "this member may have changed":
 *   the member as the read route shows it now, or `removed`.
 * A member that joins during the start joins before its entry is written,
 * so it is either listed or has an entry after the start's position.
 */
import { CURSOR_CLOCK_SKEW_SECONDS, CURSOR_INVALID, CURSOR_LIFETIME_SECONDS, FEED_SHARDS, feedScopes, openCursor, sealCursor, type CursorKeyring, type FeedCursor, type SealedCursor } from './feed-cursor.js';
import { readIfGenuine, warmKeys } from './cursor-reads.js';
import { HttpError, MESSAGES, NotFoundError, ValidationError, BadRequestError } from './errors.js';
import { isPublicPayload, toGuest, toPublicEvent, type Guest, type PublicEvent } from './event-mapper.js';
import type { EventPayload, EventReader, FeedMemberState, FeedReader, RsvpItem } from './ports.js';
import { requirePublicEvent } from './queries.js';
import { ANSWER_BUDGET_BYTES, responseBytes } from './response-size.js';
import { placeMatches, placeName, placeOf, type PlaceKey } from './place.js';

export type EventChange = { id: string; change: 'upserted'; event: PublicEvent } | { id: string; change: 'removed' };
export type GuestChange = { id: string; change: 'upserted'; guest: Guest } | { id: string; change: 'removed' };

export interface FeedPage<C> {
  changes: C[];
  next_cursor: string;
  has_more: boolean;
}

export const CURSOR_EXPIRED = 'Cursor expired: start again without a cursor.';
/**
 * A page's changes stop before this many bytes of Lambda's answer (6 MB),
 * whatever `limit` says, with `has_more: true`: the envelope, headers and
 * the cursor fit in the rest.
 */
export const FEED_PAGE_MAX_BYTES = ANSWER_BUDGET_BYTES;

export class CursorExpiredError extends HttpError {
  constructor() {
    super(410, CURSOR_EXPIRED);
  }
}

const badCursor = () => new ValidationError([{ field: 'cursor', message: CURSOR_INVALID }]);

export interface FeedRequest {
  cursor?: SealedCursor;
  limit: number;
}

/** What a feed needs besides the request: its reads, the cursor keys and the time. */
export interface FeedContext {
  feeds: FeedReader;
  keyring: CursorKeyring;
  now: Date;
}

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000);

/**
 * The page `answer` gives from the request's cursor, if it claims a scope
 * this route serves (else 400), is not older than the lifetime (else 410)
 * and was signed by this API (else 400); or from no cursor. An `asOf` in the
 * future is no cursor this API gave: 400.
 *
 * The age comes before the MAC: a consumer back after more than 30 days
 * holds a cursor whose key may have been retired since (two rotations), and
 * only a 410 tells it to start again. Answering 410 to an unchecked cursor
 * gives nothing away: it says only "start again", and the age it judges is
 * the one the caller wrote. The scope the cursor claims comes before the age,
 * so that a cursor of another feed is the caller's mistake (400) whatever its
 * age; a 400 either way, it needs no MAC either. (A host's feed can tell the
 * user only after a read: an old cursor of another host is a 410 there.)
 *
 * A genuine cursor with another number of positions than the scopes' head
 * shards (one from before the shards, or from a layout with another count)
 * names positions of logs this feed no longer keeps: 410, start again.
 *
 * The cursor's MAC is judged by the keys held when they can (no I/O), else
 * beside the page's reads (lambdas/core/cursor-reads.ts): `answer` may run
 * before the cursor is known genuine, its result dropped if it is not. So a
 * page is two round trips at most, a container's first and the keys'
 * refreshes included; without a cursor, the keys are read beside the page
 * and waited for only to sign its next cursor.
 */
async function opened<T>(sealed: SealedCursor | undefined, belongs: (scope: string) => boolean, ctx: FeedContext, answer: (cursor: FeedCursor | undefined) => Promise<T>): Promise<T> {
  if (!sealed) {
    warmKeys(ctx.keyring);
    return answer(undefined);
  }
  const now = seconds(ctx.now);
  if (!belongs(sealed.cursor.scope) || sealed.cursor.asOf > now + CURSOR_CLOCK_SKEW_SECONDS) throw badCursor();
  if (now - sealed.cursor.asOf > CURSOR_LIFETIME_SECONDS) throw new CursorExpiredError();
  if (sealed.cursor.position.length !== FEED_SHARDS) {
    if (!(await openCursor(sealed, ctx.keyring))) throw badCursor();
    throw new CursorExpiredError();
  }
  const read = await readIfGenuine(sealed, ctx.keyring, () => answer(sealed.cursor));
  if (!read) throw badCursor();
  return read.value;
}

type Item = Record<string, unknown>;
const shownEvent = (state: FeedMemberState | undefined): state is FeedMemberState & { item: Item & EventPayload } =>
  !!state?.shown && state.item?.type === 'EVENT' && isPublicPayload(state.item as unknown as EventPayload);

/** A member as a change: its upsert while the scope shows it, else null (removed). */
type ToChange<C> = (member: string, state: FeedMemberState | undefined) => C | null;

/** Adds changes while they fit the page's bytes; false once one would not. */
class PageBudget<C> {
  readonly changes: C[] = [];
  private bytes = 0;
  add(change: C): boolean {
    const cost = responseBytes(change) + 1;
    if (this.changes.length && this.bytes + cost > FEED_PAGE_MAX_BYTES) return false;
    this.changes.push(change);
    this.bytes += cost;
    return true;
  }
}

/** The start of a scope from no cursor: its last positions now, nothing else (the members follow, read after them). */
async function start<C>(ctx: FeedContext, scope: string): Promise<FeedPage<C>> {
  const position = await ctx.feeds.feedHead(scope);
  const asOf = seconds(ctx.now);
  // A scope with no entry has had no member: everything from here on is its entries.
  if (position.every((p) => p === 0)) return { changes: [], next_cursor: await sealCursor({ scope, mode: 'entries', position, after: '', asOf }, ctx.keyring), has_more: false };
  return { changes: [], next_cursor: await sealCursor({ scope, mode: 'members', position, after: '', asOf }, ctx.keyring), has_more: true };
}

/** A page of a start: current members after the cursor's, each as an upsert; a member not shown now is left out. */
async function members<C>(ctx: FeedContext, cursor: FeedCursor, limit: number, toChange: ToChange<C>): Promise<FeedPage<C>> {
  const read = await ctx.feeds.feedMembers(cursor.scope, cursor.after, limit);
  const states = read.members.length ? await ctx.feeds.feedStates(cursor.scope, read.members) : new Map<string, FeedMemberState>();
  const page = new PageBudget<C>();
  let after = read.last;
  for (const member of read.members) {
    const change = toChange(member, states.get(member));
    if (change && !page.add(change)) {
      after = previousOf(read.members, member, cursor.after);
      const next = { ...cursor, after };
      return { changes: page.changes, next_cursor: await sealCursor(next, ctx.keyring), has_more: true };
    }
  }
  // Every member given: the start goes on from its position, as entries.
  const next: FeedCursor = read.more ? { ...cursor, after } : { scope: cursor.scope, mode: 'entries', position: cursor.position, after: '', asOf: cursor.asOf };
  return { changes: page.changes, next_cursor: await sealCursor(next, ctx.keyring), has_more: true };
}

/** The member given before `member` in this read (or the cursor's, for the first). */
function previousOf(list: readonly string[], member: string, before: string): string {
  const i = list.indexOf(member);
  return i > 0 ? list[i - 1]! : before;
}

/**
 * A page of entries after the cursor's positions: each member once (its
 * current state is the same for every entry of it in the page), shown as
 * the read route shows it now, or `removed`. The next cursor moves each
 * shard to the last entry of it given. A page that reaches the end renews
 * the cursor's `asOf`.
 */
async function entries<C>(ctx: FeedContext, cursor: FeedCursor, limit: number, toChange: ToChange<C>): Promise<FeedPage<C>> {
  const read = await ctx.feeds.feedEntries(cursor.scope, cursor.position, limit + 1);
  if (read.expired) throw new CursorExpiredError();
  const taken = read.entries.slice(0, limit);
  const states = taken.length ? await ctx.feeds.feedStates(cursor.scope, [...new Set(taken.map((e) => e.member))]) : new Map<string, FeedMemberState>();
  const page = new PageBudget<C>();
  const given = new Set<string>();
  const position = [...cursor.position];
  let full = false;
  for (const entry of taken) {
    if (!given.has(entry.member)) {
      const change = toChange(entry.member, states.get(entry.member)) ?? ({ id: entry.member, change: 'removed' } as C);
      if (!page.add(change)) {
        full = true;
        break;
      }
      given.add(entry.member);
    }
    position[entry.shard] = entry.position;
  }
  const hasMore = full || read.entries.length > limit || read.more;
  const next: FeedCursor = { ...cursor, position, asOf: hasMore ? cursor.asOf : seconds(ctx.now) };
  return { changes: page.changes, next_cursor: await sealCursor(next, ctx.keyring), has_more: hasMore };
}

/** One page of a scope, from its cursor (opened and checked) or from no cursor. */
function page<C>(ctx: FeedContext, scope: string, cursor: FeedCursor | undefined, limit: number, toChange: ToChange<C>): Promise<FeedPage<C>> {
  if (!cursor) return start<C>(ctx, scope);
  return cursor.mode === 'members' ? members(ctx, cursor, limit, toChange) : entries(ctx, cursor, limit, toChange);
}

export async function catalogueChanges(ctx: FeedContext, req: FeedRequest, siteUrl: string): Promise<FeedPage<EventChange>> {
  const scope = feedScopes.catalogue();
  return opened(req.cursor, (s) => s === scope, ctx, (cursor) =>
    page<EventChange>(ctx, scope, cursor, req.limit, (id, state) => (shownEvent(state) ? { id, change: 'upserted', event: toPublicEvent(state.item, siteUrl) } : null)),
  );
}

/**
 * A host's events, following the user's id: the name finds the user now (as
 * the read route does), and a cursor names the user's id, so it keeps working
 * after a rename. With a cursor the name's lookup and the page go at once
 * (and must agree); without one the scope is known only after the lookup,
 * and the start reads only its position then: at most two round trips.
 */
export async function hostChanges(ctx: FeedContext, req: FeedRequest & { username: string; variant: 'typed' | 'dated' }, siteUrl: string): Promise<FeedPage<EventChange>> {
  const read = (userId: string, c: FeedCursor | undefined) =>
    page<EventChange>(ctx, feedScopes.host(userId), c, req.limit, (id, state) =>
      shownEvent(state) && (state.item.creator as { id: string }).id === userId ? { id, change: 'upserted', event: toPublicEvent(state.item, siteUrl) } : null,
    );
  return opened(req.cursor, (s) => s.startsWith(feedScopes.host('')), ctx, async (cursor) => {
    const cursorUser = cursor?.scope.slice(feedScopes.host('').length);
    const [userId, answer] = await Promise.all([ctx.feeds.userIdByName(req.username), cursorUser !== undefined ? read(cursorUser, cursor) : Promise.resolve(undefined)]);
    if (userId === null) throw req.variant === 'typed' ? new BadRequestError(MESSAGES.typedUserNotFound) : new NotFoundError(MESSAGES.userNotFound);
    if (cursorUser !== undefined && cursorUser !== userId) throw badCursor();
    return answer ?? read(userId, undefined);
  });
}

/**
 * A place's public events, past ones included (PRODUCT P17): the scope of
 * its place query (lambdas/core/place.ts, placeName), which an event's
 * writes append to while it is at that place and when it leaves. An event
 * shown elsewhere now (it moved) is `removed` here, like a hidden one.
 */
export async function placeChanges(ctx: FeedContext, req: FeedRequest & { place: PlaceKey }, siteUrl: string): Promise<FeedPage<EventChange>> {
  const scope = feedScopes.place(placeName(req.place));
  return opened(req.cursor, (s) => s === scope, ctx, (cursor) =>
    page<EventChange>(ctx, scope, cursor, req.limit, (id, state) =>
      shownEvent(state) && placeMatches(placeOf(state.item.location as Parameters<typeof placeOf>[0]), req.place) ? { id, change: 'upserted', event: toPublicEvent(state.item, siteUrl) } : null,
    ),
  );
}

/** An event's guests: 404 as the guest list while the event is not public. */
export async function guestChanges(ctx: FeedContext, reader: EventReader, req: FeedRequest & { eventId: string }): Promise<FeedPage<GuestChange>> {
  const scope = feedScopes.guests(req.eventId);
  return opened(req.cursor, (s) => s === scope, ctx, async (cursor) => {
    const [, answer] = await Promise.all([
      requirePublicEvent(reader, req.eventId),
      page<GuestChange>(ctx, scope, cursor, req.limit, (id, state) => (state?.shown && state.item?.type === 'RSVP' ? { id, change: 'upserted', guest: toGuest(state.item as unknown as RsvpItem) } : null)),
    ]);
    return answer;
  });
}
