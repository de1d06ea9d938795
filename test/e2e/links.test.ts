/**
 * Every link and redirect the local server emits resolves on it: a reader who
 * follows one lands on a page, an image or an answer, never on the JSON 404
 * of a path nobody serves. Links are collected from the answers themselves
 * (every absolute URL in every JSON answer of both surfaces, the `URL` of
 * every calendar entry, every `Location`), so a new field that carries one
 * is followed without a change here. Locally siteUrl is the server itself
 * (docs/local-server.md): the event pages (local/event-page.ts) and the
 * default images are its. URLs of another origin are the dataset's own
 * (images the web product hosts, links in descriptions): they must be in the
 * dataset verbatim, and are not the project's to serve.
 *
 * The rehearsal's redirects are followed in test/e2e/hostile-input.test.ts
 * (on both targets) and test/rehearsal/stages.test.ts (the custom domain).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js';
import type { EventReader } from '../../lambdas/core/ports.js';
import { KEYS, demoDataset } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/local.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const key = { 'x-events-api-key': KEYS.both };

/** Every string of a JSON value that is an absolute http(s) URL. */
function urlsIn(value: unknown, into: Set<string>): Set<string> {
  if (typeof value === 'string' && /^https?:\/\//.test(value)) into.add(value);
  else if (Array.isArray(value)) value.forEach((v) => urlsIn(v, into));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => urlsIn(v, into));
  return into;
}

/** What the answers of both surfaces link to (JSON and iCalendar). */
async function emittedLinks(): Promise<Set<string>> {
  const links = new Set<string>();
  const json = [
    `${server.publicBaseUrl}/events/evt_jazz01`,
    `${server.publicBaseUrl}/events/evt_jazz01/guests?status=all`,
    `${server.publicBaseUrl}/users/alice/events?type=profile&limit=100`,
    `${server.publicBaseUrl}/users/alice/upcoming-events?limit=100`,
    `${server.publicBaseUrl}/users/alice/past-events?limit=100`,
    `${server.publicBaseUrl}/changes/events`,
    `${server.publicBaseUrl}/events?country=US&from=2026-01-01&to=2026-03-31&limit=100`,
    `${server.publicBaseUrl}/events?city=Amsterdam&from=2026-11-01&to=2027-01-31&limit=100`,
    `${server.embedBaseUrl}/events/evt_jazz01`,
    `${server.embedBaseUrl}/users/alice/events?limit=100`,
    `${server.embedBaseUrl}/events?city=Amsterdam&from=2026-11-01&to=2027-01-31&limit=100`,
  ];
  for (const url of json) {
    const res = await fetch(url, { headers: key });
    expect({ url, status: res.status }).toEqual({ url, status: 200 });
    urlsIn(await res.json(), links);
  }
  for (const path of ['/users/alice/events.ics', '/events/evt_jazz01/event.ics', '/events.ics?city=Amsterdam']) {
    const res = await fetch(`${server.embedBaseUrl}${path}`);
    expect({ path, status: res.status }).toEqual({ path, status: 200 });
    const calendar = new ICAL.Component(ICAL.parse(await res.text()));
    for (const entry of calendar.getAllSubcomponents('vevent')) {
      const url = entry.getFirstPropertyValue('url');
      if (typeof url === 'string') links.add(url);
    }
  }
  return links;
}

describe('every link the local server emits', () => {
  it('resolves on it: event pages, default images, and the answers they point at', async () => {
    const links = await emittedLinks();
    const own = [...links].filter((l) => new URL(l).port === new URL(server.url).port);
    const kinds = new Set(own.map((l) => new URL(l).pathname.split('/')[1]));
    // Both kinds the answers link to: the event page and the default images.
    expect([...kinds].sort()).toEqual(['e', 'images']);
    for (const link of own) {
      const res = await fetch(link, { redirect: 'manual' });
      expect({ link, status: res.status }).toEqual({ link, status: 200 });
      expect(res.headers.get('content-type')).toMatch(new URL(link).pathname.startsWith('/e/') ? /^text\/html/ : /^image\/png/);
      await res.arrayBuffer();
    }
    // Every other origin's link is the dataset's own (an image, a link in a description), verbatim.
    const dataset = JSON.stringify(demoDataset());
    for (const link of links) if (!own.includes(link)) expect({ link, given: dataset.includes(JSON.stringify(link).slice(1, -1)) }).toEqual({ link, given: true });
  });

  it("an event's page shows the event, and links to its answers, which resolve; a hidden event's page is a 404 like its answers", async () => {
    const res = await fetch(`${server.url}/e/evt_jazz01`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; img-src 'self'");
    const html = await res.text();
    const title = ((await (await fetch(`${server.embedBaseUrl}/events/evt_jazz01`)).json()) as { data: { title: string } }).data.title;
    expect(html).toContain(`<h1>${title.replace(/&/g, '&amp;')}</h1>`);
    const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!);
    expect(hrefs).toHaveLength(3);
    for (const href of hrefs) expect({ href, status: (await fetch(new URL(href, server.url), { headers: key })).status }).toEqual({ href, status: 200 });
    for (const hidden of ['evt_secret03', 'evt_draft04', 'evt_nope']) {
      const page = await fetch(`${server.url}/e/${hidden}`);
      expect({ hidden, status: page.status, type: page.headers.get('content-type') }).toEqual({ hidden, status: 404, type: 'text/html; charset=utf-8' });
      await page.arrayBuffer();
    }
  });

  it('escapes what the event says: no markup of a title or description reaches the page', async () => {
    const { renderEventPage } = await import('../../local/event-page.js');
    const hostile = '<script>alert(1)</script>"\'&';
    const stored = await fetchPayload();
    // Only the one read the page makes; the rest of the port is not used.
    const reader = { getPublicEvent: async () => ({ ...stored, title: hostile, description: hostile }) } as unknown as EventReader;
    const page = await renderEventPage(
      reader,
      'evt_jazz01',
      new Date('2026-11-21T12:00:00.000Z'),
      server.url,
    );
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('<script>');
    expect(page.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;');
  });

  it('redirects lead to answers: the old prefix to the Public API, {eventId}.ics to the event feed', async () => {
    for (const [from, expected] of [
      [`${server.url}/api/ext/v1/events/evt_jazz01?x=1`, `${server.publicBaseUrl}/events/evt_jazz01?x=1`],
      [`${server.embedBaseUrl}/events/evt_jazz01.ics`, `${server.embedBaseUrl}/events/evt_jazz01/event.ics`],
    ] as const) {
      const hop = await fetch(from, { headers: key, redirect: 'manual' });
      expect(hop.status).toBe(308);
      const target = new URL(hop.headers.get('location')!, from).href;
      expect(target).toBe(expected);
      const landed = await fetch(target, { headers: key });
      expect({ target, status: landed.status }).toEqual({ target, status: 200 });
    }
  });
});

/** The stored event the Embed use case maps, as the repository hands it (for the escaping check). */
async function fetchPayload(): Promise<Record<string, unknown>> {
  const { DynamoRepository } = await import('../../lambdas/store/reads/repository.js');
  const { createDocumentClient } = await import('../../lambdas/store/table/client.js');
  const client = createDocumentClient({ endpoint: server.storeEndpoint });
  try {
    return (await new DynamoRepository(client, server.tableName).getPublicEvent('evt_jazz01')) as unknown as Record<string, unknown>;
  } finally {
    client.destroy();
  }
}
