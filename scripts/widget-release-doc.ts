/**
 * The part of docs/embed.md that shows the widget's current release: the
 * snippet a host page copies for a deployed stage, between the markers
 * `<!-- widget:release -->` and `<!-- /widget:release -->`.
 */
import { widgetScriptTag, type WidgetRelease } from '../lib/widget-bundle.js';

export const EMBED_DOC = new URL('../docs/embed.md', import.meta.url).pathname;
const OPEN = '<!-- widget:release -->';
const CLOSE = '<!-- /widget:release -->';

/** The snippet for `release`, as the page shows it (YOUR-EMBED-HOST: the host of the stack's EmbedApiUrl output). */
export function releaseSection(release: Pick<WidgetRelease, 'path' | 'integrity'>): string {
  return ['```html', '<div data-events-user="alice"></div>', widgetScriptTag(release, 'https://YOUR-EMBED-HOST'), '```', ''].join('\n');
}

/** The page's text between the markers, or undefined without them. */
export function shownReleaseSection(doc: string): string | undefined {
  const start = doc.indexOf(OPEN);
  const end = doc.indexOf(CLOSE);
  return start < 0 || end < start ? undefined : doc.slice(start + OPEN.length + 1, end);
}

export function withReleaseSection(doc: string, release: Pick<WidgetRelease, 'path' | 'integrity'>): string {
  const shown = shownReleaseSection(doc);
  if (shown === undefined) throw new Error(`docs/embed.md has no ${OPEN} … ${CLOSE} section`);
  return doc.replace(`${OPEN}\n${shown}${CLOSE}`, `${OPEN}\n${releaseSection(release)}${CLOSE}`);
}
