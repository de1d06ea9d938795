/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The embed widget in a real browser: a host page served from another origin
 * includes the one-line snippet; the widget fetches from the local Embed API
 * across origins and renders. Asserts the rendering matches the API's data,
 * markup in descriptions stays text, errors are shown, the host's font is
 * inherited, and no console error or CORS failure occurs. Saves screenshots
 * under test-output/.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { EmbedEvent } from '../../lambdas/core/embed.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/local.js';
import { ROOT } from '../support/process.js';

const OUTPUT = join(ROOT, 'test-output');
let api: TestServer;
let host: Server;
let hostUrl: string;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];
const dialogs: string[] = [];

function hostPage(widgetSrc: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host page</title><link rel="icon" href="data:,">
<style>body { font-family: "Courier New", monospace; margin: 2rem; }</style></head>
<body>
  <h1>A host's own page</h1>
  <div id="list" data-events-user="alice" data-limit="10" data-locale="en-US"></div>
  <div id="single" data-events-event="evt_workshop05" data-locale="en-US"></div>
  <div id="missing" data-events-user="nobody"></div>
  <script src="${widgetSrc}" async></script>
</body></html>`;
}

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  api = await startTestServer();
  // The host page lives on another origin: "localhost" and another port, while the API is on 127.0.0.1.
  const html = hostPage(`${api.url}/embed/widget.js`);
  host = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', () => resolve()));
  hostUrl = `http://localhost:${(host.address() as AddressInfo).port}/`;

  context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'pe-chromium-')), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    viewport: { width: 900, height: 1400 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  const deliberate404 = (url: string) => url.endsWith('/api/embed/v1/users/nobody/events');
  page.on('console', (m) => {
    // Chromium logs every 404 fetch; the #missing widget's unknown user is the one expected.
    if (m.type() === 'error' && !deliberate404(m.location().url)) problems.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  context.on('response', (r) => {
    // The only error answer expected is the deliberate unknown user.
    if (r.status() >= 400 && !deliberate404(r.url())) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
});

afterAll(async () => {
  await context?.close();
  await new Promise((resolve) => host?.close(resolve));
  await api?.close();
});

describe('embed widget in Chromium', () => {
  it('renders the same events as the API, across origins, with no console error', async () => {
    await page.goto(hostUrl);
    const expected = (await get<{ data: EmbedEvent[] }>(`${api.embedBaseUrl}/users/alice/events?limit=10`)).body.data;
    const cards = page.locator('#list article.pe-card');
    // The widget appends the whole list at once, so once one card is there all are.
    await cards.first().waitFor();
    expect(await cards.count()).toBe(expected.length);

    const rendered = await cards.evaluateAll((nodes) =>
      nodes.map((n) => ({
        title: n.querySelector('h3 a')?.textContent,
        href: n.querySelector('h3 a')?.getAttribute('href'),
        status: n.querySelector('.pe-status')?.textContent,
        datetime: n.querySelector('time')?.getAttribute('datetime'),
        when: n.querySelector('time')?.textContent,
        where: n.querySelector('.pe-where')?.textContent ?? null,
      })),
    );
    const statusText = { upcoming: 'Upcoming', ongoing: 'Happening now', past: 'Past' };
    expect(rendered.map((r) => r.title)).toEqual(expected.map((e) => e.title));
    expect(rendered.map((r) => r.href)).toEqual(expected.map((e) => e.url));
    expect(rendered.map((r) => r.status)).toEqual(expected.map((e) => statusText[e.status]));
    expect(rendered.map((r) => r.datetime)).toEqual(expected.map((e) => e.start_date));
    expect(rendered.map((r) => r.where)).toEqual(expected.map((e) => (e.location ? [e.location.name, [e.location.city, e.location.country].filter(Boolean).join(', ')].filter(Boolean).join(' · ') : null)));

    // Date and time are shown in the event's own time zone: Rooftop Jazz starts 01:00Z = 7:00 PM the day before in Chicago.
    const jazz = rendered[expected.findIndex((e) => e.id === 'evt_jazz01')];
    expect(jazz?.when).toMatch(/^Thu, Jan 14, 2027, 7:00\s?–\s?10:00\s?PM CST$/);

    await page.locator('#single article.pe-card').waitFor();
    expect(await page.locator('#single article.pe-card').count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it('shows markup in descriptions as text and runs none of it', async () => {
    const description = (await get<{ data: EmbedEvent }>(`${api.embedBaseUrl}/events/evt_workshop05`)).body.data.description!;
    expect(description).toContain('<script>');
    expect(await page.locator('#single .pe-desc').textContent()).toBe(description);
    expect(await page.locator('#single h3 a').textContent()).toBe('Workshop: <b>HTML</b> & "escaping"');
    expect(await page.locator('#single img, #single script, #single b').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('shows a clear message when the API answers an error', async () => {
    const alert = page.locator('#missing [role="alert"]');
    await alert.waitFor();
    expect(await alert.textContent()).toBe('Events could not be loaded: User not found');
  });

  it("inherits the host page's font and marks itself accessible", async () => {
    const fonts = await page.evaluate(() => {
      const root = document.querySelector('#list')!.shadowRoot!;
      return { host: getComputedStyle(document.body).fontFamily, card: getComputedStyle(root.querySelector('.pe-title')!).fontFamily };
    });
    expect(fonts.card).toBe(fonts.host);
    expect(await page.locator('#list section').getAttribute('aria-label')).toBe('Events by alice');
    expect(await page.locator('#list section').getAttribute('aria-busy')).toBe('false');
    await page.screenshot({ path: join(OUTPUT, 'widget-host-page.png'), fullPage: true });
  });

  it('serves a demo host page that renders with the one-line snippet', async () => {
    const demo = await context.newPage();
    await demo.goto(api.widgetDemoUrl);
    await demo.locator('article.pe-card').first().waitFor({ state: 'visible' });
    await demo.screenshot({ path: join(OUTPUT, 'widget-demo.png'), fullPage: true });
    await demo.close();
    expect(problems).toEqual([]);
  });
});
