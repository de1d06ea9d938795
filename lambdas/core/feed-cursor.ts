/**
 * The changes feeds' cursor (PRODUCT P16): opaque to clients, versioned,
 * scoped and tamper-evident without a secret (docs/design.md, "Feed cursors").
 *
 * `f1.{payload}.{check}`: payload is base64url of JSON `[scope, position,
 * start, issued]` (`start`: the highest position when the consumer started
 * from no cursor, below which removed members are left out; `issued`: Unix
 * seconds of the answer that gave it). `check` is the first 22 characters of
 * base64url(SHA-256(payload)): any edit of the payload is refused. Whoever
 * recomputes the check can only ask for another position of a scope that the
 * route checks anyway, and every position shows only what is public now.
 */
import { createHash } from 'node:crypto';

export const CURSOR_VERSION = 'f1';
/** The 400's message for a cursor this API did not give, or gave for another feed. */
export const CURSOR_INVALID = 'Invalid cursor: pass a next_cursor of this feed, or no cursor to start again.';
/** Changes are kept at least this long; an older cursor answers 410. */
export const CURSOR_LIFETIME_SECONDS = 30 * 86_400;
/** Longest cursor accepted: a scope holds an id of at most 64 characters. */
export const CURSOR_MAX_LENGTH = 400;

/** The feeds' scopes, as cursors name them (the store keeps each scope's entries under its name). */
export const feedScopes = {
  catalogue: () => 'EVENTS',
  host: (userId: string) => `HOST#${userId}`,
  guests: (eventId: string) => `GUESTS#${eventId}`,
};

export interface FeedCursor {
  scope: string;
  position: number;
  start: number;
  issued: number;
}

const checkOf = (payload: string): string => createHash('sha256').update(payload).digest('base64url').slice(0, 22);

export function encodeCursor(c: FeedCursor): string {
  const payload = Buffer.from(JSON.stringify([c.scope, c.position, c.start, c.issued])).toString('base64url');
  return `${CURSOR_VERSION}.${payload}.${checkOf(payload)}`;
}

/** The cursor, or null when it is not one this API gave (malformed or tampered with). */
export function decodeCursor(text: string): FeedCursor | null {
  if (text.length > CURSOR_MAX_LENGTH) return null;
  const parts = text.split('.');
  if (parts.length !== 3 || parts[0] !== CURSOR_VERSION || !/^[A-Za-z0-9_-]+$/.test(parts[1]!) || checkOf(parts[1]!) !== parts[2]) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 4) return null;
  const [scope, position, start, issued] = value as unknown[];
  const count = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  if (typeof scope !== 'string' || !count(position) || !count(start) || !count(issued)) return null;
  return { scope, position, start, issued };
}
