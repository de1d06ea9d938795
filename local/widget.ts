/**
 * The local server's widget files: the bundle the stack ships
 * (lib/widget-bundle.ts), under the name a deployed stage serves it by (its
 * release: content-hashed, immutable) and under `/embed/widget.js`, built
 * from the sources when the server starts, so a page under development always gets
 * the code as it is now; and the demo host page.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { WIDGET_CONTENT_TYPE, WIDGET_DIR, WIDGET_RELEASE_CACHE_CONTROL, buildWidget, widgetRelease } from '../lib/widget-bundle.js';

const DEMO_PAGE = new URL('../widget/demo.html', import.meta.url).pathname;

export const WIDGET_PATH = `${WIDGET_DIR}widget.js`;
export const DEMO_PATH = `${WIDGET_DIR}demo.html`;

export interface Asset {
  body: string;
  type: string;
  /** Cache-Control: five minutes unless said. */
  cacheControl?: string;
}

/** Static assets of the local server: the widget (by both names) and its demo page. */
export function widgetAssets(): Map<string, Asset> {
  const release = widgetRelease(buildWidget());
  return new Map<string, Asset>([
    [WIDGET_PATH, { body: release.body, type: WIDGET_CONTENT_TYPE }],
    [release.path, { body: release.body, type: WIDGET_CONTENT_TYPE, cacheControl: WIDGET_RELEASE_CACHE_CONTROL }],
    [DEMO_PATH, { body: readFileSync(DEMO_PAGE, 'utf8'), type: 'text/html; charset=utf-8' }],
  ]);
}

export function serveAsset(res: ServerResponse, asset: Asset): void {
  res.writeHead(200, {
    'content-type': asset.type,
    'cache-control': asset.cacheControl ?? 'public, max-age=300',
    // Loaded cross-origin by host pages (and with crossorigin="anonymous" when they check its integrity).
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
  });
  res.end(asset.body);
}
