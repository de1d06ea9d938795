/**
 * Public Events embed widget. A host page adds one element and one tag:
 *
 *   <div data-events-user="alice"></div>
 *   <script src="https://…/embed/widget.js" async></script>
 *
 * or `data-events-event="evt_…"` for a single event. Optional attributes:
 * `data-limit`, `data-from`, `data-to` (user lists), `data-locale` (default:
 * the visitor's), `data-api` (Embed API base; default: the script's origin +
 * /api/embed/v1).
 *
 * No dependencies. All text is set with textContent, never parsed as HTML, so
 * markup in titles or descriptions is shown as text. Styles live in a shadow
 * root (the host's CSS cannot break the card, nor the card the host's page),
 * and font and colour are inherited from the host.
 */

interface EmbedEvent {
  id: string;
  title: string;
  description: string | null;
  start_date: string;
  end_date: string | null;
  timezone: string;
  location: { name: string; city: string | null; country: string | null } | null;
  url: string;
  creator: { username: string; verified: boolean };
  status: 'upcoming' | 'ongoing' | 'past';
}

interface Envelope<T> {
  success: boolean;
  message: string;
  data?: T;
}

const script = document.currentScript as HTMLScriptElement | null;
const DEFAULT_API = `${script?.src ? new URL(script.src).origin : location.origin}/api/embed/v1`;
const STATUS_TEXT = { upcoming: 'Upcoming', ongoing: 'Happening now', past: 'Past' } as const;

const STYLES = `
:host{display:block;font:inherit;color:inherit}
.pe-list{list-style:none;margin:0;padding:0;display:grid;gap:.75em}
.pe-card{border:1px solid color-mix(in srgb,currentColor 20%,transparent);border-radius:.5em;padding:.75em 1em}
.pe-title{font-size:1.1em;margin:0 0 .25em;display:flex;flex-wrap:wrap;gap:.5em;align-items:baseline}
.pe-title a{color:inherit}
.pe-meta{margin:.15em 0;opacity:.85}
.pe-desc{margin:.5em 0 0;white-space:pre-line;overflow-wrap:anywhere}
.pe-status{font-size:.75em;font-weight:600;padding:.1em .5em;border-radius:1em;border:1px solid currentColor}
.pe-status--ongoing{background:#0b6b2e;color:#fff;border-color:#0b6b2e}
.pe-status--upcoming{background:#e8f0fe;color:#0b3d91;border-color:#0b3d91}
.pe-status--past{opacity:.75}
.pe-note{margin:0}
`;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function formatWhen(e: EmbedEvent, locale: string | undefined): string {
  const options: Intl.DateTimeFormatOptions = {
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    timeZoneName: 'short',
  };
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat(locale, { ...options, timeZone: e.timezone });
  } catch {
    format = new Intl.DateTimeFormat(locale, { ...options, timeZone: 'UTC' });
  }
  const start = new Date(e.start_date);
  return e.end_date ? format.formatRange(start, new Date(e.end_date)) : format.format(start);
}

function card(e: EmbedEvent, locale: string | undefined, headingId: string): HTMLElement {
  const article = el('article', 'pe-card');
  article.setAttribute('aria-labelledby', headingId);
  const heading = el('h3', 'pe-title');
  heading.id = headingId;
  const link = el('a', undefined, e.title);
  link.href = e.url;
  link.target = '_blank';
  link.rel = 'noopener';
  heading.append(link, el('span', `pe-status pe-status--${e.status}`, STATUS_TEXT[e.status]));
  const when = el('time', undefined, formatWhen(e, locale));
  when.dateTime = e.start_date;
  const meta = el('p', 'pe-meta pe-when');
  meta.append(when);
  article.append(heading, meta);
  if (e.location) {
    const place = [e.location.name, [e.location.city, e.location.country].filter(Boolean).join(', ')].filter(Boolean).join(' · ');
    article.append(el('p', 'pe-meta pe-where', place));
  }
  if (e.description) article.append(el('p', 'pe-desc', e.description));
  return article;
}

async function load<T>(url: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' } });
  } catch {
    throw new Error('The events service could not be reached.');
  }
  const body = (await res.json().catch(() => null)) as Envelope<T> | null;
  if (!res.ok || !body?.success || body.data === undefined) throw new Error(body?.message || `The events service answered ${res.status}.`);
  return body.data;
}

let mounted = 0;

async function mount(host: HTMLElement): Promise<void> {
  if (host.shadowRoot) return;
  const root = host.attachShadow({ mode: 'open' });
  const style = el('style');
  style.textContent = STYLES;
  const region = el('section', 'pe');
  const user = host.dataset.eventsUser;
  const eventId = host.dataset.eventsEvent;
  region.setAttribute('aria-label', user ? `Events by ${user}` : 'Event');
  region.setAttribute('aria-busy', 'true');
  const status = el('p', 'pe-note', 'Loading events…');
  status.setAttribute('role', 'status');
  region.append(status);
  root.append(style, region);

  const api = (host.dataset.api || DEFAULT_API).replace(/\/+$/, '');
  const locale = host.dataset.locale || undefined;
  const id = `pe-${++mounted}`;
  try {
    let events: EmbedEvent[];
    if (user) {
      const query = new URLSearchParams();
      for (const name of ['limit', 'from', 'to'] as const) {
        const value = host.dataset[name];
        if (value) query.set(name, value);
      }
      const qs = query.toString();
      events = await load<EmbedEvent[]>(`${api}/users/${encodeURIComponent(user)}/events${qs ? `?${qs}` : ''}`);
    } else if (eventId) {
      events = [await load<EmbedEvent>(`${api}/events/${encodeURIComponent(eventId)}`)];
    } else {
      throw new Error('Set data-events-user or data-events-event.');
    }
    if (events.length === 0) {
      status.textContent = 'No events to show.';
    } else {
      const list = el('ul', 'pe-list');
      events.forEach((e, i) => {
        const item = el('li');
        item.append(card(e, locale, `${id}-${i}`));
        list.append(item);
      });
      status.remove();
      region.append(list);
    }
  } catch (error) {
    status.setAttribute('role', 'alert');
    status.textContent = `Events could not be loaded: ${(error as Error).message}`;
  } finally {
    region.setAttribute('aria-busy', 'false');
  }
}

function init(): void {
  document.querySelectorAll<HTMLElement>('[data-events-user],[data-events-event]').forEach((node) => void mount(node));
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();

// A module, so its names stay out of the host page’s global scope.
export {};
