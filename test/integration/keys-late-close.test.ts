/**
 * Review fault r6: a deletion's close that runs late revokes (and erases) the
 * keys the user made after being re-created.
 *
 * closeUserKeys (lambdas/store/keys/user-keys.ts) is called with the
 * deletion's version and closes "every key of the user" it finds:
 *
 *   const holding = await store.closeSlots(userId, version);   // the holders, whether or not it closed anything
 *   const ids = new Set([...holding, ...(await store.records(userId)).map((r) => r.key_id)]);
 *   for (const keyId of ids) await store.retire(userId, keyId, { unlessUsable: false, by: 'user deleted' });
 *
 * closeSlots answers the slot holders even when the slots are already closed
 * at that version or later (close() answers null, the step still answers
 * every holder), and nothing checks that the user is still deleted at that
 * version, or that a key was made for the user before it: the slots do not
 * record the user version a key was made for. The rules say otherwise
 * (lambdas/core/key-rules.ts: "a create that read the user before it is
 * refused, one that read the user re-created since is not").
 *
 * How it runs late: two deliveries of one user meet, as the write side allows
 * (records of one entity are applied at once, docs/data-model.md). The
 * deletion's applier settles its tombstone and invokes the close task; that
 * invoke is throttled (TooManyRequests) and the SDK retries it after its
 * backoff. Meanwhile the re-creation's applier finds the tombstone pending,
 * settles it itself (its own close goes through), writes the re-created user,
 * and the web product makes her a key. Then the first applier's retried close
 * runs: it retires the new key, writes a `Key revoked ... by: user deleted`
 * line for a live user, and erases it (it is no longer even listed).
 *
 * Here the delay is a gate in front of the first applier's close, standing
 * for the SDK's backed-off retry of its throttled invoke.
 *
 * Adopted from the review's reproducer (issue 57, r6). One change of
 * interface: a close is now bounded per call and answers whether it is done
 * (lambdas/store/keys/user-keys.ts), so the gated closer hands that answer
 * on. The fix: the close acts only while the user is still deleted at its
 * version, and only on keys made for the user as it was then (the slot and
 * the record remember the user version a create read).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KeyManager } from '../../lambdas/key-admin/key-manager.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { userKeysCloser } from '../../lambdas/store/keys/user-keys.js';
import { DynamoRepository } from '../../lambdas/store/reads/repository.js';
import { directClient } from '../support/direct-dynalite.js';
import type { InProcessStore } from '../support/in-process-dynalite.js';
import { demoStore } from '../support/invocation-budget.js';
import { authenticates } from '../support/keys.js';

const TABLE = 'late-close';
const T = '2026-11-21T12:00:00.000Z';
const clock = () => new Date(T);

let store: InProcessStore;
beforeAll(async () => {
  store = await demoStore(TABLE);
});
afterAll(async () => store?.close());

describe('a user deleted and re-created, the deletion\'s close retried after the re-creation', () => {
  it("leaves the re-created user's new key working", async () => {
    const client = directClient(store.call);
    const closer = userKeysCloser(client, TABLE, { clock });
    // The first delivery's close: its invoke throttled, the SDK's retry held until the gate opens.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let firstCloseStarted!: () => void;
    const started = new Promise<void>((resolve) => (firstCloseStarted = resolve));
    const deletion = new ChangeApplier(client, TABLE, {
      clock,
      closeUserKeys: async (userId, version) => {
        firstCloseStarted();
        await gate;
        return closer(userId, version);
      },
    });
    const deleting = deletion.apply({ type: 'user.deleted', version: 1000, user_id: 'usr_alice' });
    await started;

    // The re-creation, delivered meanwhile: it settles the pending deletion itself (its close goes through), then writes her back.
    const recreated = await new ChangeApplier(client, TABLE, { clock, closeUserKeys: closer }).apply({ type: 'user.upserted', version: 1001, user: { id: 'usr_alice', username: 'alice' } } as never);
    expect(recreated.result).toBe('applied');
    // The web product makes the re-created user a key; it works.
    const mgr = new KeyManager(client, TABLE, { clock });
    const { key, info } = await mgr.create({ userId: 'usr_alice', name: 'After sign-up' });
    const repository = new DynamoRepository(client, TABLE);
    expect(await authenticates(repository, key)).toBe(true);

    // The first delivery's retried close now runs, and its applier finishes.
    open();
    await deleting;
    expect({
      newKey: (await authenticates(repository, key)) ? 'authenticates' : '401',
      listed: (await mgr.listAll('usr_alice')).map((k) => ({ keyId: k.keyId, revoked: k.revoked })),
    }).toEqual({ newKey: 'authenticates', listed: [{ keyId: info.keyId, revoked: false }] });
  });
});
