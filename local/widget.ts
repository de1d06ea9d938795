/**
 * Builds the embed widget (widget/src/widget.ts) into one minified,
 * dependency-free script with esbuild, and serves it and the demo host page.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { buildSync } from 'esbuild';

const WIDGET_ENTRY = new URL('../widget/src/widget.ts', import.meta.url).pathname;
const DEMO_PAGE = new URL('../widget/demo.html', import.meta.url).pathname;

export const WIDGET_PATH = '/embed/widget.js';
export const DEMO_PATH = '/embed/demo.html';

export function buildWidget(): string {
  const result = buildSync({
    entryPoints: [WIDGET_ENTRY],
    bundle: true,
    minify: true,
    format: 'iife',
    // Browsers of the last few years; formatRange and color-mix need 2023+.
    target: ['chrome111', 'firefox113', 'safari16.4'],
    write: false,
    legalComments: 'none',
  });
  return result.outputFiles[0]!.text;
}

/** Static assets of the local server: the widget and its demo page. */
export function widgetAssets(): Map<string, { body: string; type: string }> {
  return new Map([
    [WIDGET_PATH, { body: buildWidget(), type: 'application/javascript; charset=utf-8' }],
    [DEMO_PATH, { body: readFileSync(DEMO_PAGE, 'utf8'), type: 'text/html; charset=utf-8' }],
  ]);
}

export function serveAsset(res: ServerResponse, asset: { body: string; type: string }): void {
  res.writeHead(200, {
    'content-type': asset.type,
    'cache-control': 'public, max-age=300',
    // Loaded cross-origin by host pages.
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
  });
  res.end(asset.body);
}
