/**
 * The explorations' fast path (test/support/direct-dynalite.ts) is held to
 * the SDK's: every schedule of one scenario at the default depth (every shape:
 * orders, crashes, time limits, interleavings, lost responses, duplicates at
 * once) runs twice on the same in-process dynalite, once with the appliers
 * and the checks calling through the SDK's whole stack (the lost responses
 * retried by its standard strategy) and once straight to the handler, and
 * both make the same calls, in the same order, and get the same answers and
 * refusals (so the same writes, whose effects every later read and the
final check see). Random ids (a feed
 * entry's writer) and the request metadata are the only things compared
 * loosely.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { fixedClock } from '../../lambdas/core/clock.js';
import { createDocumentClient } from '../../lambdas/store/table/client.js';
import { directClient } from '../support/direct-dynalite.js';
import { startInProcessDynalite, type InProcessStore } from '../support/in-process-dynalite.js';
import { explore, userPairs } from '../support/schedule-catalog.js';
import { canonical } from '../support/read-model.js';
import { Explorer, type Recording } from '../support/schedules.js';

const clock = fixedClock('2026-11-21T12:00:00.000Z');
let store: InProcessStore;
beforeAll(async () => {
  store = await startInProcessDynalite();
});
afterAll(async () => {
  await store?.close();
});

/**
 * A recording as text: random ids blanked, maps' keys sorted (the SDK orders an answer's fields by its schema, the
 * store's JSON by its own), BatchGetItem's items by key (DynamoDB returns them in no set order), refusals by name and
 * message.
 */
function text(recording: Recording): string[] {
  const byKey = (a: Record<string, unknown>, b: Record<string, unknown>) => `${String(a.pk)}|${String(a.sk)}`.localeCompare(`${String(b.pk)}|${String(b.sk)}`);
  const blank = (value: unknown, command?: string) =>
    JSON.stringify(canonical(value), (k, v: unknown) => (command === 'BatchGetItemCommand' && k !== '' && Array.isArray(v) ? [...(v as Record<string, unknown>[])].sort(byKey) : v)).replace(
      /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
      'UUID',
    );
  return recording.calls.map((c) => `${c.role} ${c.slot} ${c.command} ${c.input} -> ${c.refused ? `refused ${(c.refused as Error).name}: ${(c.refused as Error).message}` : blank(c.output, c.command)}`);
}

async function traced(transport: 'sdk' | 'direct'): Promise<Map<string, string[]>> {
  const client = transport === 'sdk' ? createDocumentClient(store) : directClient(store.call);
  const explorer = new Explorer(store, client, clock, true, transport);
  const seen = new Map<string, string[]>();
  explorer.trace = (schedule, recording) => void seen.set(schedule, text(recording));
  try {
    await explore(explorer, userPairs.find((s) => s.name === 'rename vs RSVP')!);
  } finally {
    explorer.close();
    client.destroy();
  }
  return seen;
}

it('the direct path and the SDK make the same calls and get the same answers, schedule by schedule', async () => {
  const sdk = await traced('sdk');
  const direct = await traced('direct');
  expect(sdk.size).toBeGreaterThan(100);
  expect([...direct.keys()]).toEqual([...sdk.keys()]);
  for (const [schedule, calls] of sdk) expect({ schedule, calls: direct.get(schedule) }).toEqual({ schedule, calls });
  // The shapes that matter most for the transport are there: refusals, and lost responses retried.
  const all = [...sdk.values()].flat();
  expect(all.some((c) => c.includes('refused ConditionalCheckFailedException'))).toBe(true);
  expect([...sdk.keys()].some((s) => s.includes('~'))).toBe(true);
  // Every default schedule twice, once through the SDK: about 100 s alone here, more beside the other explorations.
}, 300_000);
