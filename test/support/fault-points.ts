/**
 * Which calls of a change a fault sweep fails (FAULT_POINTS): the change-path
 * files that fail a change at each of its calls in turn
 * (feed-failed-writes.test.ts: a write failing without landing;
 * change-stream.property.test.ts: a crash right after a call).
 *
 * - `every` (the default, and the dynalite project's): each call, one run each.
 * - `first-of-each-kind`: the second store's share (dynamodb-local.env.ts):
 *   the first call of each kind (command, and the kinds of item key it
 *   names, "UpdateCommand EVENT/SEQ") and the last call. Every kind of call
 *   fails there too, in the change's own order, at a third to a half of the
 *   runs: the second store is there to catch where DynamoDB Local answers a
 *   call differently from dynalite, which the kind of call decides, not its
 *   position; dynalite runs every position.
 */
import { z } from 'zod';

export const FAULT_POINTS = z.enum(['every', 'first-of-each-kind']).default('every').parse(process.env.FAULT_POINTS || undefined);

/** A call's kind: its command and the kinds (the parts before `#`) of the item key it names, if it names one. */
export function callKind(command: string, input: Record<string, unknown>): string {
  const key = (input.Item ?? input.Key) as Record<string, unknown> | undefined;
  return key ? `${command} ${String(key.pk).split('#')[0]}/${String(key.sk).split('#')[0]}` : command;
}

/** The calls to fail, 1-based, of a change whose calls (when none fails) have these kinds, as FAULT_POINTS says. */
export function faultPoints(kinds: readonly string[]): number[] {
  const all = kinds.map((_, i) => i + 1);
  if (FAULT_POINTS === 'every') return all;
  return all.filter((n) => n === kinds.length || kinds.indexOf(kinds[n - 1]!) === n - 1);
}

/** The line a sweep prints: how many calls, of how many kinds, and which failed. */
export function faultPointsLine(what: string, calls: string, kinds: readonly string[], failed: readonly number[]): string {
  const kindCount = new Set(kinds).size;
  return FAULT_POINTS === 'every'
    ? `${what}: ${kinds.length} ${calls} (${kindCount} kinds), each failed once\n`
    : `${what}: ${kinds.length} ${calls} (${kindCount} kinds); ${failed.length} failed, once each (FAULT_POINTS=first-of-each-kind: the first of each kind and the last): ${failed.join(', ')}\n`;
}
