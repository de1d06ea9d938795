/**
 * The changes feeds' cursor keys in Lambda (lambdas/core/feed-cursor.ts):
 * the stack's secret in Secrets Manager. Its current version signs; the
 * previous one (cursors signed before a rotation stay valid for their
 * lifetime) and a pending one (a rotation staged, not yet promoted) are
 * accepted.
 *
 * A container reads the secret at its first feed request, then again:
 * - at the first request once the keys it holds are KEYS_MAX_AGE_MS old.
 *   Reading only on a cursor it cannot judge is not enough: a container
 *   that read the keys between a staging and its promotion accepts the new
 *   key already, so no cursor ever makes it read again, and it would sign
 *   with the replaced key for its whole life, past that key's retirement at
 *   the next rotation. So a container signs with a replaced key for at most
 *   KEYS_MAX_AGE_MS after a promotion, which the interval between two
 *   rotations allows for (docs/deploy.md).
 * - when a cursor names a key it does not hold, at most once every
 *   REFRESH_INTERVAL_MS: a container that read the keys before a staging
 *   meets a cursor of the new key, and a flood of forged cursors costs one
 *   read per ten seconds per container.
 * A failed read keeps the keys read before (still good) and is not tried
 * again for REFRESH_INTERVAL_MS: an outage of Secrets Manager costs one read
 * per ten seconds per container, not one per request, and a forged cursor is
 * still judged by the keys held. With no key read yet, keys() fails with a
 * 503 whose Retry-After is the time to the next read: clients retry with the
 * cursor they hold (a 400 would tell them to drop a good one, a start cannot
 * sign either, and a 500 would say the service is broken, not its secret
 * store out of reach).
 *
 * Only the feed functions' roles may read the secret, and only they have its
 * ARN (lib/route-function.ts).
 */
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { systemClock, type Clock } from '../core/clock.js';
import { ServiceBusyError } from '../core/errors.js';
import { CURSOR_KEYS_RETRY_SECONDS, type CursorKeyring, type CursorKeys } from '../core/feed-cursor.js';

/** The least time between two reads of the keys by one container (a cursor of an unknown key, a failed read). */
export const REFRESH_INTERVAL_MS = CURSOR_KEYS_RETRY_SECONDS * 1000;
/** The most time a container signs with the keys it read without reading them again (while it answers requests). */
export const KEYS_MAX_AGE_MS = 5 * 60_000;

const sameKeys = (a: readonly Uint8Array[], b: readonly Uint8Array[]): boolean => a.length === b.length && a.every((k, i) => Buffer.from(k).equals(Buffer.from(b[i]!)));

export function secretsManagerKeyring(
  secretId: string,
  client: Pick<SecretsManagerClient, 'send'> = new SecretsManagerClient({}),
  clock: Clock = systemClock,
  onReadFailure: (error: unknown) => void = () => {},
): CursorKeyring {
  let held: { keys: CursorKeys; readAt: number } | undefined;
  let triedAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<boolean> | undefined;
  const version = async (stage: 'AWSCURRENT' | 'AWSPREVIOUS' | 'AWSPENDING'): Promise<Uint8Array | undefined> => {
    try {
      const out = await client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: stage }));
      return out.SecretString ? Buffer.from(out.SecretString, 'utf8') : undefined;
    } catch (error) {
      // A secret never rotated has no previous version, and one not being rotated no pending one.
      if (stage !== 'AWSCURRENT' && error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  };
  /** Reads the keys (one read at a time); answers whether they differ from those held. Never rejects. */
  const read = (): Promise<boolean> =>
    (reading ??= (async () => {
      const startedAt = (triedAt = clock().getTime());
      try {
        const [current, previous, pending] = await Promise.all([version('AWSCURRENT'), version('AWSPREVIOUS'), version('AWSPENDING')]);
        if (!current) throw new Error('the cursor key secret has no current value');
        const keys: CursorKeys = { signing: current, accepted: [current, ...(pending ? [pending] : []), ...(previous ? [previous] : [])] };
        const changed = !held || !sameKeys(held.keys.accepted, keys.accepted);
        // Aged from the read's start: a promotion during the read is then within KEYS_MAX_AGE_MS of the next one.
        held = { keys, readAt: startedAt };
        return changed;
      } catch (error) {
        onReadFailure(error);
        return false;
      } finally {
        reading = undefined;
      }
    })());
  const mayRead = () => reading !== undefined || clock().getTime() - triedAt >= REFRESH_INTERVAL_MS;
  return {
    async keys() {
      if ((!held || clock().getTime() - held.readAt >= KEYS_MAX_AGE_MS) && mayRead()) await read();
      if (held) return held.keys;
      // The read failed (onReadFailure has logged why): the request is fine, the keys are out of reach until the next try.
      throw new ServiceBusyError((triedAt + REFRESH_INTERVAL_MS - clock().getTime()) / 1000);
    },
    refresh: () => (mayRead() ? read() : Promise.resolve(false)),
  };
}

/** Where no cursor key is configured (every function but the feeds'): a feed cannot run there. */
export const noKeyring: CursorKeyring = {
  keys: () => Promise.reject(new Error('no cursor key: this function has no CURSOR_SECRET_ARN')),
  refresh: async () => false,
};
