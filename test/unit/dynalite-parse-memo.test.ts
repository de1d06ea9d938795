/**
 * The explorations' remembered dynalite parses (test/support/dynalite-parse-memo.ts)
 * answer what dynalite's parsers answer: the same tree or the same error, and
 * the same names and values struck off the context's unused lists, the first
 * time and every time after, whatever a caller did to a tree it was given
 * (dynalite writes into an update's tree while applying it).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import conditionParser from 'dynalite/db/conditionParser.js';
import projectionParser from 'dynalite/db/projectionParser.js';
import updateParser from 'dynalite/db/updateParser.js';
import { rememberParses, type PegParser } from '../support/dynalite-parse-memo.js';

/** Expressions as the change path writes them, and some that dynalite refuses (a reserved word, a missing name, bad syntax). */
const EXPRESSIONS = {
  condition: ['attribute_not_exists(pk)', '#s = :a', '#s = :a AND version < :b', 'begins_with(#s, :a) OR attribute_exists(#n)', 'size(#n) > :b', 'NOT (#s IN (:a, :b))', '#s BETWEEN :a AND :b', 'last = :a', '#s = = :a', 'pk = :a AND begins_with(sk, :b)'],
  update: ['SET #s = :a', 'SET #s = :a, version = version + :b REMOVE #n', 'ADD version :b', 'SET #s = if_not_exists(#s, :a)', 'SET #n = list_append(#n, :a)', 'SET last = :a', 'DELETE #s', 'SET #s :a'],
  projection: ['pk, sk', '#s, #n.inner', 'pk, #s[0]', 'name', 'pk,,sk'],
} as const;
const PARSERS: Record<keyof typeof EXPRESSIONS, PegParser> = { condition: conditionParser, update: updateParser, projection: projectionParser };

const value = fc.oneof(
  fc.integer({ min: -5, max: 5 }).map((n) => ({ N: String(n) })),
  fc.constantFrom('a', 'b', 'x').map((s) => ({ S: s })),
  fc.constant({ L: [{ S: 'y' }] }),
);
const call = fc.record({
  kind: fc.constantFrom(...(Object.keys(EXPRESSIONS) as (keyof typeof EXPRESSIONS)[])),
  pick: fc.nat(),
  names: fc.subarray(['#s', '#n', '#unused']).map((keys) => Object.fromEntries(keys.map((k) => [k, k === '#s' ? 'status' : k === '#n' ? 'names' : 'other']))),
  values: fc.record({ ':a': value, ':b': value, ':unused': value }, { requiredKeys: [] }),
  isKeyCondition: fc.boolean(),
});

function context(names: Record<string, string>, values: Record<string, unknown>, isKeyCondition: boolean) {
  return {
    attrNames: Object.keys(names).length ? names : undefined,
    attrVals: Object.keys(values).length ? values : undefined,
    unusedAttrNames: Object.fromEntries(Object.keys(names).map((k) => [k, true])),
    unusedAttrVals: Object.fromEntries(Object.keys(values).map((k) => [k, true])),
    isKeyCondition,
    // What dynalite's validation adds before it parses.
    isReserved: (name: string) => ['last', 'name', 'size'].includes(name.toLowerCase()),
    compare: () => false,
  };
}

function outcome(parser: PegParser, input: string, ctx: ReturnType<typeof context>) {
  try {
    return { tree: parser.parse(input, { context: ctx }), unused: [ctx.unusedAttrNames, ctx.unusedAttrVals] };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}`, unused: [ctx.unusedAttrNames, ctx.unusedAttrVals] };
  }
}

/** Writes into every object of a tree, as applying an update does to its sections. */
function scribble(tree: unknown): void {
  if (typeof tree !== 'object' || tree === null) return;
  for (const v of Object.values(tree)) scribble(v);
  if (!Array.isArray(tree)) (tree as Record<string, unknown>).val = 'scribbled';
}

describe('remembered dynalite parses', () => {
  it('answer as the parser does, every time, with the same unused names and values', () => {
    const remembered = Object.fromEntries(Object.entries(PARSERS).map(([kind, p]) => [kind, { parse: p.parse.bind(p) } as PegParser])) as typeof PARSERS;
    for (const p of Object.values(remembered)) rememberParses(p);
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 30 }), (calls) => {
        for (const c of [...calls, ...calls]) {
          const list = EXPRESSIONS[c.kind];
          const input = list[c.pick % list.length]!;
          const expected = outcome(PARSERS[c.kind], input, context(c.names, c.values, c.isKeyCondition));
          const got = outcome(remembered[c.kind], input, context(c.names, c.values, c.isKeyCondition));
          expect(got).toStrictEqual(expected);
          if ('tree' in got) scribble(got.tree);
        }
      }),
      { numRuns: 200 },
    );
  });
});
