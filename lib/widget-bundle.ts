/**
 * The embed widget as one file: widget/src/widget.ts bundled by esbuild into a
 * minified, dependency-free script, and its release (a name that holds its
 * content hash, and its Subresource Integrity hash). The local server serves
 * this build (local/widget.ts) and the stack ships it (lib/embed-widget.ts),
 * so the widget the tests load is the one a host page gets.
 */
import { createHash } from 'node:crypto';
import { buildSync } from 'esbuild';

const WIDGET_ENTRY = new URL('../widget/src/widget.ts', import.meta.url).pathname;

/** Where the widget's files are served: the distribution's static path, and the local server's. */
export const WIDGET_DIR = '/embed/';
/** RFC 9239's type for JavaScript, the one the local server and the bucket's object both carry. */
export const WIDGET_CONTENT_TYPE = 'text/javascript; charset=utf-8';
/** A release never changes under its name: cached for a year, never revalidated (RFC 8246). */
export const WIDGET_RELEASE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

let built: string | undefined;

/** The bundle (built once per process: synthesizing a stack twice builds it once). */
export function buildWidget(): string {
  built ??= buildSync({
    entryPoints: [WIDGET_ENTRY],
    bundle: true,
    minify: true,
    format: 'iife',
    // Browsers of the last few years; formatRange and color-mix need 2023+.
    target: ['chrome111', 'firefox113', 'safari16.4'],
    write: false,
    legalComments: 'none',
  }).outputFiles[0]!.text;
  return built;
}

export interface WidgetRelease {
  /** `widget.{first 16 hex digits of its SHA-256}.js`: a new name for every new content. */
  readonly fileName: string;
  /** Its path on the Embed host: `/embed/{fileName}`. */
  readonly path: string;
  /** The `integrity` attribute a host page's script tag carries (SHA-384, as the SRI spec recommends). */
  readonly integrity: string;
  readonly body: string;
}

export function widgetRelease(body: string = buildWidget()): WidgetRelease {
  const fileName = `widget.${createHash('sha256').update(body).digest('hex').slice(0, 16)}.js`;
  return { fileName, path: `${WIDGET_DIR}${fileName}`, integrity: `sha384-${createHash('sha384').update(body).digest('base64')}`, body };
}

/** The script tag a host page uses for a release served from `origin` (the Embed host). */
export function widgetScriptTag(release: Pick<WidgetRelease, 'path' | 'integrity'>, origin: string): string {
  return `<script src="${origin}${release.path}" integrity="${release.integrity}" crossorigin="anonymous" async></script>`;
}
