/**
 * `npm run docs:images`: the docs' screenshots of the project's own pages
 * (local/docs-images.ts), taken in Chromium (CHROMIUM_PATH, else Debian's
 * /usr/bin/chromium) from a local server on the demo data, and their inputs'
 * digests written to docs/images.json. Run it after a change to what `/docs`
 * renders (the OpenAPI document, the page, Redoc); test/e2e/docs-images.test.ts
 * says when it is due.
 */
import '../local/sdk-node-warning.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { DOCS_IMAGES, IMAGES_RECORD, inputsDigest } from '../local/docs-images.js';
import { startLocalServer } from '../local/server.js';

const docs = new URL('../docs/', import.meta.url).pathname;
const server = await startLocalServer({ dataFile: new URL('../data/demo.json', import.meta.url).pathname, port: 0 });
const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'pe-chromium-')), {
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
});
try {
  const record: Record<string, { page: string; inputs: string }> = {};
  for (const image of DOCS_IMAGES) {
    const page = await context.newPage();
    await page.setViewportSize(image.viewport);
    await page.goto(`${server.url}${image.page}`, { waitUntil: 'networkidle' });
    await page.locator(image.ready).first().waitFor({ state: 'visible', timeout: 60_000 });
    await page.screenshot({ path: join(docs, image.file) });
    await page.close();
    record[image.file] = { page: image.page, inputs: await inputsDigest(server.url, image) };
    process.stdout.write(`wrote docs/${image.file}\n`);
  }
  const before = (() => {
    try {
      return readFileSync(join(docs, IMAGES_RECORD), 'utf8');
    } catch {
      return '';
    }
  })();
  const after = `${JSON.stringify(record, null, 2)}\n`;
  writeFileSync(join(docs, IMAGES_RECORD), after);
  process.stdout.write(`${before === after ? 'kept' : 'wrote'} docs/${IMAGES_RECORD}\n`);
} finally {
  await context.close();
  await server.close();
}
