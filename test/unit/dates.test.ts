import { describe, expect, it } from '@jest/globals';
import { parseDateBound, parseDateTime } from '../../lambdas/core/dates.js';

const iso = (d: Date | null) => d?.toISOString() ?? null;

describe('parseDateTime', () => {
  it.each([
    ['2026-05-01T10:00:00Z', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T10:00:00.123Z', '2026-05-01T10:00:00.123Z'],
    ['2026-05-01T12:00:00+02:00', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T12:00:00+0200', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T05:30:00-04:30', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01t10:00:00z', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T10:00Z', '2026-05-01T10:00:00.000Z'],
  ])('accepts %s', (input, expected) => {
    expect(iso(parseDateTime(input))).toBe(expected);
  });

  it.each(['2026-02-30T10:00:00Z', '2026-13-01T10:00:00Z', '2026-05-01T24:00:00Z', '2026-05-01T10:00:00', 'yesterday', '', '1714557600', '2026-05-01 10:00:00Z'])(
    'rejects %j',
    (input) => {
      expect(parseDateTime(input)).toBeNull();
    },
  );

  it('requires seconds when asked (the dataset contract is RFC 3339)', () => {
    expect(parseDateTime('2026-05-01T10:00Z', { requireSeconds: true })).toBeNull();
    expect(iso(parseDateTime('2026-05-01T10:00:00Z', { requireSeconds: true }))).toBe('2026-05-01T10:00:00.000Z');
  });
});

describe('parseDateBound', () => {
  it('reads a plain date as the first millisecond of the UTC day for a lower bound', () => {
    expect(iso(parseDateBound('2026-05-01', 'lower'))).toBe('2026-05-01T00:00:00.000Z');
  });
  it('and as the last millisecond for an upper bound', () => {
    expect(iso(parseDateBound('2026-05-01', 'upper'))).toBe('2026-05-01T23:59:59.999Z');
  });
  it('reads a space before the offset as the "+" that form decoding turned into a space', () => {
    expect(iso(parseDateBound('2026-05-01T12:00:00 02:00', 'lower'))).toBe('2026-05-01T10:00:00.000Z');
  });
  it('rejects impossible plain dates', () => {
    expect(parseDateBound('2026-02-29', 'lower')).toBeNull();
    expect(iso(parseDateBound('2028-02-29', 'lower'))).toBe('2028-02-29T00:00:00.000Z');
  });
});
