/**
 * The changes feeds' cursor keys in Lambda (lambdas/core/feed-cursor.ts):
 * the stack's secret in Secrets Manager. Its current version signs; the
 * previous one (cursors signed before a rotation stay valid for their
 * lifetime) and a pending one (a rotation staged, not yet promoted) are
 * accepted.
 *
 * A read is a snapshot: which version holds which stage from one answer
 * (DescribeSecret), then the values of the versions not read before
 * (snapshot, below). A container reads the secret at its first feed
 * request, then again:
 * - at the first request once the keys it holds are KEYS_MAX_AGE_MS old.
 *   Keys that old still judge cursors (held(): a replaced key is accepted
 *   for a cursor's lifetime), so that read goes beside the request's own
 *   (lambdas/core/cursor-reads.ts), and only signing (keys()) waits for it.
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
import { DescribeSecretCommand, GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { systemClock, type Clock } from '../core/clock.js';
import { ServiceBusyError } from '../core/errors.js';
import { CURSOR_KEYS_RETRY_SECONDS, type CursorKeyring, type CursorKeys } from '../core/feed-cursor.js';

/** The least time between two reads of the keys by one container (a cursor of an unknown key, a failed read). */
export const REFRESH_INTERVAL_MS = CURSOR_KEYS_RETRY_SECONDS * 1000;
/** The most time a container signs with the keys it read without reading them again (while it answers requests). */
export const KEYS_MAX_AGE_MS = 5 * 60_000;

/** The stages a function reads: the one it signs with, and those it accepts. */
const STAGES = ['AWSCURRENT', 'AWSPENDING', 'AWSPREVIOUS'] as const;

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
  /** Each version's value, once read: a version's value never changes, so a read fetches only versions it has not seen. */
  let values = new Map<string, Uint8Array>();
  const valueOf = async (versionId: string): Promise<[string, Uint8Array]> => {
    const known = values.get(versionId);
    if (known) return [versionId, known];
    const out = await client.send(new GetSecretValueCommand({ SecretId: secretId, VersionId: versionId }));
    if (!out.SecretString) throw new Error(`the cursor key secret's version ${versionId} has no string value`);
    return [versionId, Buffer.from(out.SecretString, 'utf8')];
  };
  /**
   * Which version holds which stage, from ONE answer (DescribeSecret's
   * VersionIdsToStages: every version's labels as they were when it was
   * read), then the values of the versions not seen before. Three
   * GetSecretValue calls, one a stage, were no snapshot: a promotion landing
   * between them (AWSCURRENT seen after it, AWSPREVIOUS before) left the
   * key every cursor of the last month was signed with in neither.
   */
  const snapshot = async (): Promise<CursorKeys> => {
    const described = await client.send(new DescribeSecretCommand({ SecretId: secretId }));
    const stages = Object.entries(described.VersionIdsToStages ?? {});
    const holding = (stage: string) => stages.find(([, labels]) => labels.includes(stage))?.[0];
    const [current, pending, previous] = STAGES.map(holding);
    if (!current) throw new Error('the cursor key secret has no current version');
    const wanted = [...new Set([current, pending, previous].filter((id): id is string => id !== undefined))];
    const read = new Map(await Promise.all(wanted.map(valueOf)));
    values = read;
    return { signing: read.get(current)!, accepted: wanted.map((id) => read.get(id)!) };
  };
  /** Reads the keys (one read at a time); answers whether they differ from those held. Never rejects. */
  const read = (): Promise<boolean> =>
    (reading ??= (async () => {
      const startedAt = (triedAt = clock().getTime());
      try {
        const keys = await snapshot();
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
  const due = () => (!held || clock().getTime() - held.readAt >= KEYS_MAX_AGE_MS) && mayRead();
  return {
    async keys() {
      if (due()) await read();
      if (held) return held.keys;
      // The read failed (onReadFailure has logged why): the request is fine, the keys are out of reach until the next try.
      throw new ServiceBusyError((triedAt + REFRESH_INTERVAL_MS - clock().getTime()) / 1000);
    },
    held() {
      // Keys past their age still judge a cursor (a key stays accepted for a cursor's lifetime after it is replaced):
      // the read they are due starts here, beside the caller's own reads, and signing (keys()) waits for it.
      if (due()) void read();
      return { keys: held?.keys, reading: reading !== undefined };
    },
    refresh: () => (mayRead() ? read() : Promise.resolve(false)),
    settled: async () => void (await reading),
  };
}

/** Where no cursor key is configured (every function but the feeds'): a feed cannot run there. */
export const noKeyring: CursorKeyring = {
  keys: () => Promise.reject(new Error('no cursor key: this function has no CURSOR_SECRET_ARN')),
  refresh: async () => false,
};
