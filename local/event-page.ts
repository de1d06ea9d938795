/**
 * The local stand-in for the web product's event page, `{siteUrl}/e/{eventId}`.
 *
 * Every event object points there (the Public and Embed `url`, the calendar
 * feeds' `URL`, the widget's title links), and locally siteUrl is the local
 * server itself (docs/local-server.md). The web product owns the real page;
 * without a stand-in each of those links was a JSON 404 on the local
 * server. The page shows what the Embed API shows of a public event (through
 * the same use case, so a hidden event is a 404 here too) and links to its
 * answers on both APIs and its calendar. Plain HTML, every value escaped, no
 * script and no style, under a CSP that allows neither.
 */
import type { ServerResponse } from 'node:http';
import { embedEvent } from '../lambdas/core/embed-queries.js';
import type { EventReader } from '../lambdas/core/ports.js';
import { EVENT_ID_PATTERN } from '../lambdas/core/ids.js';
import { SURFACES } from '../lambdas/routes.js';

export const EVENT_PAGE_PREFIX = '/e/';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** The event id of an event page's path, or undefined for any other path (or a malformed id). */
export function eventPageId(path: string): string | undefined {
  if (!path.startsWith(EVENT_PAGE_PREFIX)) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(path.slice(EVENT_PAGE_PREFIX.length));
  } catch {
    return undefined;
  }
  return EVENT_ID_PATTERN.test(id) ? id : undefined;
}

function page(status: number, title: string, body: string): { status: number; html: string } {
  return {
    status,
    html: `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body>\n${body}\n<p><small>The local server's stand-in for the web product's event page.</small></p>\n</body></html>\n`,
  };
}

/** The page of one event: its Embed object's fields, or a 404 page when the Embed API would answer 404. */
export async function renderEventPage(reader: EventReader, eventId: string, now: Date, siteUrl: string): Promise<{ status: number; html: string }> {
  let event;
  try {
    event = (await embedEvent(reader, eventId, now, siteUrl)).data;
  } catch {
    return page(404, 'Event not found', '<h1>Event not found</h1>\n<p>No public event has this id.</p>');
  }
  const id = encodeURIComponent(event.id);
  const place = event.location ? [event.location.name, event.location.city, event.location.country].filter(Boolean).join(', ') : '';
  const lines = [
    `<h1>${escape(event.title)}</h1>`,
    `<p><time datetime="${escape(event.start_date)}">${escape(event.start_date)}</time>${event.end_date ? ` to <time datetime="${escape(event.end_date)}">${escape(event.end_date)}</time>` : ''} (${escape(event.timezone)}), ${escape(event.status)}</p>`,
    place ? `<p>${escape(place)}</p>` : '',
    `<p>Hosted by @${escape(event.creator.username)}</p>`,
    event.description ? `<pre>${escape(event.description)}</pre>` : '',
    '<ul>',
    `<li><a href="${SURFACES.embed}/events/${id}">Embed API</a></li>`,
    `<li><a href="${SURFACES.embed}/events/${id}/event.ics">Calendar (.ics)</a></li>`,
    `<li><a href="${SURFACES.public}/events/${id}">Public API</a> (needs a key)</li>`,
    '</ul>',
  ];
  return page(200, event.title, lines.filter(Boolean).join('\n'));
}

export function serveEventPage(res: ServerResponse, rendered: { status: number; html: string }, head: boolean): void {
  res.writeHead(rendered.status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; img-src 'self'",
    'x-content-type-options': 'nosniff',
  });
  res.end(head ? undefined : rendered.html);
}
