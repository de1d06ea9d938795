/**
 * The pictures of the docs that are screenshots of the project's own pages
 * (README's docs/api-reference.png), and what each is a picture of. A
 * screenshot cannot be compared with its page pixel for pixel across
 * machines (fonts, Chromium's version), so each is recorded with a digest of
 * everything its page renders from: the page's HTML, each script it loads
 * from the server, and the document it renders. `npm run docs:images`
 * (scripts/docs-images.ts) takes the screenshots and writes the digests to
 * docs/images.json; test/e2e/docs-images.test.ts fails when a page's inputs
 * no longer have the recorded digest, so a picture cannot drift from what
 * `/docs` renders without the suite saying so.
 */
import { createHash } from 'node:crypto';

export interface DocsImage {
  /** The file under docs/. */
  readonly file: string;
  /** The local server's page it shows. */
  readonly page: string;
  readonly viewport: { readonly width: number; readonly height: number };
  /** The server paths the page renders from, besides itself and its scripts. */
  readonly renders: readonly string[];
  /** What the screenshot waits for before it is taken (a CSS selector). */
  readonly ready: string;
}

export const DOCS_IMAGES: readonly DocsImage[] = [
  { file: 'api-reference.png', page: '/docs', viewport: { width: 1280, height: 1000 }, renders: ['/api/public/v1/openapi.json'], ready: '.api-content' },
];

export const IMAGES_RECORD = 'images.json';

/** sha256 of the page, the scripts it loads from the server (`<script src="/…">`), and what it renders, as the server answers them. */
export async function inputsDigest(serverUrl: string, image: DocsImage): Promise<string> {
  const text = async (path: string): Promise<string> => {
    const res = await fetch(`${serverUrl}${path}`);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
    return res.text();
  };
  const html = await text(image.page);
  const scripts = [...html.matchAll(/<script src="(\/[^"]+)"/g)].map((m) => m[1]!);
  const hash = createHash('sha256');
  for (const path of [image.page, ...scripts, ...image.renders]) hash.update(`${path}\n`).update(path === image.page ? html : await text(path)).update('\n');
  return hash.digest('hex');
}
