/**
 * What the webhook properties found (test/integration/changes-feed.property.test.ts
 * and the schedule explorations, with test/support/webhook-world.ts), each as
 * the fixed schedule that broke and its rule, on the real table and engine.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Change } from '../../lambdas/core/changes.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import type { Dataset, SourceEvent } from '../../lambdas/core/dataset.js';
import { ChangeApplier } from '../../lambdas/store/changes/applier.js';
import { FEED_NOW as NOW } from '../support/feed-consumer.js';
import { useFileStore } from '../support/store.js';
import { OWNER, expectReceiversMatch, withHookOwners } from '../support/webhook-follow.js';
import { WebhookWorld, type Behaviour, type Hook } from '../support/webhook-world.js';

const store = useFileStore({ inProcess: true, direct: true });
const clock = fixedClock(NOW.toISOString());
const gig: SourceEvent = {
  id: 'evt_gig',
  creator_id: 'usr_ann',
  title: 'Gig',
  start_date: '2026-12-31T23:30:00.000Z',
  timezone: 'UTC',
  status: 'published',
  visibility: 'public',
  created_at: '2026-11-01T00:00:00.000Z',
};
const d0: Dataset = { users: [{ id: 'usr_ann', username: 'ann' }], events: [gig], rsvps: [] };

let table: string;
let world: WebhookWorld;
beforeEach(async () => {
  table = await store.loaded('found', withHookOwners(d0));
  world = new WebhookWorld({ newClient: () => store.newClient(), table, start: NOW });
});
/** The world again, with its own faults. */
const worldWith = (opts: Partial<ConstructorParameters<typeof WebhookWorld>[0]>) => {
  world.close();
  world = new WebhookWorld({ newClient: () => store.newClient(), table, start: NOW, ...opts });
};
afterEach(() => world.close());

/** A change applied by the change path, its writes on the world's stream. */
async function apply(change: Change): Promise<void> {
  const client = world.watch(store.newClient());
  try {
    await new ChangeApplier(client, table, { clock }).apply(change);
  } finally {
    client.destroy();
  }
}

const hostHook = async (script: Behaviour[]): Promise<Hook> => (await world.create(OWNER.userId, OWNER.keyId, { type: 'host', userId: 'usr_ann' }, 'host:usr_ann', 'next', script))!;

describe('webhooks: schedules the properties found', () => {
  it('a webhook disabled while a delivery was in flight resumes that delivery held to its page: a later change comes under a new webhook-id, so a receiver keeping only the first of an id drops a deleted event too', async () => {
    // The receiver takes the first send and the delivery function dies before recording it; the retry it answers 410.
    const hook = await hostHook(['crash', 'gone']);
    await apply({ type: 'event.upserted', version: 1, event: { ...gig, title: 'Gig, moved on' } });
    await world.step();
    expect(hook.log.map((l) => l.ids)).toEqual([['+evt_gig']]);
    await apply({ type: 'event.deleted', version: 2, event_id: 'evt_gig' });
    await world.drain();
    // The retry (the same delivery) says the gig is gone now, and is answered 410: the webhook is disabled, and its owner
    // resumes it. The delivery, sent again after the resume, is held to its page; the deletion's entry is a delivery of its own.
    const ids = hook.log.map((l) => l.id);
    expect(hook.log.map((l) => l.ids)).toEqual([['+evt_gig'], ['-evt_gig'], ['-evt_gig'], ['-evt_gig']]);
    expect(ids.slice(0, 3)).toEqual([ids[0], ids[0], ids[0]]);
    expect(ids[3]).not.toBe(ids[0]);
    await expectReceiversMatch(world, store.client, table);
    expect(world.counts.resumed).toBe(1);
  });

  it('a wake-up delivered twice at once (a visibility timeout passed while the first run went on): the second run sends nothing while the first waits for its answer, and the delivery is made once its lease passes', async () => {
    worldWith({ dups: [true] });
    // The receiver is slow and its answer never comes within the deadline; then it answers.
    const hook = await hostHook(['timeout']);
    await apply({ type: 'event.upserted', version: 1, event: { ...gig, title: 'Gig, moved on' } });
    await world.step();
    expect({ runs: world.counts.runs, sends: hook.sends, violations: world.receivers.violations }).toEqual({ runs: 2, sends: 1, violations: [] });
    await world.drain();
    expect(hook.log.map((l) => l.ids)).toEqual([['+evt_gig'], ['+evt_gig']]);
    await expectReceiversMatch(world, store.client, table);
  });
});
