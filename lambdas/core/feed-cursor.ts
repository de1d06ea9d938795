/**
 * The changes feeds' cursor (PRODUCT P16): opaque to clients, versioned,
 * scoped, and keyed so that nobody can forge or edit one
 * (docs/design.md, "Feed cursors").
 *
 * `f2.{payload}.{mac}`: payload is base64url of JSON
 * `[scope, mode, position, after, asOf]`, mac the first 22 characters
 * (128 bits) of base64url(HMAC-SHA256(key, "f2." + payload)) under the
 * stack's cursor key (a secret only the feed functions read). A cursor is
 * accepted under the current key or the previous one, so a rotation never
 * answers 400 to a cursor still within its lifetime.
 *
 * - mode `m` (members): a start from no cursor in progress. `position` is
 *   the scope's last entry when the start began; the members are listed in
 *   id order, `after` the last one given. Once they are all given, the feed
 *   goes on from `position` in mode `e`.
 * - mode `e` (entries): the consumer has read the scope's entries up to
 *   `position` (`after` is empty).
 * - `asOf` (Unix seconds): since when the consumer may have been behind. A
 *   page that reaches the end of the scope sets it to the time of the answer;
 *   a page with more to read carries it on. Entries are kept at least 30 days
 *   after they are written, so a cursor whose `asOf` is younger than that
 *   never needs an entry that has expired; an older one answers 410.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const CURSOR_VERSION = 'f2';
/** The 400's message for a cursor this API did not give, or gave for another feed. */
export const CURSOR_INVALID = 'Invalid cursor: pass a next_cursor of this feed, or no cursor to start again.';
/** Changes are kept at least this long; a consumer further behind answers 410. */
export const CURSOR_LIFETIME_SECONDS = 30 * 86_400;
/** How far in the future a cursor's `asOf` may be (clocks of two functions): past it, the cursor is refused. */
export const CURSOR_CLOCK_SKEW_SECONDS = 300;
/** Longest cursor accepted: a scope and a member id of at most 77 and 68 characters. */
export const CURSOR_MAX_LENGTH = 400;
const MAC_LENGTH = 22;

/** The feeds' scopes, as cursors name them (the store keeps each scope's entries under its name). */
export const feedScopes = {
  catalogue: () => 'EVENTS',
  host: (userId: string) => `HOST#${userId}`,
  guests: (eventId: string) => `GUESTS#${eventId}`,
};

export type CursorMode = 'members' | 'entries';

export interface FeedCursor {
  scope: string;
  mode: CursorMode;
  /** Members mode: the scope's last position when the start began. Entries mode: the position read to. */
  position: number;
  /** Members mode: the last member id given ('' before the first). */
  after: string;
  /** Unix seconds: since when the consumer may have been behind (file comment). */
  asOf: number;
}

/** A cursor whose structure is right, its MAC not yet checked (that needs the key: openCursor). */
export interface SealedCursor {
  readonly signed: string;
  readonly mac: string;
  readonly cursor: FeedCursor;
}

/**
 * The cursor keys: the one new cursors are signed with and those still
 * accepted (the previous key for one cursor lifetime after a rotation).
 * `refresh` reads them again (at most as often as the implementation allows)
 * and answers whether anything changed: a function that started before a
 * rotation meets cursors signed with the new key.
 */
export interface CursorKeyring {
  keys(): Promise<{ signing: Uint8Array; accepted: readonly Uint8Array[] }>;
  refresh(): Promise<boolean>;
}

/** A keyring of fixed keys (the local server's own secret, tests). */
export function staticKeyring(signing: Uint8Array, ...previous: Uint8Array[]): CursorKeyring {
  const keys = { signing, accepted: [signing, ...previous] };
  return { keys: async () => keys, refresh: async () => false };
}

const MODES: Record<string, CursorMode> = { m: 'members', e: 'entries' };
const macOf = (key: Uint8Array, signed: string): string => createHmac('sha256', key).update(signed).digest('base64url').slice(0, MAC_LENGTH);

export function encodeCursor(c: FeedCursor, key: Uint8Array): string {
  const payload = Buffer.from(JSON.stringify([c.scope, c.mode === 'members' ? 'm' : 'e', c.position, c.after, c.asOf])).toString('base64url');
  const signed = `${CURSOR_VERSION}.${payload}`;
  return `${signed}.${macOf(key, signed)}`;
}

/** The cursor's structure, or null when it is not one this API could have given (its MAC is checked by openCursor). */
export function parseCursor(text: string): SealedCursor | null {
  if (text.length > CURSOR_MAX_LENGTH) return null;
  const parts = text.split('.');
  if (parts.length !== 3 || parts[0] !== CURSOR_VERSION || !/^[A-Za-z0-9_-]+$/.test(parts[1]!) || !/^[A-Za-z0-9_-]{22}$/.test(parts[2]!)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 5) return null;
  const [scope, mode, position, after, asOf] = value as unknown[];
  const count = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  if (typeof scope !== 'string' || typeof mode !== 'string' || !MODES[mode] || !count(position) || typeof after !== 'string' || !count(asOf)) return null;
  if (MODES[mode] === 'entries' && after !== '') return null;
  return { signed: `${parts[0]}.${parts[1]}`, mac: parts[2]!, cursor: { scope, mode: MODES[mode]!, position, after, asOf } };
}

/** Whether the cursor was signed with one of these keys (constant-time comparison). */
export function signedWith(sealed: SealedCursor, keys: readonly Uint8Array[]): boolean {
  const given = Buffer.from(sealed.mac);
  return keys.some((key) => timingSafeEqual(Buffer.from(macOf(key, sealed.signed)), given));
}

/**
 * The cursor, if one of the accepted keys signed it; after a miss the keys
 * are read again once (a rotation since this function started), then null.
 */
export async function openCursor(sealed: SealedCursor, keyring: CursorKeyring): Promise<FeedCursor | null> {
  if (signedWith(sealed, (await keyring.keys()).accepted)) return sealed.cursor;
  if (!(await keyring.refresh())) return null;
  return signedWith(sealed, (await keyring.keys()).accepted) ? sealed.cursor : null;
}

export async function sealCursor(c: FeedCursor, keyring: CursorKeyring): Promise<string> {
  return encodeCursor(c, (await keyring.keys()).signing);
}
