/** The write-capacity model of the bench against AWS's published rules (scripts/write-billing.ts). */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { itemSize, partitionBill, writeBill } from '../../scripts/write-billing.js';

const gsi = [{ partitionKey: 'g1pk', sortKey: 'g1sk' }, { partitionKey: 'g2pk', sortKey: 'g2sk' }];
const base = { pk: 'EVENT#e', sk: 'RSVP#u', status: 'yes' };

describe('item size', () => {
  it('counts names and values as DynamoDB does', () => {
    expect(itemSize({ a: 'xyz' })).toBe(4);
    expect(itemSize({ n: 12345 })).toBe(1 + 4); // 5 significant digits: ceil(5/2) + 1
    expect(itemSize({ b: true, z: null })).toBe(4);
    expect(itemSize({ m: { k: 'v' } })).toBe(1 + 3 + 1 + 1 + 1);
    expect(itemSize({ s: 'é' })).toBe(3);
  });
});

describe('write bill', () => {
  it('bills the table by the larger image, per started KB, at least 1', () => {
    expect(writeBill(undefined, base, gsi)).toEqual({ table: 1, indexes: 0, total: 1 });
    expect(writeBill({ ...base, big: 'x'.repeat(3000) }, base, gsi).table).toBe(3);
  });
  it('bills each index: put 1, removal 1, key change 2, content change 1, unchanged 0', () => {
    const inOne = { ...base, g1pk: 'a', g1sk: 'b' };
    expect(writeBill(base, inOne, gsi).indexes).toBe(1);
    expect(writeBill(inOne, base, gsi).indexes).toBe(1);
    expect(writeBill(inOne, { ...inOne, g1sk: 'c' }, gsi).indexes).toBe(2);
    expect(writeBill(inOne, { ...inOne, status: 'no' }, gsi).indexes).toBe(1);
    expect(writeBill(inOne, { ...inOne }, gsi).indexes).toBe(0);
    expect(writeBill(inOne, { ...inOne, g2pk: 'x', g2sk: 'y' }, gsi).indexes).toBe(2);
  });
  it('bills a failed condition by the stored item, and no index', () => {
    expect(writeBill({ ...base, g1pk: 'a', g1sk: 'b' }, undefined, gsi, true)).toEqual({ table: 1, indexes: 0, total: 1 });
  });
  it('never bills less than the table write, nor more than table + 2 per index', () => {
    const item = fc.record({ g1pk: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }), g1sk: fc.constant('s'), body: fc.string({ maxLength: 3000 }) });
    fc.assert(
      fc.property(fc.option(item, { nil: undefined }), fc.option(item, { nil: undefined }), (before, after) => {
        const strip = (i?: Record<string, unknown>) => (i ? { ...base, ...Object.fromEntries(Object.entries(i).filter(([, v]) => v !== undefined)) } : undefined);
        const bill = writeBill(strip(before), strip(after), gsi);
        expect(bill.total).toBeGreaterThanOrEqual(bill.table);
        expect(bill.indexes).toBeLessThanOrEqual(2 * gsi.length * bill.table);
      }),
    );
  });
});

describe('partition bill', () => {
  const named = [{ name: 'i1', ...gsi[0]! }, { name: 'i2', ...gsi[1]! }];
  const sum = (parts: { units: number }[]) => parts.reduce((n, p) => n + p.units, 0);
  it('puts the table write in the item\'s partition and each index entry in its index partition', () => {
    const inOne = { ...base, g1pk: 'a', g1sk: 'b' };
    expect(partitionBill('EVENT#e', undefined, inOne, named)).toEqual([
      { partition: 'EVENT#e', units: 1 },
      { partition: 'i1 a', units: 1 },
    ]);
  });
  it('splits a key change between the old and the new index partition', () => {
    const before = { ...base, g1pk: 'a', g1sk: 'b' };
    expect(partitionBill('EVENT#e', before, { ...before, g1pk: 'c' }, named)).toEqual([
      { partition: 'EVENT#e', units: 1 },
      { partition: 'i1 a', units: 1 },
      { partition: 'i1 c', units: 1 },
    ]);
  });
  it('bills a KEYS_ONLY index nothing for a change that leaves its key alone', () => {
    const keysOnly = [{ ...named[0]!, projection: 'KEYS_ONLY' as const }];
    const before = { ...base, g1pk: 'a', g1sk: 'b' };
    expect(partitionBill('EVENT#e', before, { ...before, status: 'no' }, keysOnly)).toEqual([{ partition: 'EVENT#e', units: 1 }]);
    expect(partitionBill('EVENT#e', before, { ...before, status: 'no' }, named)).toEqual([
      { partition: 'EVENT#e', units: 1 },
      { partition: 'i1 a', units: 1 },
    ]);
  });
  it('bills an INCLUDE index for a change of what it copies only, and an entry by what it copies', () => {
    const include = [{ ...named[0]!, projection: 'INCLUDE' as const, nonKeyAttributes: ['status'] }];
    const before = { ...base, g1pk: 'a', g1sk: 'b' };
    // A bookkeeping mark, however large, writes nothing to the index.
    expect(partitionBill('EVENT#e', before, { ...before, revealing: 'x'.repeat(3000) }, include)).toEqual([{ partition: 'EVENT#e', units: 3 }]);
    expect(partitionBill('EVENT#e', before, { ...before, status: 'no' }, include)).toEqual([
      { partition: 'EVENT#e', units: 1 },
      { partition: 'i1 a', units: 1 },
    ]);
    // A new entry is billed by its copy (1 unit), not by the 3 KB item.
    expect(writeBill(undefined, { ...before, body: 'x'.repeat(3000) }, include)).toEqual({ table: 3, indexes: 1, total: 4 });
    expect(writeBill(undefined, { ...before, body: 'x'.repeat(3000) }, named.slice(0, 1))).toEqual({ table: 3, indexes: 3, total: 6 });
  });
  it('sums, over partitions, to the write bill of the whole write, whatever each index copies', () => {
    const item = fc.record({ g1pk: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }), g2pk: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }), body: fc.string({ maxLength: 3000 }), mark: fc.option(fc.string({ maxLength: 1500 }), { nil: undefined }) });
    const projection = fc.constantFrom(
      { projection: 'ALL' as const },
      { projection: 'KEYS_ONLY' as const },
      { projection: 'INCLUDE' as const, nonKeyAttributes: ['body'] },
    );
    const strip = (i?: Record<string, unknown>) =>
      i ? { ...base, g1sk: 's', g2sk: 's', ...Object.fromEntries(Object.entries(i).filter(([, v]) => v !== undefined)) } : undefined;
    fc.assert(
      fc.property(fc.option(item, { nil: undefined }), fc.option(item, { nil: undefined }), fc.boolean(), projection, projection, (b, a, failed, p1, p2) => {
        const before = strip(b);
        const after = strip(a);
        if (!before && !after) return;
        const indexes = [{ ...named[0]!, ...p1 }, { ...named[1]!, ...p2 }];
        expect(sum(partitionBill('EVENT#e', before, after, indexes, failed))).toBe(writeBill(before, after, indexes, failed).total);
      }),
    );
  });
});
