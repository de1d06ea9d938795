/**
 * The human API reference at /docs (Public API) and /docs/embed (Embed API):
 * Redoc's standalone bundle, served from node_modules (no CDN, works offline),
 * rendering the very documents the server answers at …/openapi.json.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { SURFACES, type Surface } from '../lambdas/routes.js';

export const DOCS_PATH = '/docs';
const REDOC_PATH = '/docs/redoc.standalone.js';
const PAGES: Record<Surface, { path: string; title: string }> = {
  public: { path: DOCS_PATH, title: 'Public API' },
  embed: { path: `${DOCS_PATH}/embed`, title: 'Embed API' },
};

function page(surface: Surface): string {
  const nav = (Object.entries(PAGES) as [Surface, { path: string; title: string }][])
    .map(([s, p]) => (s === surface ? `<strong>${p.title}</strong>` : `<a href="${p.path}">${p.title}</a>`))
    .join(' · ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Public Events API reference: ${PAGES[surface].title}</title>
<style>
  body { margin: 0; }
  nav { font: 14px/1.4 system-ui, sans-serif; padding: 10px 20px; border-bottom: 1px solid #ddd; }
  nav a { color: #32329f; }
</style>
</head>
<body>
<nav aria-label="API surfaces">${nav} · <a href="${SURFACES[surface]}/openapi.json">openapi.json</a></nav>
<div id="redoc"></div>
<script src="${REDOC_PATH}"></script>
<script>
  Redoc.init(${JSON.stringify(`${SURFACES[surface]}/openapi.json`)}, { expandResponses: '200', hideHostname: false, nativeScrollbars: true }, document.getElementById('redoc'));
</script>
</body>
</html>
`;
}

/**
 * Redoc's sidebar footer loads its logo from Redocly's CDN, unconditionally.
 * Offline that request fails and logs a console error, so the served bundle
 * points it at an inline image instead (test/browser/docs-page.test.ts
 * refuses every request that leaves the local server).
 */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const INLINE_LOGO = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><circle cx="8" cy="8" r="6" fill="#32329f"/></svg>')}`;

/** Static assets of the local server: both reference pages and the Redoc bundle. */
export function docsAssets(): Map<string, { body: string; type: string }> {
  const redoc = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  const html = 'text/html; charset=utf-8';
  return new Map([
    [PAGES.public.path, { body: page('public'), type: html }],
    [PAGES.embed.path, { body: page('embed'), type: html }],
    [REDOC_PATH, { body: readFileSync(redoc, 'utf8').replaceAll(REDOC_CDN_LOGO, INLINE_LOGO), type: 'application/javascript; charset=utf-8' }],
  ]);
}
