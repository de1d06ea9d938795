/**
 * A page's reads beside the cursor keys' (PRODUCT P16, P17: at most two
 * round trips after the authorizer, on every request): the keys are never
 * read before the data, only beside it.
 *
 * - A page from a cursor: judged by the keys held (no I/O) and read at once
 *   when they can judge it; when they cannot (a container's first page, a
 *   cursor of a key newer than those held) and a read of the keys is under
 *   way, the page's own reads go beside it and are dropped unless the keys
 *   read say the cursor is genuine. So no data is read for a cursor the keys
 *   held call forged, and a cursor that names a key nobody holds costs a data
 *   read only when it also costs a key read: at most one per ten seconds a
 *   container (lambdas/http/cursor-keys.ts). The caller's cursor passed its
 *   structural checks first (its bounds are those of the keys it is read by).
 * - A page from no cursor: its keys are read beside its reads (warmKeys) and
 *   waited for only when it signs its next cursor.
 * - Keys past their age still judge (a replaced key is accepted for a
 *   cursor's lifetime); the read they are due goes beside the page, and
 *   signing waits for it, so the next cursor is signed with the keys read.
 */
import { isGenuine, verdict, type CursorKeyring, type SealedToken } from './feed-cursor.js';

/**
 * `read()`'s answer if one of the keyring's keys signed the token, else
 * null (without reading, when the keys held say so; otherwise what it read
 * is dropped, and so is its error). A failure to read the keys (none held:
 * a 503) is thrown as keys() throws it.
 */
export async function readIfGenuine<T>(sealed: SealedToken, keyring: CursorKeyring, read: () => Promise<T>): Promise<{ value: T } | null> {
  const held = keyring.held?.();
  if (!held) return (await isGenuine(sealed, keyring)) ? { value: await read() } : null;
  const now = held.keys ? verdict(sealed, held.keys.accepted) : 'unknown';
  if (now === 'forged') return null;
  if (now === 'signed') return { value: await read() };
  // None held yet, or a key newer than these: the keys are read again (at most every few seconds).
  const refreshed = keyring.refresh();
  if (!keyring.held?.().reading) {
    await refreshed;
    return (await isGenuine(sealed, keyring)) ? { value: await read() } : null;
  }
  const [genuine, answer] = await Promise.allSettled([refreshed.then(() => isGenuine(sealed, keyring)), read()]);
  if (genuine.status === 'rejected') throw genuine.reason;
  if (!genuine.value) return null;
  if (answer.status === 'rejected') throw answer.reason;
  return { value: answer.value };
}

/** Starts a read of the keys that is due (a container's first page, keys past their age) beside the page's reads; signing waits for it. */
export function warmKeys(keyring: CursorKeyring): void {
  if (keyring.held) keyring.held();
  else keyring.keys().catch(() => undefined);
}
