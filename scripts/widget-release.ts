/**
 * `npm run widget:release [-- --write]`: the embed widget's release as a
 * deployed stage serves it (lib/widget-bundle.ts): its file name, its
 * Subresource Integrity hash and the script tag docs/embed.md shows for it.
 * `--write` puts that tag into docs/embed.md between its markers;
 * test/unit/widget.test.ts fails while the page shows another release.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { widgetRelease } from '../lib/widget-bundle.js';
import { EMBED_DOC, releaseSection, withReleaseSection } from './widget-release-doc.js';

const release = widgetRelease();
process.stdout.write(`${release.path}\n${release.integrity}\n${releaseSection(release)}`);
if (process.argv.includes('--write')) {
  writeFileSync(EMBED_DOC, withReleaseSection(readFileSync(EMBED_DOC, 'utf8'), release));
  process.stdout.write(`wrote ${EMBED_DOC}\n`);
}
