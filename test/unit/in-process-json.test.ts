/**
 * The in-process store's direct route copies a request body and an answer as
 * HTTP would carry them, without the text (test/support/in-process-dynalite.ts,
 * `viaJson`): for any value, the copy is JSON.parse(JSON.stringify(value)),
 * shares nothing with the value, and changing one leaves the other as it was.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { viaJson } from '../support/in-process-dynalite.js';

/** Values as marshalled requests and dynalite's answers hold them, and what JSON treats specially. */
const leaf = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.double(),
  fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.integer(),
  fc.date({ noInvalidDate: true }),
  fc.constant(() => 1),
  fc.constant(Symbol('s')),
  fc.uint8Array({ maxLength: 4 }).map((a) => Buffer.from(a)),
);
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object'), tie('nullProto')),
  array: fc.array(tie('tree'), { maxLength: 4 }),
  // Not 'constructor': jest's toStrictEqual compares objects' `constructor`, an own property of that name included.
  object: fc.dictionary(fc.constantFrom('S', 'N', 'M', 'L', 'Item', 'Items', '__proto__', 'x'), tie('tree'), { maxKeys: 4 }),
  nullProto: fc.dictionary(fc.string({ maxLength: 3 }), tie('tree'), { maxKeys: 3 }).map((o) => Object.assign(Object.create(null) as object, o)),
}));

describe('viaJson', () => {
  it('is JSON.parse(JSON.stringify(value)) for any value JSON can write', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(tree), fc.dictionary(fc.string(), tree)), (value) => {
        expect(viaJson(value)).toStrictEqual(JSON.parse(JSON.stringify(value)) as unknown);
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps a key named __proto__ as JSON.parse does: an own property, not the prototype (found by the property above)', () => {
    const value = JSON.parse('{"__proto__":{"S":"x"},"a":1}') as Record<string, unknown>;
    const copy = viaJson(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(copy).toStrictEqual(JSON.parse(JSON.stringify(value)) as unknown);
  });

  it('shares nothing with its value', () => {
    const value = { Item: { pk: { S: 'a' }, list: { L: [{ N: '1' }] } }, Count: 1 };
    const copy = viaJson(value) as typeof value;
    copy.Item.pk.S = 'b';
    copy.Item.list.L.push({ N: '2' });
    expect(value).toEqual({ Item: { pk: { S: 'a' }, list: { L: [{ N: '1' }] } }, Count: 1 });
  });
});
