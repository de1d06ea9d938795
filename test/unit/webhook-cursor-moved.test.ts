/**
 * When a webhook's stored cursor is written again (lambdas/delivery/webhook-page.ts,
 * cursorMoved): when a page moves its position or its start's members, or
 * renews an `asOf` a day old; not for a page that only read the same
 * position later (an empty wake-up), which would otherwise cost a write.
 */
import { describe, expect, it } from '@jest/globals';
import { FEED_SHARDS, type FeedCursor } from '../../lambdas/core/feed-cursor.js';
import { CURSOR_RENEWAL_SECONDS, cursorMoved } from '../../lambdas/delivery/webhook-page.js';
import { signed } from '../support/feed-keys.js';

const at = (over: Partial<FeedCursor> = {}): string => signed({ scope: 'EVENTS', mode: 'entries', position: Array.from({ length: FEED_SHARDS }, () => 3), after: '', asOf: 1_790_000_000, ...over });

describe('a stored cursor is written again only when it moves', () => {
  it('the same position read later: no write, until its asOf is a day old', () => {
    expect(cursorMoved(at(), at())).toBe(false);
    expect(cursorMoved(at(), at({ asOf: 1_790_000_000 + CURSOR_RENEWAL_SECONDS - 1 }))).toBe(false);
    expect(cursorMoved(at(), at({ asOf: 1_790_000_000 + CURSOR_RENEWAL_SECONDS }))).toBe(true);
  });

  it('a position, a mode or a start\'s member moved: a write', () => {
    expect(cursorMoved(at(), at({ position: [4, ...Array.from({ length: FEED_SHARDS - 1 }, () => 3)] }))).toBe(true);
    expect(cursorMoved(at({ mode: 'members', after: 'evt_a' }), at({ mode: 'members', after: 'evt_b' }))).toBe(true);
    expect(cursorMoved(at({ mode: 'members', after: 'evt_b' }), at())).toBe(true);
  });

  it('a cursor it cannot read is replaced', () => {
    expect(cursorMoved('not a cursor', at())).toBe(true);
  });
});
