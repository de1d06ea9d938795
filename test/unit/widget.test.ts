import { gzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { buildWidget } from '../../local/widget.js';

describe('embed widget bundle', () => {
  const code = buildWidget();

  it('is one file of at most 8 KB gzipped', () => {
    const gzipped = gzipSync(code).length;
    expect(gzipped).toBeLessThanOrEqual(8 * 1024);
  });

  it('never parses text as HTML', () => {
    expect(code).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it('has no imports left (dependency-free, one tag)', () => {
    expect(code).not.toMatch(/\bimport\s*[({"']|\brequire\(/);
  });
});
