/**
 * The changes feeds' cursor keys in Lambda (lambdas/core/feed-cursor.ts):
 * the stack's secret in Secrets Manager, read once per container, its current
 * version and, when there is one, the previous (cursors signed before a
 * rotation stay valid for their lifetime), and read again when a cursor
 * matches neither, at most once every five minutes (this container started
 * before a rotation; a flood of forged cursors costs one read per window).
 * Only the feed functions' roles may read the secret, and only they have its
 * ARN (lib/route-function.ts).
 */
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { systemClock, type Clock } from '../core/clock.js';
import type { CursorKeyring } from '../core/feed-cursor.js';

const REFRESH_INTERVAL_MS = 5 * 60_000;

export function secretsManagerKeyring(secretId: string, client: Pick<SecretsManagerClient, 'send'> = new SecretsManagerClient({}), clock: Clock = systemClock): CursorKeyring {
  let loaded: Promise<{ signing: Uint8Array; accepted: Uint8Array[] }> | undefined;
  let loadedAt = 0;
  const version = async (stage: 'AWSCURRENT' | 'AWSPREVIOUS'): Promise<Uint8Array | undefined> => {
    try {
      const out = await client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: stage }));
      return out.SecretString ? Buffer.from(out.SecretString, 'utf8') : undefined;
    } catch (error) {
      // A secret never rotated has no previous version.
      if (stage === 'AWSPREVIOUS' && error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  };
  const load = () => {
    loadedAt = clock().getTime();
    const attempt = (async () => {
      const [current, previous] = await Promise.all([version('AWSCURRENT'), version('AWSPREVIOUS')]);
      if (!current) throw new Error('the cursor key secret has no current value');
      return { signing: current, accepted: previous ? [current, previous] : [current] };
    })();
    // A failed read is not kept: the next request reads again.
    attempt.catch(() => (loaded = undefined));
    return attempt;
  };
  return {
    keys: () => (loaded ??= load()),
    async refresh() {
      if (loaded && clock().getTime() - loadedAt < REFRESH_INTERVAL_MS) return false;
      const before = loaded ? (await loaded).accepted : [];
      const after = (await (loaded = load())).accepted;
      return after.length !== before.length || after.some((k, i) => !Buffer.from(k).equals(Buffer.from(before[i]!)));
    },
  };
}

/** Where no cursor key is configured (every function but the feeds'): a feed cannot run there. */
export const noKeyring: CursorKeyring = {
  keys: () => Promise.reject(new Error('no cursor key: this function has no CURSOR_SECRET_ARN')),
  refresh: async () => false,
};
