/// <reference lib="dom" />
/**
 * The deployed snippet (docs/embed.md) in Chromium (issue 58 item 5): a host
 * page on another origin loads the widget's release by its content-hashed
 * name with its `integrity` and `crossorigin="anonymous"`, as a stage serves
 * it (here the local server serves the same release under the same name).
 * The browser computes the hash itself: the widget runs, and with no
 * `data-api` it reads the Embed API at its script's origin. The same tag
 * with another hash is refused, and nothing of the widget runs.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type BrowserContext } from 'playwright-core';
import { widgetRelease, widgetScriptTag } from '../../lib/widget-bundle.js';
import { chromiumPath } from '../support/browser.js';
import { NOW } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';

let api: TestServer;
let host: Server;
let hostUrl: string;
let context: BrowserContext;
const release = widgetRelease();
const tampered = { ...release, integrity: `sha384-${createHash('sha384').update(`${release.body};`).digest('base64')}` };

beforeAll(async () => {
  api = await startTestServer();
  const tags: Record<string, string> = { '/pinned': widgetScriptTag(release, api.url), '/tampered': widgetScriptTag(tampered, api.url) };
  host = createServer((req, res) => {
    const tag = tags[req.url ?? ''];
    if (tag === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title><link rel="icon" href="data:,"></head>
<body><main><div id="jazz" data-events-event="evt_jazz01" data-locale="en-US"></div></main>
${tag}</body></html>`);
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', () => resolve()));
  // Another origin than the API's (127.0.0.1): the script is cross-origin, as on a real host page.
  hostUrl = `http://localhost:${(host.address() as AddressInfo).port}`;
  context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'pe-chromium-')), {
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  await context.route(/^https?:\/\/(?!127\.0\.0\.1|localhost)/, (route) => route.abort());
  // The cover's image host is not reachable offline.
  await context.route('https://images.example.com/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="9"/>' }));
  await context.clock.setFixedTime(new Date(NOW));
});

afterAll(async () => {
  await context?.close();
  await new Promise((resolve) => host?.close(resolve));
  await api?.close();
});

describe("the widget's release with its integrity, on a host page", () => {
  it('runs when the hash is the file’s, reading the API at its script’s origin', async () => {
    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${hostUrl}/pinned`);
    await page.locator('#jazz section[aria-busy="false"]').waitFor();
    const title = await page.evaluate(() => document.querySelector('#jazz')!.shadowRoot!.querySelector('.pe-title a')?.textContent ?? null);
    await page.close();
    expect({ title, errors }).toEqual({ title: 'Rooftop Jazz', errors: [] });
    expect(requests).toContain(`${api.url}${release.path}`);
    expect(requests).toContain(`${api.url}/api/embed/v1/events/evt_jazz01`);
  });

  it('is refused when the hash is another file’s: nothing of it runs', async () => {
    const page = await context.newPage();
    const refused = page.waitForEvent('console', (m) => /integrity/i.test(m.text()));
    await page.goto(`${hostUrl}/tampered`);
    expect((await refused).text()).toMatch(/Failed to find a valid digest in the 'integrity' attribute/);
    const mounted = await page.evaluate(() => document.querySelector('#jazz')!.shadowRoot !== null);
    await page.close();
    expect(mounted).toBe(false);
  });
});
