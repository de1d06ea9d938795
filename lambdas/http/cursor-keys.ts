/**
 * The changes feeds' cursor keys in Lambda (lambdas/core/feed-cursor.ts):
 * the stack's secret in Secrets Manager, read once per container: its
 * current version signs; the previous one (cursors signed before a rotation
 * stay valid for their lifetime) and a pending one (a rotation staged, not
 * yet promoted) are accepted. The keys are read again when a cursor matches
 * none of them, at most once every ten seconds (a container that started
 * before a rotation meets a cursor of the new key; a flood of forged
 * cursors costs one read per ten seconds per container). A rotation staged
 * as AWSPENDING a minute before it is promoted is then never refused
 * anywhere (docs/deploy.md). Only the feed functions' roles may read the
 * secret, and only they have its ARN (lib/route-function.ts).
 */
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { systemClock, type Clock } from '../core/clock.js';
import type { CursorKeyring } from '../core/feed-cursor.js';

/** The least time between two reads of the keys by one container. */
export const REFRESH_INTERVAL_MS = 10_000;

export function secretsManagerKeyring(secretId: string, client: Pick<SecretsManagerClient, 'send'> = new SecretsManagerClient({}), clock: Clock = systemClock): CursorKeyring {
  let loaded: Promise<{ signing: Uint8Array; accepted: Uint8Array[] }> | undefined;
  let loadedAt = 0;
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
  const load = () => {
    loadedAt = clock().getTime();
    const attempt = (async () => {
      const [current, previous, pending] = await Promise.all([version('AWSCURRENT'), version('AWSPREVIOUS'), version('AWSPENDING')]);
      if (!current) throw new Error('the cursor key secret has no current value');
      return { signing: current, accepted: [current, ...(pending ? [pending] : []), ...(previous ? [previous] : [])] };
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
