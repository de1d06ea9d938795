/**
 * The changes feeds' cursor (PRODUCT P16): opaque to clients, versioned,
 * scoped, and keyed so that nobody can forge or edit one
 * (docs/design.md, "Feed cursors").
 *
 * `f3.{keyId}.{payload}.{mac}`: payload is base64url of JSON
 * `[scope, mode, position, after, asOf]`, mac the first 22 characters
 * (128 bits) of base64url(HMAC-SHA256(key, "f3." + keyId + "." + payload))
 * under the stack's cursor key (a secret only the feed functions read), and
 * keyId names that key (keyIdOf) so that a function checks the one key the
 * cursor claims and knows at once when it is one it has not read yet (a
 * rotation since its last read of the secret). A cursor is accepted under
 * the current key, the previous one and a pending one, so a rotation never
 * answers 400 to a cursor still within its lifetime.
 *
 * - `position`: a list of FEED_SHARDS positions, one per head shard of the
 *   scope (each shard numbers its own entries: lambdas/store/feeds/feed.ts).
 * - mode `m` (members): a start from no cursor in progress. `position` is
 *   the scope's last entry in each shard when the start began; the members
 *   are listed in id order, `after` the last one given. Once they are all
 *   given, the feed goes on from `position` in mode `e`.
 * - mode `e` (entries): the consumer has read each shard's entries up to its
 *   `position` (`after` is empty).
 * A cursor from before the shards carries one number (a single head's
 * position), which no shard's position can be derived from: it is read (so
 * that its MAC is checked like any other) and answered 410, start again.
 * - `asOf` (Unix seconds): since when the consumer may have been behind. A
 *   page that reaches the end of the scope sets it to the time of the answer;
 *   a page with more to read carries it on. Entries are kept at least 30 days
 *   after they are written, so a cursor whose `asOf` is younger than that
 *   never needs an entry that has expired; an older one answers 410.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const CURSOR_VERSION = 'f3';
/**
 * The format before key ids (`f2.{payload}.{mac}`, the MAC over "f2." +
 * payload). Still read, for the transition: one within its lifetime opens
 * if any accepted key signed it. Nothing gives one any more, so 30 days
 * after the deploy that brought key ids every one left is past its
 * lifetime, and answers 410 before its MAC is looked at; reading them costs
 * nothing then, and dropping them would turn that 410 into a 400, which
 * tells a consumer nothing it can act on. Every one given carries a single
 * position (from before the head shards), so one within its lifetime is a
 * 410 too, once its MAC holds.
 */
const LEGACY_VERSION = 'f2';
/** The 400's message for a cursor this API did not give, or gave for another feed. */
export const CURSOR_INVALID = 'Invalid cursor: pass a next_cursor of this feed, or no cursor to start again.';
/** Changes are kept at least this long; a consumer further behind answers 410. */
export const CURSOR_LIFETIME_SECONDS = 30 * 86_400;
/**
 * The least time between two reads of the cursor keys by one function
 * (lambdas/http/cursor-keys.ts), so the most a request that met no keys is
 * asked to wait (its 503's Retry-After).
 */
export const CURSOR_KEYS_RETRY_SECONDS = 10;
/** How far in the future a cursor's `asOf` may be (clocks of two functions): past it, the cursor is refused. */
export const CURSOR_CLOCK_SKEW_SECONDS = 300;
/**
 * The head shards of every scope: each is an independent log with its own
 * positions, and a cursor carries one position per shard (lambdas/store/feeds/feed.ts,
 * docs/data-model.md "Changes feeds"). Changing it makes every cursor given
 * before answer 410 (its list has the other length): consumers start again.
 */
export const FEED_SHARDS = 8;
/**
 * Longest cursor accepted: a scope and a member id of at most 77 and 68
 * characters, and FEED_SHARDS positions of up to 12 digits (the store's chunk
 * keys): a start's is the longest (test/unit/feed-cursor.test.ts).
 */
export const CURSOR_MAX_LENGTH = 400;
/** Every head shard at position `p`: `everyShardAt(0)` is a scope with no entry yet. */
export const everyShardAt = (p: number): number[] => Array.from({ length: FEED_SHARDS }, () => p);
/** No cursor carries more positions than this (any layout this API may use). */
const MAX_CURSOR_SHARDS = 8;
const MAC_LENGTH = 22;
/** 48 bits: enough that the three keys a function holds never share an id by chance (and if they did, both are tried). */
const KEY_ID_LENGTH = 8;
/**
 * What a key id is an HMAC of. A cursor's signed text starts with its
 * version and a dot, so it is never this label: the id, which every cursor
 * shows, is never the start of a cursor's MAC, and tells nothing about the
 * key.
 */
const KEY_ID_LABEL = 'feed cursor key id';

/**
 * A place scope's name is at most this long: a guest feed's of the longest
 * event id (7 + 68), so the head's bound (lambdas/store/feeds/feed.ts,
 * HEAD_MAX_BYTES) and the cursor's (CURSOR_MAX_LENGTH) hold for every scope.
 */
