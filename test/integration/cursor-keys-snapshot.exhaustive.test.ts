/**
 * A read of the cursor keys is a snapshot (issue 57 item 5, the reads half;
 * r5's class): whatever an operator does to the secret while a function
 * reads it, the keys the function holds after the read are those of one
 * moment, before the operation or after it, never a mix (a mix is what
 * dropped the key of a month's cursors: r5-rotation-read-race.test.ts).
 *
 * Exhaustive: from every state a rotation leaves the secret in (a first
 * value; rotated once or twice in one step; a value staged; staged and
 * promoted, AWSPENDING left on it as AWS leaves it; staged over a rotation),
 * every operation docs/deploy.md names (a one-step put-secret-value, a
 * staging, a promotion), landing before each call of the read is answered
 * (and after the last), by a function that holds no key yet and by one
 * whose keys are due again (the values of versions it read before are not
 * read again, so its read is shorter). The stand-in is test/support/
 * secrets-stub.ts's model of the secret's versions, answered in-process.
 */
import { describe, expect, it } from '@jest/globals';
import { DescribeSecretCommand, GetSecretValueCommand, ResourceNotFoundException, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CursorKeys } from '../../lambdas/core/feed-cursor.js';
import { KEYS_MAX_AGE_MS, secretsManagerKeyring } from '../../lambdas/http/cursor-keys.js';
import { SecretVersions } from '../support/secrets-stub.js';

type Operation = 'rotate' | 'stage' | 'promote';
/** How the secret got to the state a read starts from. */
const HISTORIES: Operation[][] = [[], ['rotate'], ['rotate', 'rotate'], ['stage'], ['rotate', 'stage'], ['stage', 'promote'], ['rotate', 'stage', 'promote'], ['stage', 'promote', 'rotate']];

let values = 0;
function apply(secret: SecretVersions, op: Operation): void {
  if (op === 'rotate') secret.add(`key-${values++}`, ['AWSCURRENT']);
  else if (op === 'stage') secret.add(`key-${values++}`, ['AWSPENDING']);
  else secret.move('AWSCURRENT', secret.holder('AWSPENDING')!);
}

/** The keys a function should hold in this state: the current one signs; current, pending and previous are accepted. */
function keysOf(secret: SecretVersions): string {
  const value = (stage: string) => {
    const id = secret.holder(stage);
    return id === undefined ? undefined : secret.value({ VersionId: id })!.value;
  };
  const accepted = [...new Set(['AWSCURRENT', 'AWSPENDING', 'AWSPREVIOUS'].map(value).filter((v) => v !== undefined))].sort();
  return `${value('AWSCURRENT')} | ${accepted.join(' ')}`;
}
const shown = (keys: CursorKeys) => `${Buffer.from(keys.signing).toString()} | ${[...new Set(keys.accepted.map((k) => Buffer.from(k).toString()))].sort().join(' ')}`;

/** The secret answered in-process; `landBefore` calls in, `op` lands (before that call is answered). */
function standIn(secret: SecretVersions) {
  const state = { calls: 0, landBefore: Number.POSITIVE_INFINITY, op: undefined as Operation | undefined, landed: false };
  const send = async (command: DescribeSecretCommand | GetSecretValueCommand) => {
    await Promise.resolve();
    if (state.op && !state.landed && state.calls === state.landBefore) {
      apply(secret, state.op);
      state.landed = true;
    }
    state.calls++;
    if (command instanceof DescribeSecretCommand) return { VersionIdsToStages: secret.describe() };
    const found = secret.value(command.input);
    if (!found) throw new ResourceNotFoundException({ message: 'no such version', $metadata: {} });
    return { VersionId: found.id, SecretString: found.value, VersionStages: found.stages };
  };
  return { state, client: { send } as unknown as Pick<SecretsManagerClient, 'send'> };
}

describe('a read of the cursor keys, an operation landing before any of its calls', () => {
  it('holds the keys of the state before the operation or after it, never a mix', async () => {
    const outcomes: string[] = [];
    let schedules = 0;
    for (const history of HISTORIES) {
      for (const op of ['rotate', 'stage', 'promote'] as const) {
        for (const warm of [false, true]) {
          for (let landBefore = 0; ; landBefore++) {
            const secret = new SecretVersions(`key-${values++}`);
            for (const h of history) apply(secret, h);
            if (op === 'promote' && secret.holder('AWSPENDING') === undefined) break;
            const sm = standIn(secret);
            let now = Date.parse('2026-12-01T00:00:00.000Z');
            const keyring = secretsManagerKeyring('arn:aws:secretsmanager:eu-west-1:123456789012:secret:CursorKey-AbCdEf', sm.client, () => new Date(now));
            if (warm) {
              await keyring.keys();
              now += KEYS_MAX_AGE_MS;
            }
            const before = keysOf(secret);
            Object.assign(sm.state, { calls: 0, landBefore, op });
            const held = shown(await keyring.keys());
            if (!sm.state.landed) apply(secret, op);
            const after = keysOf(secret);
            schedules++;
            expect({ history, op, warm, landBefore, held, oneMoment: held === before || held === after }).toEqual({ history, op, warm, landBefore, held, oneMoment: true });
            outcomes.push(held === before ? 'before' : 'after');
            // Past the read's last call: the operation landed after it.
            if (!sm.state.landed) break;
          }
        }
      }
    }
    // Both outcomes occur: operations land inside reads, not only around them.
    expect(new Set(outcomes)).toEqual(new Set(['before', 'after']));
    expect(schedules).toBe(127);
  });
});
