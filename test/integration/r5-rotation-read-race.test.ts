/**
 * Issue 57 r5 (the review's reproducer, adopted): a read of the cursor keys
 * that straddled a promotion dropped the key that signed the cursors
 * consumers hold, and the function answered them 400 for up to ten seconds.
 *
 * secretsManagerKeyring (lambdas/http/cursor-keys.ts) read the secret's three
 * stages with three GetSecretValue calls at once:
 *
 *   Promise.all([version('AWSCURRENT'), version('AWSPREVIOUS'), version('AWSPENDING')])
 *
 * Secrets Manager answers each on its own; nothing makes the three a
 * snapshot. A promotion (update-secret-version-stage: AWSCURRENT moves to the
 * pending version, the old current becomes AWSPREVIOUS) that lands while they
 * are in flight can be seen by AWSCURRENT and not by AWSPREVIOUS: the function
 * then held {new (current), new (pending), the key before the old one
 * (previous)}, and the old current key, the one every cursor given in the
 * last month was signed with, was held by none. Its cursors named a key the
 * function did not hold, so it read again, but at most once every ten
 * seconds (REFRESH_INTERVAL_MS, counted from the read that just ran): every
 * such cursor was answered 400 "Invalid cursor" until then, which tells the
 * consumer to drop it and start again.
 *
 * Now a read learns which version holds which stage from one answer
 * (DescribeSecret's VersionIdsToStages), then reads the values of versions
 * it has not seen (a version's value never changes). The stand-in below
 * models both calls (the fix changed which calls a read makes, so the
 * review's stand-in of GetSecretValue alone became this one), and the
 * promotion still lands in the middle of the read: among the stages' calls
 * where the review put it, right after the answer of the stages otherwise. Every operation at every point of a read:
 * cursor-keys-snapshot.exhaustive.test.ts.
 *
 * docs/deploy.md, of the two-step rotation: "with the minute between the
 * steps, no function refuses a cursor a consumer holds".
 */
import { describe, expect, it } from '@jest/globals';
import { DescribeSecretCommand, GetSecretValueCommand, ResourceNotFoundException, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { everyShardAt, openCursor, parseCursor, sealCursor, staticKeyring, type FeedCursor } from '../../lambdas/core/feed-cursor.js';
import { KEYS_MAX_AGE_MS, secretsManagerKeyring } from '../../lambdas/http/cursor-keys.js';

/**
 * Secrets Manager's versions and stages, answered one call at a time
 * (DescribeSecret, GetSecretValue by version id or stage); `promoteDuring`
 * makes the next promotion land while a read's calls are in flight.
 */
function secretsManager(initial: { current: string; previous?: string; pending?: string }) {
  // Version ids are the values' names here; each stage on one version at a time.
  const stages: Record<string, string | undefined> = { AWSCURRENT: initial.current, AWSPREVIOUS: initial.previous, AWSPENDING: initial.pending };
  const state = { promoteDuring: false };
  const promote = () => {
    // update-secret-version-stage --version-stage AWSCURRENT --move-to-version-id PENDING: AWSPENDING stays on it.
    stages.AWSPREVIOUS = stages.AWSCURRENT;
    stages.AWSCURRENT = stages.AWSPENDING!;
  };
  const answer = (command: DescribeSecretCommand | GetSecretValueCommand) => {
    if (command instanceof DescribeSecretCommand) {
      const versions: Record<string, string[]> = {};
      for (const [stage, id] of Object.entries(stages)) if (id !== undefined) (versions[id] ??= []).push(stage);
      return { VersionIdsToStages: versions };
    }
    const id = command.input.VersionId ?? stages[command.input.VersionStage ?? 'AWSCURRENT'];
    if (id === undefined || !Object.values(stages).includes(id)) throw new ResourceNotFoundException({ message: `no version ${String(id)}`, $metadata: {} });
    return { SecretString: id, VersionId: id, VersionStages: Object.keys(stages).filter((s) => stages[s] === id) };
  };
  const send = async (command: DescribeSecretCommand | GetSecretValueCommand) => {
    if (state.promoteDuring && command instanceof GetSecretValueCommand && command.input.VersionStage === 'AWSCURRENT') {
      // A read of the stages one call each: the other calls are answered first (a few milliseconds apart on the wire)...
      await new Promise((resolve) => setImmediate(resolve));
      // ...then the operator's update-secret-version-stage lands, then this call is answered.
      promote();
      state.promoteDuring = false;
    }
    const answered = answer(command);
    if (state.promoteDuring && command instanceof DescribeSecretCommand) {
      // A read from one answer of the stages: the promotion lands right after it, before the values are read.
      promote();
      state.promoteDuring = false;
    }
    return answered;
  };
  return { state, client: { send } as unknown as Pick<SecretsManagerClient, 'send'> };
}

describe("a function's read of the cursor keys that a promotion lands in", () => {
  it('still accepts the cursors signed with the key that was current until then', async () => {
    let now = Date.parse('2026-12-01T00:00:00.000Z');
    const clock = () => new Date(now);
    // Rotated a month ago (key-zero -> key-one); key-two staged a minute ago, as docs/deploy.md says.
    const sm = secretsManager({ current: 'key-one', previous: 'key-zero', pending: 'key-two' });
    const fn = secretsManagerKeyring('arn:aws:secretsmanager:eu-west-1:123456789012:secret:CursorKey-AbCdEf', sm.client, clock);
    expect(Buffer.from((await fn.keys()).signing).toString()).toBe('key-one');

    // A consumer's cursor, given by any function a moment ago: signed with key-one, the key of the last month.
    const given: FeedCursor = { scope: 'EVENTS', mode: 'entries', position: everyShardAt(42), after: '', asOf: Math.floor(now / 1000) - 3_600 };
    const held = await sealCursor(given, staticKeyring(Buffer.from('key-one')));

    // Five minutes on, the function reads the keys again at its next request, and the promotion lands during that read.
    now += KEYS_MAX_AGE_MS;
    sm.state.promoteDuring = true;
    await fn.keys();
    const accepted = (await fn.keys()).accepted.map((k) => Buffer.from(k).toString());

    // The consumer's next page, a second later.
    now += 1_000;
    expect({ accepted: accepted.includes('key-one'), cursor: await openCursor(parseCursor(held)!, fn) }).toEqual({ accepted: true, cursor: given });
  });
});
