import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isEmbedPath, parseRequestTarget } from '../../local/request-target.js';

describe('parseRequestTarget', () => {
  it.each([
    ['/api/embed/v1/events/evt_1?limit=2', '/api/embed/v1/events/evt_1', 'limit=2'],
    ['/api/embed/v1/users/../events/x', '/api/embed/v1/users/../events/x', ''], // dot segments kept as sent
    ['//127.0.0.1:99999/api/embed/v1/events/x', '//127.0.0.1:99999/api/embed/v1/events/x', ''], // origin form, not an authority
    ['/api/embed/v1//events/x', '/api/embed/v1//events/x', ''],
    ['http://other/api/embed/v1/events/x?a=1', '/api/embed/v1/events/x', 'a=1'], // absolute form routes on its path
    ['http://other', '/', ''],
    ['https://h:1?q=1', '/', 'q=1'],
    ['127.0.0.1:443', '127.0.0.1:443', ''], // authority form: no path of either API
    ['*', '*', ''],
    ['/a#frag?x=1', '/a', ''],
  ])('%s → path %s', (target, pathname, search) => {
    const parsed = parseRequestTarget(target);
    expect(parsed.pathname).toBe(pathname);
    expect(parsed.searchParams.toString()).toBe(new URLSearchParams(search).toString());
  });

  it('keeps prototype names, repeated and array-style names, malformed and non-UTF-8 escapes as ordinary parameters', () => {
    const { searchParams } = parseRequestTarget('/x?__proto__=1&constructor=2&a[]=1&a[]=2&bad=%&nonutf8=%FF&overlong=%C0%AE');
    expect([...searchParams]).toEqual([
      ['__proto__', '1'],
      ['constructor', '2'],
      ['a[]', '1'],
      ['a[]', '2'],
      ['bad', '%'],
      ['nonutf8', '\uFFFD'],
      ['overlong', '\uFFFD\uFFFD'],
    ]);
  });

  it('never throws, whatever the target', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (target) => {
        expect(typeof parseRequestTarget(target).pathname).toBe('string');
      }),
      { numRuns: 500, seed: 1 },
    );
  });
});

describe('isEmbedPath', () => {
  it.each([
    ['/api/embed/v1', true],
    ['/api/embed/v1/', true],
    ['/api/embed/v1//events/x', true],
    ['/api/embed/v10', false],
    ['//host/api/embed/v1/x', false],
    ['/api/public/v1/events/x', false],
  ])('%s → %s', (path, embed) => {
    expect(isEmbedPath(path)).toBe(embed);
  });
});
