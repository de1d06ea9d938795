/**
 * A delivery's feed page (PRODUCT P18): the page a pull of the webhook's
 * scope would get from the same cursor, read through lambdas/core/feeds.ts
 * (the routes' own functions, so content is exactly what the read routes
 * show now, and the cursor is a P16 cursor of that feed), with two
 * differences only, both in the FeedReader given to it:
 * - a host is named by user id, as a webhook names it: the lookup a pull
 *   makes of the username answers that id;
 * - a retry never reaches beyond the page its first attempt ended at
 *   (`clip`): the same delivery (same `webhook-id`) carries the same entries
 *   or fewer, each with its content as it is now, so a receiver that keeps
 *   only the first of a `webhook-id` misses nothing.
 */
import { createHash } from 'node:crypto';
import { catalogueChanges, CursorExpiredError, guestChanges, hostChanges, placeChanges, type EventChange, type GuestChange } from '../core/feeds.js';
import { parseCursor, type CursorKeyring, type FeedCursor } from '../core/feed-cursor.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { EventReader, FeedEntriesRead, FeedMembersRead, FeedReader } from '../core/ports.js';
import { DELIVERY_MAX_CHANGES, resolveScope, type WebhookScope } from '../core/webhook-rules.js';

export type Change = EventChange | GuestChange;

export type PageRead =
  | { kind: 'page'; changes: Change[]; next: string; hasMore: boolean; endsStart: boolean }
  /** The feed no longer holds the position (P16's retention), or the cursor's key is gone: start afresh. */
  | { kind: 'expired' }
  /** A guest feed's event is not public now: nothing to deliver until it is again. */
  | { kind: 'hidden' };

export interface PageContext {
  feeds: FeedReader;
  events: EventReader;
  keyring: CursorKeyring;
  siteUrl: string;
  now: Date;
}

/** The FeedReader a webhook's page reads through: the host by id, a retry held to its first page. */
class WebhookFeedReader implements FeedReader {
  constructor(
    private readonly inner: FeedReader,
    private readonly hostId: string | undefined,
    private readonly clip: FeedCursor | undefined,
  ) {}
  async feedEntries(scope: string, after: readonly number[], count: number): Promise<FeedEntriesRead> {
    const read = await this.inner.feedEntries(scope, after, count);
    const clip = this.clip;
    if (!clip || clip.mode !== 'entries') return read;
    const entries = read.entries.filter((e) => e.position <= (clip.position[e.shard] ?? Infinity));
    return entries.length === read.entries.length ? read : { ...read, entries, more: true };
  }
  feedHead(scope: string): Promise<number[]> {
    return this.inner.feedHead(scope);
  }
  async feedMembers(scope: string, after: string, count: number): Promise<FeedMembersRead> {
    const read = await this.inner.feedMembers(scope, after, count);
    const clip = this.clip;
    if (!clip || clip.mode !== 'members' || read.last <= clip.after) return read;
    return { members: read.members.filter((m) => m <= clip.after), last: clip.after, more: true };
  }
  feedStates(scope: string, members: readonly string[]) {
    return this.inner.feedStates(scope, members);
  }
  userIdByName(username: string): Promise<string | null> {
    return this.hostId !== undefined ? Promise.resolve(this.hostId) : this.inner.userIdByName(username);
  }
}

/** One page of the webhook's scope after `cursor` (none: a fresh start), at most DELIVERY_MAX_CHANGES changes, held to `clipTo` if given. */
export async function readWebhookPage(ctx: PageContext, scope: WebhookScope, cursor: string | undefined, clipTo?: string): Promise<PageRead> {
  const sealed = cursor === undefined ? undefined : parseCursor(cursor);
  if (cursor !== undefined && !sealed) return { kind: 'expired' };
  const clip = clipTo === undefined ? undefined : parseCursor(clipTo)?.cursor;
  const feeds = new WebhookFeedReader(ctx.feeds, scope.type === 'host' ? scope.userId : undefined, clip);
  const feedCtx = { feeds, keyring: ctx.keyring, now: ctx.now };
  const req = { limit: DELIVERY_MAX_CHANGES, ...(sealed ? { cursor: sealed } : {}) };
  try {
    let page: { changes: Change[]; next_cursor: string; has_more: boolean };
    switch (scope.type) {
      case 'catalogue':
        page = await catalogueChanges(feedCtx, req, ctx.siteUrl);
        break;
      case 'host':
        page = await hostChanges(feedCtx, { ...req, username: scope.userId, variant: 'dated' }, ctx.siteUrl);
        break;
      case 'place':
        page = await placeChanges(feedCtx, { ...req, place: resolveScope(scope).place! }, ctx.siteUrl);
        break;
      case 'guests':
        page = await guestChanges(feedCtx, ctx.events, { ...req, eventId: scope.eventId });
        break;
    }
    const mode = parseCursor(page.next_cursor)?.cursor.mode;
    return { kind: 'page', changes: page.changes, next: page.next_cursor, hasMore: page.has_more, endsStart: mode === 'entries' };
  } catch (error) {
    // A cursor past the feed's retention, or one no key held now opens (two rotations since it was stored): a fresh start.
    if (error instanceof CursorExpiredError || (error instanceof ValidationError && error.errors.some((e) => e.field === 'cursor'))) return { kind: 'expired' };
    if (error instanceof NotFoundError) return { kind: 'hidden' };
    throw error;
  }
}

/**
 * A delivery's `webhook-id`: the webhook and the position it starts after
 * (the cursor's scope, mode, positions and last member, not its signature or
 * its time), so every attempt of it, a resume's included, carries the same id.
 */
export function deliveryId(webhookId: string, start: string): string {
  const c = parseCursor(start)?.cursor;
  const position = c ? JSON.stringify([c.scope, c.mode, c.position, c.after]) : start;
  return `msg_${createHash('sha256').update(`${webhookId}\n${position}`).digest('base64url').slice(0, 26)}`;
}

/** A stored cursor is renewed (its `asOf`) when it is this much older than a page's: it matters only at 30 days. */
export const CURSOR_RENEWAL_SECONDS = 86_400;

/**
 * Whether a page's cursor is worth a write over the one stored: it moves
 * the position (or the start's members), or renews an `asOf` a day old.
 * An empty page after a wake-up with nothing new gives the same position
 * with the time of its read; writing that at every such wake-up would cost
 * a write each for nothing.
 */
export function cursorMoved(stored: string, next: string): boolean {
  if (stored === next) return false;
  const a = parseCursor(stored)?.cursor;
  const b = parseCursor(next)?.cursor;
  if (!a || !b) return true;
  return JSON.stringify([a.scope, a.mode, a.position, a.after]) !== JSON.stringify([b.scope, b.mode, b.position, b.after]) || b.asOf - a.asOf >= CURSOR_RENEWAL_SECONDS;
}
