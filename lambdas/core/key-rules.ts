/**
 * The rules of a user's API keys (PRODUCT P3), as pure functions of the
 * user's slot record (the key counter item, lambdas/store/keys/key-store.ts):
 *
 * - at most MAX_ACTIVE_KEYS keys active or being made: each holds a slot,
 *   named by its key id, taken before anything of the key is written and
 *   given back only once the key can no longer authenticate;
 * - at most MAX_CREATES_PER_DAY creates per user per UTC day, counted when
 *   the slot is taken and never given back, so revoking and creating buys no
 *   more than (MAX_ACTIVE_KEYS + MAX_CREATES_PER_DAY) keys' quotas a day
 *   (DAILY_REQUESTS_PER_USER);
 * - the day counted only moves forward: a create whose clock read the day
 *   before (it started before 00:00 UTC) and that takes its slot after the
 *   new day's first create counts against the new day, so no create resets
 *   a day's count (each function reads its own clock, and a slow call or a
 *   contended slot write can land after a later one);
 * - a deleted user's slots are closed at the deletion's version: a create
 *   that read the user before it is refused, one that read the user
 *   re-created since is not; the day's count survives the closing, so a
 *   user deleted and re-created the same day gets no fresh day of creates;
 * - each slot remembers the user version its create read, so a deletion's
 *   close, however late it runs, retires only the keys made for the user
 *   it deleted (`closableHolders`), never one made for the user re-created
 *   since (the change path's rule: act only on the version that asked).
 *
 * Each transition is idempotent by key id, so a write retried after a lost
 * response, or a step repeated after a crash, changes nothing the second time.
 */
import { DAILY_QUOTA } from './rate-limit.js';

export const MAX_ACTIVE_KEYS = 10;
export const MAX_CREATES_PER_DAY = 10;
/** The most requests the keys of one user can make in one UTC day, whatever they revoke and create (docs/keys-and-quota.md). */
export const DAILY_REQUESTS_PER_USER = (MAX_ACTIVE_KEYS + MAX_CREATES_PER_DAY) * DAILY_QUOTA;
/**
 * A create is presumed dead this long after it took its slot (far beyond the
 * key-management function's 6 s timeout): its slot may then be reclaimed and
 * its request retried. Reclaiming is safe at any time (it only ever revokes a
 * key that is not usable yet); this only decides when it is worth trying.
 */
export const STALE_CREATE_MS = 60_000;
export const MAX_NAME_LENGTH = 100;

export interface Slots {
  /** Key id → when its slot was taken (ISO): every key active or being made. */
  holders: Record<string, string>;
  /** The UTC day `created` counts: it never moves back (`reserve`). */
  day?: string;
  created?: number;
  /** The version of the user's deletion: creates that read an older user are refused. */
  closedVersion?: number;
  /**
   * Key id → the user version its create read (`reserve`): the deletion a
   * key belongs to. Absent for seeded keys and for slots taken before it
   * was recorded: those belong to every deletion (a dataset's users are at
   * version 0, and a key older than this field predates any re-creation).
   */
  versions?: Record<string, number>;
}

export interface SlotLimits {
  maxActive: number;
  maxCreatesPerDay: number;
}

export const DEFAULT_LIMITS: SlotLimits = { maxActive: MAX_ACTIVE_KEYS, maxCreatesPerDay: MAX_CREATES_PER_DAY };

export type SlotRefusal = 'LIMIT_REACHED' | 'CREATE_LIMIT' | 'USER_GONE';
export type Reservation = { slots: Slots } | { already: true } | { refused: SlotRefusal };

export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** Takes a slot for `keyId`, made for the user as read at `userVersion`. */
export function reserve(s: Slots, keyId: string, at: Date, userVersion: number, limits: SlotLimits = DEFAULT_LIMITS): Reservation {
  if (keyId in s.holders) return { already: true };
  if (s.closedVersion !== undefined && userVersion <= s.closedVersion) return { refused: 'USER_GONE' };
  if (Object.keys(s.holders).length >= limits.maxActive) return { refused: 'LIMIT_REACHED' };
  // Never a day older than the stored one: a create that read its clock before 00:00 UTC and lands after the new day's
  // first create counts against the new day (moving the day back would start the new day's count again from zero).
  const ownDay = utcDay(at);
  const day = s.day !== undefined && s.day > ownDay ? s.day : ownDay;
  const created = s.day === day ? (s.created ?? 0) : 0;
  if (created >= limits.maxCreatesPerDay) return { refused: 'CREATE_LIMIT' };
  return { slots: { ...s, holders: { ...s.holders, [keyId]: at.toISOString() }, versions: { ...s.versions, [keyId]: userVersion }, day, created: created + 1 } };
}

/** Gives `keyId`'s slot back; null when it holds none (given back already, or never taken). */
export function release(s: Slots, keyId: string): Slots | null {
  if (!(keyId in s.holders)) return null;
  const { [keyId]: _gone, ...holders } = s.holders;
  const { [keyId]: _version, ...versions } = s.versions ?? {};
  return { ...s, holders, ...(s.versions ? { versions } : {}) };
}

/** Whether a key made for the user as read at `userVersion` (undefined: unknown, see Slots.versions) belongs to the deletion at `version`. */
export const madeBefore = (userVersion: number | undefined, version: number): boolean => userVersion === undefined || userVersion <= version;

/** The holders a deletion at `version` retires: those whose create read the user at that version or before. */
export function closableHolders(s: Slots, version: number): string[] {
  return Object.keys(s.holders).filter((k) => madeBefore(s.versions?.[k], version));
}

/**
 * Closes the slots at a deletion's version; null when already closed at it
 * or later. The day and its count stay: the same user id brought back the
 * same day (by a newer upsert or a resync) goes on from that count.
 */
export function close(s: Slots, version: number): Slots | null {
  if (s.closedVersion !== undefined && s.closedVersion >= version) return null;
  return { ...s, closedVersion: version };
}

/** Slots for keys seeded from a dataset (a load or a resync): no limit, no daily count; null when all are held. */
export function adopt(s: Slots, keyIds: readonly string[], at: Date): Slots | null {
  const missing = keyIds.filter((k) => !(k in s.holders));
  if (!missing.length) return null;
  return { ...s, holders: { ...s.holders, ...Object.fromEntries(missing.map((k) => [k, at.toISOString()])) } };
}

/** Holders whose create may have died (older than STALE_CREATE_MS): the ones worth checking before refusing a create. */
export function staleHolders(s: Slots, now: Date): string[] {
  return Object.entries(s.holders)
    .filter(([, at]) => now.getTime() - Date.parse(at) >= STALE_CREATE_MS)
    .map(([k]) => k);
}

/**
 * Characters a key name may not hold: C0/C1 controls, unpaired surrogates
 * and the bidirectional formatting characters (Trojan-Source style reordering
 * in the web product's list, logs or a terminal).
 */
const FORBIDDEN_IN_NAME = /[\p{Cc}\p{Cs}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/** A key name as stored (trimmed), or why it is refused. */
export function checkKeyName(raw: string): { ok: true; name: string } | { ok: false; message: string } {
  const name = raw.trim();
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return { ok: false, message: `name must be 1-${MAX_NAME_LENGTH} characters` };
  const bad = FORBIDDEN_IN_NAME.exec(name);
  if (bad) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    return { ok: false, message: `name must not contain control or bidirectional formatting characters (U+${code} at position ${bad.index + 1})` };
  }
  return { ok: true, name };
}
