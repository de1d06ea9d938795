/**
 * Public Events embed widget. A host page adds one element and one tag:
 *
 *   <div data-events-user="alice"></div>
 *   <script src="https://…/embed/widget.js" async></script>
 *
 * or `data-events-event="evt_…"` for a single event, or `data-events-city` /
 * `data-events-country` (either or both) for a place's next events. Optional
 * attributes (see docs/embed.md, "Embed widget"): `data-show` (upcoming |
 * past | all), `data-limit`, `data-from`, `data-to`, `data-locale`,
 * `data-heading-level`, `data-api`.
 *
 * Text is set with textContent; descriptions are Markdown built into DOM
 * nodes by a bounded renderer (markdown.ts), never inserted as HTML, so the
 * widget needs no Trusted Types policy. A card that cannot be rendered
 * falls back to plain text, alone. Styles live in a shadow root (the host's
 * CSS cannot break the card, nor the card the host's page) as a constructed
 * stylesheet, which a host's `style-src` does not block; font and colour are
 * inherited from the host, so it follows the host's light or dark look.
 */
import { renderMarkdown } from './markdown.js';

interface EmbedEvent {
  id: string;
  title: string;
  description: string | null;
  cover: string | null;
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

type Show = 'upcoming' | 'past' | 'all';

const script = document.currentScript as HTMLScriptElement | null;
const DEFAULT_API = `${script?.src ? new URL(script.src).origin : location.origin}/api/embed/v1`;
const STATUS_TEXT = { upcoming: 'Upcoming', ongoing: 'Happening now', past: 'Past' } as const;
const DEFAULT_LIMIT = 10;
/**
 * The Embed API filters on start. An event that started before now can still
 * be on (an event without an end is on until the end of its local day, at
 * most 25 hours), so "upcoming" asks from 25 hours back and drops what is
 * past; "past" asks up to now, latest first, and drops what is still on. A
 * few extra rows leave room for the dropped ones.
 */
const LOOKBACK_MS = 25 * 3600_000;
const SLACK = 10;

const STYLES = `
:host{display:block;font:inherit;color:inherit}
.pe{container-type:inline-size}
.pe-list{list-style:none;margin:0;padding:0;display:grid;gap:1em}
.pe-card{border:1px solid color-mix(in srgb,currentColor 25%,transparent);border-radius:.6em;overflow:hidden;display:grid}
.pe-cover{display:block;width:100%;height:auto;aspect-ratio:16/9;object-fit:cover;background:color-mix(in srgb,currentColor 8%,transparent)}
.pe-body{padding:.75em 1em;min-width:0}
@container (min-width:34em){.pe-card:has(.pe-cover){grid-template-columns:minmax(0,13em) 1fr}.pe-cover{height:100%;aspect-ratio:auto;min-height:8em}}
.pe-title{font-size:1.15em;line-height:1.3;margin:0 0 .3em;display:flex;flex-wrap:wrap;gap:.2em .6em;align-items:baseline}
.pe-title a{color:inherit;overflow-wrap:anywhere}
.pe-meta{margin:.15em 0}
.pe-tz{white-space:nowrap}
.pe-desc{margin:.6em 0 0;overflow-wrap:anywhere}
.pe-desc>:first-child{margin-top:0}.pe-desc>:last-child{margin-bottom:0}
.pe-desc p,.pe-desc ul,.pe-desc ol,.pe-desc pre,.pe-desc blockquote{margin:.4em 0}
.pe-desc pre{white-space:pre-wrap}
.pe-desc blockquote{padding-left:.8em;border-left:3px solid color-mix(in srgb,currentColor 30%,transparent)}
.pe-desc a,.pe-actions a{color:inherit}
.pe-actions{margin:.6em 0 0;display:flex;flex-wrap:wrap;gap:.25em 1em;font-size:.9em}
.pe-status{font-size:.72em;font-weight:600;padding:.1em .55em;border-radius:1em;border:1px solid;white-space:nowrap}
.pe-status--ongoing{background:#0b6b2e;color:#fff;border-color:#0b6b2e}
.pe-status--upcoming{background:#e8f0fe;color:#0b3d91;border-color:#0b3d91}
.pe-status--past{background:#f1f1f1;color:#3b3b3b;border-color:#6b6b6b}
.pe-note{margin:0}
.pe-sub{margin:0 0 .75em;font-size:.9em}
.pe-sub a{color:inherit}
a:focus-visible{outline:2px solid currentColor;outline-offset:2px;border-radius:2px}
.pe-sr{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (prefers-color-scheme:dark){
.pe-status--upcoming{background:#16284a;color:#cfe0ff;border-color:#8fb4f0}
.pe-status--past{background:#2b2b2b;color:#dadada;border-color:#9a9a9a}
}
`;

/** One constructed stylesheet for every widget of the page (adoptedStyleSheets: no <style> element for CSP to refuse). */
let sheet: CSSStyleSheet | null = null;
function styleShadow(root: ShadowRoot): void {
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet !== 'undefined' && 'replaceSync' in CSSStyleSheet.prototype) {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(STYLES);
    }
    root.adoptedStyleSheets = [sheet];
  } else {
    // Browsers without constructed stylesheets (before 2023): a <style> element, which a strict style-src refuses.
    const style = document.createElement('style');
    style.textContent = STYLES;
    root.append(style);
  }
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function link(href: string, text: string, className?: string): HTMLAnchorElement {
  const a = el('a', className, text);
  a.href = href;
  return a;
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** "Chicago time" for America/Chicago, "Buenos Aires time" for America/Argentina/Buenos_Aires; other zones by name. */
function zoneLabel(zone: string): string {
  if (!validZone(zone)) return 'UTC';
  const parts = zone.split('/');
  const city = parts[parts.length - 1]!.replace(/_/g, ' ');
  return parts.length > 1 && parts[0] !== 'Etc' ? `${city} time` : zone;
}

function formatWhen(e: EmbedEvent, locale: string | undefined): string {
  const format = new Intl.DateTimeFormat(locale, {
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    timeZone: validZone(e.timezone) ? e.timezone : 'UTC',
  });
  const start = new Date(e.start_date);
  return e.end_date ? format.formatRange(start, new Date(e.end_date)) : format.format(start);
}

function card(e: EmbedEvent, opts: { locale?: string; headingId: string; headingLevel: number; api: string }): HTMLElement {
  const article = el('article', 'pe-card');
  article.setAttribute('aria-labelledby', opts.headingId);
  if (e.cover) {
    const img = el('img', 'pe-cover');
    img.src = e.cover;
    img.alt = `Cover image of ${e.title}`;
    img.loading = 'lazy';
    // The image's host learns nothing of the page the visitor is on.
    img.referrerPolicy = 'no-referrer';
    img.decoding = 'async';
    img.width = 640;
    img.height = 360;
    // A cover that fails to load leaves no broken-image box.
    img.addEventListener('error', () => img.remove());
    article.append(img);
  }
  const body = el('div', 'pe-body');
  const heading = el(`h${opts.headingLevel}` as 'h3', 'pe-title');
  heading.id = opts.headingId;
  const title = link(e.url, e.title);
  title.target = '_blank';
  title.rel = 'noopener';
  heading.append(title, el('span', `pe-status pe-status--${e.status}`, STATUS_TEXT[e.status]));
  const when = el('time', undefined, formatWhen(e, opts.locale));
  when.dateTime = e.start_date;
  const meta = el('p', 'pe-meta pe-when');
  meta.append(when, ' ', el('span', 'pe-tz', `(${zoneLabel(e.timezone)})`));
  body.append(heading, meta);
  if (e.location) {
    const place = [e.location.name, [e.location.city, e.location.country].filter(Boolean).join(', ')].filter(Boolean).join(' · ');
    body.append(el('p', 'pe-meta pe-where', place));
  }
  if (e.description) {
    const desc = el('div', 'pe-desc');
    try {
      desc.append(renderMarkdown(e.description));
    } catch {
      // Too deep or too much work to render as Markdown: the description as the text it is.
      desc.replaceChildren();
      desc.textContent = e.description;
    }
    body.append(desc);
  }
  const actions = el('p', 'pe-actions');
  const add = link(`${opts.api}/events/${encodeURIComponent(e.id)}/event.ics`, 'Add to calendar', 'pe-ics');
  add.append(el('span', 'pe-sr', `: ${e.title}`));
  actions.append(add);
  body.append(actions);
  article.append(body);
  return article;
}

/** A card that could not be rendered: title, time and place as plain text, so one event never blanks the list. */
function plainCard(e: EmbedEvent, headingId: string): HTMLElement {
  const article = el('article', 'pe-card');
  article.setAttribute('aria-labelledby', headingId);
  const body = el('div', 'pe-body');
  const heading = el('p', 'pe-title', String(e.title ?? ''));
  heading.id = headingId;
  body.append(heading, el('p', 'pe-meta', String(e.start_date ?? '')));
  if (typeof e.description === 'string') body.append(el('p', 'pe-desc', e.description));
  article.append(body);
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

/** Whole minutes, so visitors in the same minute share one cacheable URL. */
const minuteIso = (ms: number) => new Date(Math.floor(ms / 60_000) * 60_000).toISOString();

async function userEvents(api: string, user: string, host: HTMLElement): Promise<EmbedEvent[]> {
  const show = (host.dataset.show || 'upcoming') as Show;
  if (!['upcoming', 'past', 'all'].includes(show)) throw new Error('data-show must be upcoming, past or all.');
  const limit = Math.min(100, Math.max(1, Number.parseInt(host.dataset.limit ?? '', 10) || DEFAULT_LIMIT));
  const now = Date.now();
  const query = new URLSearchParams();
  const from = host.dataset.from || (show === 'upcoming' ? minuteIso(now - LOOKBACK_MS) : '');
  const to = host.dataset.to || (show === 'past' ? minuteIso(now) : '');
  if (from) query.set('from', from);
  if (to) query.set('to', to);
  if (show === 'past') query.set('order', 'desc');
  query.set('limit', String(show === 'all' ? limit : Math.min(100, limit + SLACK)));
  const events = await load<EmbedEvent[]>(`${api}/users/${encodeURIComponent(user)}/events?${query}`);
  const keep = (e: EmbedEvent) => (show === 'upcoming' ? e.status !== 'past' : show === 'past' ? e.status === 'past' : true);
  return events.filter(keep).slice(0, limit);
}

/** Pages of a place's list the widget reads at most to find `data-limit` events not yet over. */
const PLACE_PAGES = 10;
const DAY_MS = 86_400_000;

/**
 * A place's next events (PRODUCT P17). Discovery goes by each event's local
 * start date, and the widget does not know the place's time zone: from
 * yesterday's UTC date on, since a place's "today" is yesterday's UTC date
 * anywhere west of UTC in the evening (Los Angeles from 16:00), so tonight's
 * events are in the window wherever the viewer is. Events already over are
 * dropped (as the user list's "upcoming" drops them), and the list is read
 * page after page until it has `data-limit` of those still to come: on a
 * busy day the first pages may hold only finished ones. data-from / data-to
 * (dates) replace the window.
 */
async function placeEvents(api: string, place: URLSearchParams, host: HTMLElement): Promise<EmbedEvent[]> {
  const limit = Math.min(100, Math.max(1, Number.parseInt(host.dataset.limit ?? '', 10) || DEFAULT_LIMIT));
  const query = new URLSearchParams(place);
  const yesterday = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS).toISOString().slice(0, 10);
  query.set('from', host.dataset.from || yesterday);
  if (host.dataset.to) query.set('to', host.dataset.to);
  query.set('limit', String(Math.min(100, limit + SLACK)));
  const kept: EmbedEvent[] = [];
  for (let page = 0, cursor: string | undefined; page < PLACE_PAGES; page++) {
    const paged = new URLSearchParams(query);
    if (cursor) paged.set('cursor', cursor);
    const { events, pagination } = await load<{ events: EmbedEvent[]; pagination?: { has_more?: boolean; next_cursor?: string } }>(`${api}/events?${paged}`);
    kept.push(...events.filter((e) => e.status !== 'past'));
    cursor = pagination?.has_more ? pagination.next_cursor : undefined;
    if (kept.length >= limit || !cursor) break;
  }
  return kept.slice(0, limit);
}

/** The place attributes as the API's query (`city`, `country`), and the words that name the place. */
function placeOf(host: HTMLElement): { query: URLSearchParams; name: string } | null {
  // data-city / data-country: the names PRODUCT P17 gives; data-events-city / -country: the house's prefix, safe on a page that uses the bare names itself.
  const city = (host.dataset.eventsCity ?? host.dataset.city)?.trim();
  const country = (host.dataset.eventsCountry ?? host.dataset.country)?.trim();
  if (!city && !country) return null;
  const query = new URLSearchParams();
  if (city) query.set('city', city);
  if (country) query.set('country', country);
  return { query, name: [city, country].filter(Boolean).join(', ') };
}

/** webcal:// makes calendar apps subscribe; over plain http (local use) the feed's own URL. */
function subscribeUrl(feed: string): string {
  return feed.startsWith('https:') ? `webcal:${feed.slice('https:'.length)}` : feed;
}

let mounted = 0;

async function mount(host: HTMLElement): Promise<void> {
  if (host.shadowRoot) return;
  const root = host.attachShadow({ mode: 'open' });
  styleShadow(root);
  const region = el('section', 'pe');
  const user = host.dataset.eventsUser;
  const eventId = host.dataset.eventsEvent;
  const place = user ? null : placeOf(host);
  // Labels tell apart several widgets on one page (distinct landmarks).
  const show = host.dataset.show || 'upcoming';
  const label = (text: string) => region.setAttribute('aria-label', text);
  label(user ? `${show === 'upcoming' ? 'Upcoming events' : show === 'past' ? 'Past events' : 'Events'} by ${user}` : place ? `Upcoming events in ${place.name}` : 'Event');
  region.setAttribute('aria-busy', 'true');
  const status = el('p', 'pe-note', 'Loading events…');
  status.setAttribute('role', 'status');
  region.append(status);
  root.append(region);

  const api = new URL((host.dataset.api || DEFAULT_API).replace(/\/+$/, ''), location.href).href;
  const locale = host.dataset.locale || undefined;
  const headingLevel = Math.min(6, Math.max(2, Number.parseInt(host.dataset.headingLevel ?? '', 10) || 3));
  const id = `pe-${++mounted}`;
  try {
    let events: EmbedEvent[];
    const subscribe = (feed: string, text: string) => {
      const sub = el('p', 'pe-sub');
      sub.append(link(subscribeUrl(feed), text, 'pe-subscribe'));
      region.prepend(sub);
    };
    if (user) {
      events = await userEvents(api, user, host);
      subscribe(`${api}/users/${encodeURIComponent(user)}/events.ics`, `Subscribe to ${user}'s events in your calendar`);
    } else if (place) {
      events = await placeEvents(api, place.query, host);
      subscribe(`${api}/events.ics?${place.query}`, `Subscribe to events in ${place.name} in your calendar`);
    } else if (eventId) {
      events = [await load<EmbedEvent>(`${api}/events/${encodeURIComponent(eventId)}`)];
      label(`Event: ${events[0]!.title}`);
    } else {
      throw new Error('Set data-events-user, data-events-event, or data-city / data-country.');
    }
    if (events.length === 0) {
      status.textContent = 'No events to show.';
    } else {
      const list = el('ul', 'pe-list');
      events.forEach((e, i) => {
        const item = el('li');
        const headingId = `${id}-${i}`;
        let built: HTMLElement;
        try {
          built = card(e, { locale, headingId, headingLevel, api });
        } catch {
          built = plainCard(e, headingId);
        }
        item.append(built);
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
  document.querySelectorAll<HTMLElement>('[data-events-user],[data-events-event],[data-events-city],[data-events-country],[data-city],[data-country]').forEach((node) => void mount(node));
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();
