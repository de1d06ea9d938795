/// <reference lib="dom" />
/**
 * The API reference at /docs and /docs/embed in a real headless Chromium:
 * Redoc renders each surface's served OpenAPI document, lists every route of
 * the route table, loads nothing from outside the local server (it works
 * offline), and logs no console error. Screenshots land in test-output/.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { chromiumPath } from '../support/browser.js';
import { routes, type Surface } from '../../lambdas/routes.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { ROOT } from '../support/process.js';
import { OPERATIONS } from '../../lambdas/openapi/operations.js';

const OUTPUT = join(ROOT, 'test-output');
let api: TestServer;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  api = await startTestServer();
  context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'pe-chromium-')), {
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    viewport: { width: 1280, height: 1000 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  // Offline: every request leaving the local server is refused and recorded.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(api.url) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    problems.push(`external request: ${url}`);
    return route.abort();
  });
});

afterAll(async () => {
  await context?.close();
  await api?.close();
});

const pages: [Surface, string][] = [
  ['public', '/docs'],
  ['embed', '/docs/embed'],
];

describe('the API reference page', () => {
  it.each(pages)('%s (%s): renders every route of the surface with no console error', async (surface, path) => {
    problems.splice(0);
    const response = await page.goto(`${api.url}${path}`, { waitUntil: 'networkidle' });
    expect(response?.status()).toBe(200);
    await page.locator('.api-content').waitFor({ state: 'visible', timeout: 30_000 });
    const text = await page.locator('body').innerText();
    for (const route of routes.filter((r) => r.surface === surface)) {
      // Redoc shows each operation's summary as its heading and its path in the endpoint box.
      const summary = OPERATIONS[route.id]({ userEventsVariant: 'typed' }).summary;
      expect({ route: route.id, listed: text.includes(summary) }).toEqual({ route: route.id, listed: true });
      expect({ route: route.id, path: text.includes(route.path) }).toEqual({ route: route.id, path: true });
    }
    expect(await page.title()).toContain(surface === 'public' ? 'Public API' : 'Embed API');
    expect(problems).toEqual([]);
    await page.screenshot({ path: join(OUTPUT, `docs-${surface}.png`) });
  });

  it("has an anchor for every endpoint link of the docs (…/docs#tag/…/operation/…)", async () => {
    // The route tables: the Public API's in docs/endpoints.md, the Embed API's in docs/embed.md.
    const pages = ['docs/endpoints.md', 'docs/embed.md'].map((page) => readFileSync(join(ROOT, page), 'utf8')).join('\n');
    const links = [...pages.matchAll(/\(http:\/\/127\.0\.0\.1:3000(\/docs(?:\/embed)?)#([^)]+)\)/g)].map((m) => [m[1] as string, m[2] as string] as const);
    expect(links.length).toBe(routes.length);
    for (const [path, anchor] of links) {
      await page.goto(`${api.url}${path}`, { waitUntil: 'networkidle' });
      await page.locator('.api-content').waitFor({ state: 'visible', timeout: 30_000 });
      expect({ anchor, found: await page.evaluate((id) => document.getElementById(id) !== null, anchor) }).toEqual({ anchor, found: true });
    }
    expect(problems).toEqual([]);
  });

  it('shows the key carriers and an example body from the demo data', async () => {
    await page.goto(`${api.url}/docs`, { waitUntil: 'networkidle' });
    await page.locator('.api-content').waitFor({ state: 'visible', timeout: 30_000 });
    const text = await page.locator('body').innerText();
    expect(text).toContain('x-events-api-key');
    expect(text).toMatch(/Bearer/);
    expect(text).toContain('Rooftop Jazz');
    expect(problems).toEqual([]);
  });
});
