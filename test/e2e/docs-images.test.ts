/**
 * The docs' screenshots of the project's own pages show what those pages
 * render now: each page's inputs (local/docs-images.ts: its HTML, its scripts,
 * the document it renders, as the local server answers them) still have the
 * digest recorded when the picture was taken (docs/images.json, written by
 * `npm run docs:images`). No browser needed: the digest is the check.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DOCS_IMAGES, IMAGES_RECORD, inputsDigest } from '../../local/docs-images.js';
import { startLocalServer, type LocalServer } from '../../local/server.js';
import { DEMO_FILE } from '../support/fixtures.js';
import { ROOT } from '../support/process.js';

let server: LocalServer;
beforeAll(async () => {
  // As `npm run docs:images` starts it: the demo data, every setting at its default.
  server = await startLocalServer({ dataFile: DEMO_FILE, port: 0 });
});
afterAll(async () => server?.close());

const record = JSON.parse(readFileSync(`${ROOT}/docs/${IMAGES_RECORD}`, 'utf8')) as Record<string, { page: string; inputs: string }>;

describe('the docs’ screenshots of the project’s pages', () => {
  it('are exactly the recorded ones, each a file of docs/', () => {
    expect(Object.keys(record).sort()).toEqual(DOCS_IMAGES.map((i) => i.file).sort());
    for (const image of DOCS_IMAGES) expect(readFileSync(`${ROOT}/docs/${image.file}`).subarray(1, 4).toString()).toBe('PNG');
  });

  it.each(DOCS_IMAGES.map((i) => [i.file, i] as const))('%s shows what its page renders now (else: npm run docs:images)', async (_file, image) => {
    expect({ file: image.file, page: record[image.file]?.page, inputs: record[image.file]?.inputs }).toEqual({ file: image.file, page: image.page, inputs: await inputsDigest(server.url, image) });
  });
});
