/**
 * The tests' changes-feed cursor key: the local test server is started with
 * it (test/support/local.ts), and tests that call the feeds in-process read
 * them with it, so a test can make the cursor a consumer would hold (an old
 * one, one of another scope) the way the API signs it.
 */
import { createHmac } from 'node:crypto';
import { encodeCursor, keyIdOf, parseCursor, staticKeyring, type FeedCursor } from '../../lambdas/core/feed-cursor.js';
import type { FeedContext } from '../../lambdas/core/feeds.js';
import type { FeedReader } from '../../lambdas/core/ports.js';

export const TEST_CURSOR_KEY = Buffer.from('test-cursor-key-0123456789abcdef');
export const testKeyring = staticKeyring(TEST_CURSOR_KEY);

/** A cursor as the API signs it under the tests' key. */
export const signed = (c: FeedCursor): string => encodeCursor(c, TEST_CURSOR_KEY);

/**
 * A cursor as the API gave them before cursors named their key
 * (`f2.{payload}.{mac}`), which consumers may still hold: written out here,
 * since the API no longer makes them.
 */
export function legacyCursor(c: FeedCursor, key: Uint8Array): string {
  const signed = `f2.${Buffer.from(JSON.stringify([c.scope, c.mode === 'members' ? 'm' : 'e', c.position, c.after, c.asOf])).toString('base64url')}`;
  return `${signed}.${createHmac('sha256', key).update(signed).digest('base64url').slice(0, 22)}`;
}

/**
 * A cursor as the API gave them before the head shards: one position (a
 * single head's), in either format (with a key id, or the one before).
 */
export function unshardedCursor(c: Omit<FeedCursor, 'position'> & { position: number }, key: Uint8Array, how: 'keyed' | 'legacy' = 'keyed'): string {
  const payload = Buffer.from(JSON.stringify([c.scope, c.mode === 'members' ? 'm' : 'e', c.position, c.after, c.asOf])).toString('base64url');
  const signed = how === 'keyed' ? `f3.${keyIdOf(key)}.${payload}` : `f2.${payload}`;
  return `${signed}.${createHmac('sha256', key).update(signed).digest('base64url').slice(0, 22)}`;
}

/** What a cursor says (its signature is the API's to check). */
export function cursorOf(text: string): FeedCursor {
  const sealed = parseCursor(text);
  if (!sealed) throw new Error(`not a cursor: ${text}`);
  return sealed.cursor;
}

/** The feeds' context for an in-process read at `now`. */
export const feedContext = (feeds: FeedReader, now: Date): FeedContext => ({ feeds, keyring: testKeyring, now });