export const PLACE_SCOPE_MAX_LENGTH = 75;
const PLACE_SCOPE_PREFIX = 'PLACE#';
/**
 * A place's scope: `PLACE#{place name}` (lambdas/core/place.ts, placeName),
 * readable for the places most names are; a longer name (a city of 100
 * characters, accents decomposed and separators escaped, can pass 300) or
 * one beyond printable ASCII (a cursor carries its scope as UTF-8, three
 * bytes a character for "東京") is named by its SHA-256 behind `=`, which
 * no place name starts with (its first part is `*`, a code or `~`). So a
 * scope is at most PLACE_SCOPE_MAX_LENGTH bytes, whatever the place.
 */
function placeScope(name: string): string {
  const readable = `${PLACE_SCOPE_PREFIX}${name}`;
  return readable.length <= PLACE_SCOPE_MAX_LENGTH && /^[\x20-\x7e]*$/.test(readable) ? readable : `${PLACE_SCOPE_PREFIX}=${createHash('sha256').update(name).digest('base64url')}`;
}

/** The feeds' scopes, as cursors name them (the store keeps each scope's entries under its name). */
export const feedScopes = {
  catalogue: () => 'EVENTS',
  host: (userId: string) => `HOST#${userId}`,
  guests: (eventId: string) => `GUESTS#${eventId}`,
  /** A place query's public events (PRODUCT P17), by its place name (placeName). */
  place: placeScope,
};

export type CursorMode = 'members' | 'entries';

export interface FeedCursor {
  scope: string;
  mode: CursorMode;
  /**
   * One position per head shard. Members mode: each shard's last position
   * when the start began. Entries mode: the position read to in each shard.
   * Empty for a cursor from before the shards (one number, no shard's):
   * answered 410 once its MAC is checked (lambdas/core/feeds.ts).
   */
  position: readonly number[];
  /** Members mode: the last member id given ('' before the first). */
  after: string;
  /** Unix seconds: since when the consumer may have been behind (file comment). */
  asOf: number;
}

/** A cursor whose structure is right, its MAC not yet checked (that needs the key: openCursor). */
export interface SealedCursor {
  readonly signed: string;
  readonly mac: string;
  /** The id of the key that signed it; absent in the format before key ids (LEGACY_VERSION). */
  readonly keyId?: string;
  readonly cursor: FeedCursor;
}

export interface CursorKeys {
  /** The key new cursors are signed with. */
  signing: Uint8Array;
  /** Every key a cursor may be signed with (the signing one among them). */
  accepted: readonly Uint8Array[];
}

/**
 * The cursor keys: the one new cursors are signed with and those still
 * accepted (the previous key for one cursor lifetime after a rotation).
 * `refresh` reads them again (at most as often as the implementation allows)
 * and answers whether anything changed: a function meets a cursor of a key
 * newer than its last read. Once a keyring has keys, a failed read leaves
 * them in use rather than failing either call: they are still good, and a
 * cursor check must not turn an outage into a 500.
 */
export interface CursorKeyring {
  /** The keys to sign with: waits for a read that is due or under way (the first, one past the keys' age). */
  keys(): Promise<CursorKeys>;
  refresh(): Promise<boolean>;
  /**
   * The keys held now, without waiting (none before the first read), and
   * whether a read is under way; starts a read that is due, so that it goes
   * beside the caller's own reads (cursor-reads.ts). Optional: a keyring
   * without it is asked with keys() first.
   */
  held?(): HeldKeys;
  /** Settles once no read of the keys is under way (a Lambda answers only then: nothing is left in flight when it freezes). */
  settled?(): Promise<void>;
}

/** What a keyring holds at one moment (CursorKeyring.held). */
export interface HeldKeys {
  keys: CursorKeys | undefined;
  reading: boolean;
}

/** A keyring of fixed keys (the local server's own secret, tests). */
export function staticKeyring(signing: Uint8Array, ...previous: Uint8Array[]): CursorKeyring {
  const keys = { signing, accepted: [signing, ...previous] };
  return { keys: async () => keys, refresh: async () => false, held: () => ({ keys, reading: false }) };
}

const MODES: Record<string, CursorMode> = { m: 'members', e: 'entries' };
const macOf = (key: Uint8Array, signed: string): string => createHmac('sha256', key).update(signed).digest('base64url').slice(0, MAC_LENGTH);

/** The short public name of a key that cursors carry (never the key: an HMAC under it, KEY_ID_LABEL). */
export const keyIdOf = (key: Uint8Array): string => macOf(key, KEY_ID_LABEL).slice(0, KEY_ID_LENGTH);

export function encodeCursor(c: FeedCursor, key: Uint8Array): string {
  return signToken(CURSOR_VERSION, [c.scope, c.mode === 'members' ? 'm' : 'e', c.position, c.after, c.asOf], key);
}

