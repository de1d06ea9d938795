import { gzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { buildWidget, widgetRelease } from '../../lib/widget-bundle.js';
import { EMBED_DOC, releaseSection, shownReleaseSection } from '../../scripts/widget-release-doc.js';

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

  it("is the release docs/embed.md shows a host page (else: npm run widget:release -- --write)", () => {
    expect(shownReleaseSection(readFileSync(EMBED_DOC, 'utf8'))).toBe(releaseSection(widgetRelease(code)));
  });
});
