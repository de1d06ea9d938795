/**
 * The key explorations' search (test/support/key-schedules.ts,
 * searchSchedules) against brute force: random small programs of actors
 * reading and writing shared registers (what conflicting DynamoDB calls
 * are), every interleaving run one by one, and the reduced search must reach
 * every final state the brute force reaches (registers and every actor's
 * local state), with fewer runs.
 */
import { expect, it } from '@jest/globals';
import fc from 'fast-check';
import { searchSchedules, type Chooser, type Footprint, type Step } from '../support/key-schedules.js';

type Op = { kind: 'read' | 'write' | 'swapIfZero'; reg: number };

/** Runs the programs in the order the prefix gives, then as the search chooses. */
function runToy(programs: Op[][], prefix: number[], choose: Chooser): { steps: Step[]; final: string } {
  const regs = [0, 0, 0];
  const acc = programs.map(() => 1);
  const pc = programs.map(() => 0);
  const steps: Step[] = [];
  const footprint = (op: Op): Footprint => (op.kind === 'read' ? { reads: [`r${op.reg}`], writes: [] } : { reads: [], writes: [`r${op.reg}`] });
  let last = -1;
  for (;;) {
    const enabled = programs.map((p, i) => [i, p[pc[i]!]] as const).filter(([, op]) => op !== undefined) as [number, Op][];
    if (!enabled.length) break;
    const i = steps.length;
    const waiting = new Map(enabled.map(([a, o]) => [a, footprint(o)]));
    const actor = i < prefix.length ? prefix[i]! : choose(i, waiting, last);
    const op = enabled.find(([a]) => a === actor)![1];
    steps.push({ actor, enabled: waiting });
    last = actor;
    if (op.kind === 'read') acc[actor] = (acc[actor]! * 7 + regs[op.reg]!) % 1_000_003;
    else if (op.kind === 'write') regs[op.reg] = acc[actor]! * 10 + actor;
    else if (regs[op.reg] === 0) regs[op.reg] = actor + 1;
    else acc[actor] = acc[actor]! + 13;
    pc[actor]!++;
  }
  return { steps, final: JSON.stringify({ regs, acc }) };
}

async function finals(programs: Op[][], reduce: boolean): Promise<{ finals: Set<string>; runs: number }> {
  const out = new Set<string>();
  let runs = 0;
  const complete = await searchSchedules(
    async (prefix, choose) => runToy(programs, prefix, choose),
    (r) => {
      runs++;
      out.add(r.final);
    },
    { limit: 100_000, reduce },
  );
  expect(complete).toBe(true);
  return { finals: out, runs };
}

const op = fc.record({ kind: fc.constantFrom('read', 'write', 'swapIfZero') as fc.Arbitrary<Op['kind']>, reg: fc.integer({ min: 0, max: 2 }) });

it.each([
  ['2 or 3 actors of up to 4 calls', fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 3 })],
  ['4 actors of up to 2 calls', fc.array(fc.array(op, { minLength: 1, maxLength: 2 }), { minLength: 4, maxLength: 4 })],
])('reaches every final state every interleaving reaches (%s)', async (_, programsOf) => {
  let reducedRuns = 0;
  let allRuns = 0;
  await fc.assert(
    fc.asyncProperty(programsOf, async (programs) => {
      const reduced = await finals(programs, true);
      const all = await finals(programs, false);
      reducedRuns += reduced.runs;
      allRuns += all.runs;
      expect([...reduced.finals].sort()).toEqual([...all.finals].sort());
    }),
    { numRuns: 200, seed: 37 },
  );
  // And it is a reduction: far fewer runs overall.
  process.stdout.write(`schedule search: ${reducedRuns} runs reduced, ${allRuns} interleavings\n`);
  expect(reducedRuns).toBeLessThan(allRuns / 3);
});