/**
 * `{version}.{keyId}.{payload}.{mac}`, payload the base64url of `value`'s
 * JSON: the feeds' cursors, and other keyed cursors under a version prefix
 * of their own (discovery's: lambdas/core/search-cursor.ts), so that no
 * cursor of one kind ever opens as another.
 */
export function signToken(version: string, value: unknown, key: Uint8Array): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  const signed = `${version}.${keyIdOf(key)}.${payload}`;
  return `${signed}.${macOf(key, signed)}`;
}

/** A keyed token's parts, its MAC not yet checked: the signed text, the MAC, the key id; `value` its payload's JSON. */
export interface SealedToken {
  readonly signed: string;
  readonly mac: string;
  readonly keyId?: string;
}

/** The parts of a `{version}.{keyId}.{payload}.{mac}` token of that version, and its payload's JSON, or null when it is none. */
export function parseToken(text: string, version: string, maxLength: number): (SealedToken & { value: unknown }) | null {
  if (text.length > maxLength) return null;
  const parts = text.split('.');
  if (parts.length !== 4 || parts[0] !== version || !KEY_ID.test(parts[1]!) || !BASE64URL.test(parts[2]!) || !MAC.test(parts[3]!)) return null;
  try {
    return { signed: parts.slice(0, 3).join('.'), mac: parts[3]!, keyId: parts[1]!, value: JSON.parse(Buffer.from(parts[2]!, 'base64url').toString('utf8')) as unknown };
  } catch {
    return null;
  }
}

/** Whether one of the keyring's accepted keys signed the token (reading the keys again only when it names one not held). */
export async function isGenuine(sealed: SealedToken, keyring: CursorKeyring): Promise<boolean> {
  const first = verdict(sealed, (await keyring.keys()).accepted);
  if (first !== 'unknown') return first === 'signed';
  if (!(await keyring.refresh())) return false;
  return verdict(sealed, (await keyring.keys()).accepted) === 'signed';
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const KEY_ID = new RegExp(`^[A-Za-z0-9_-]{${KEY_ID_LENGTH}}$`);
const MAC = new RegExp(`^[A-Za-z0-9_-]{${MAC_LENGTH}}$`);

/** The cursor's structure, or null when it is not one this API could have given (its MAC is checked by openCursor). */
export function parseCursor(text: string): SealedCursor | null {
  if (text.length > CURSOR_MAX_LENGTH) return null;
  const parts = text.split('.');
  const keyed = parts[0] === CURSOR_VERSION && parts.length === 4 && KEY_ID.test(parts[1]!);
  if (!keyed && !(parts[0] === LEGACY_VERSION && parts.length === 3)) return null;
  const payload = parts.at(-2)!;
  const mac = parts.at(-1)!;
  if (!BASE64URL.test(payload) || !MAC.test(mac)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 5) return null;
  const [scope, mode, position, after, asOf] = value as unknown[];
  const count = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  // A list of shard positions, or one number: a cursor from before the shards, kept as no positions (a 410).
  const positions = count(position) ? [] : Array.isArray(position) && position.length >= 1 && position.length <= MAX_CURSOR_SHARDS && position.every(count) ? (position as number[]) : null;
  if (typeof scope !== 'string' || typeof mode !== 'string' || !MODES[mode] || !positions || typeof after !== 'string' || !count(asOf)) return null;
  if (MODES[mode] === 'entries' && after !== '') return null;
  const cursor: FeedCursor = { scope, mode: MODES[mode]!, position: positions, after, asOf };
  const signed = parts.slice(0, -1).join('.');
  return keyed ? { signed, mac, keyId: parts[1]!, cursor } : { signed, mac, cursor };
}

/**
 * Whether these keys say the cursor is genuine (`signed`), forged (`forged`:
 * the key it names is here and its MAC is not that key's), or cannot tell
 * (`unknown`: it names a key not here, or, without a key id, none of them
 * signed it: a key newer than these may have). Constant-time comparison.
 */
export function verdict(sealed: SealedToken, accepted: readonly Uint8Array[]): 'signed' | 'forged' | 'unknown' {
  const candidates = sealed.keyId === undefined ? accepted : accepted.filter((key) => keyIdOf(key) === sealed.keyId);
  const given = Buffer.from(sealed.mac);
  if (candidates.some((key) => timingSafeEqual(Buffer.from(macOf(key, sealed.signed)), given))) return 'signed';
  return sealed.keyId !== undefined && candidates.length ? 'forged' : 'unknown';
}

/**
 * The cursor, if one of the accepted keys signed it, else null. Only a
 * cursor these keys cannot judge makes the keyring read them again (which
 * it does at most every few seconds): a forged cursor naming a key held
 * here costs no read.
 */
export async function openCursor(sealed: SealedCursor, keyring: CursorKeyring): Promise<FeedCursor | null> {
  return (await isGenuine(sealed, keyring)) ? sealed.cursor : null;
}

export async function sealCursor(c: FeedCursor, keyring: CursorKeyring): Promise<string> {
  return encodeCursor(c, (await keyring.keys()).signing);
}
