/**
 * The Embed API client: keyless, CORS-enabled, safe in browsers (nothing here
 * imports from Node). One method per route; JSON reads resolve to the
 * envelope's `data`, calendar feeds to the iCalendar text.
 */
import { toError, unwrap } from './envelope.js';
import { envVar, segment } from './environment.js';
import { CursorList, type CursorPagination } from './cursor-list.js';
import { Transport, type Query, type RetryOptions, type TransportHooks } from './transport.js';
import type { EmbedEvent, EmbedOpenApiDocument, EmbedPlaceFeedParams, EmbedSearchEventsParams, EmbedUserEventsParams } from './types.js';

export interface EmbedClientOptions extends RetryOptions, TransportHooks {
  /** E.g. `https://api.example.com/api/embed/v1`; `EMBED_API_BASE_URL` when absent (or undefined). */
  baseUrl?: string | undefined;
}

export class EmbedClient {
  private readonly transport: Transport;

  constructor(options: EmbedClientOptions = {}) {
    const baseUrl = options.baseUrl ?? envVar('EMBED_API_BASE_URL');
    if (!baseUrl) throw new TypeError('No base URL: pass baseUrl or set EMBED_API_BASE_URL');
    this.transport = new Transport({ ...options, baseUrl });
  }

  private async data<T>(path: string, query?: Query): Promise<T> {
    return unwrap(await this.transport.get(path, query)).data as T;
  }

  private async text(path: string, accept: string, query: Query = {}): Promise<string> {
    const answer = await this.transport.get(path, query, accept);
    if (answer.status === 200) return answer.text;
    throw toError(answer);
  }

  readonly events = {
    /** GET /events/{eventId} */
    get: (eventId: string): Promise<EmbedEvent> => this.data(`/events/${segment('eventId', eventId)}`),
    /** GET /events/{eventId}/event.ics: the event as an iCalendar document. */
    feed: (eventId: string): Promise<string> => this.text(`/events/${segment('eventId', eventId)}/event.ics`, 'text/calendar'),
  };

  readonly users = {
    /** GET /users/{username}/events: up to `limit` events (not paginated). */
    events: (username: string, params: EmbedUserEventsParams = {}): Promise<EmbedEvent[]> =>
      this.data(`/users/${segment('username', username)}/events`, params),
    /** GET /users/{username}/events.ics: the user's events as an iCalendar feed. */
    feed: (username: string): Promise<string> => this.text(`/users/${segment('username', username)}/events.ics`, 'text/calendar'),
  };

  /**
   * GET /events (discovery): a place's public events by local start date,
   * earliest first, every page, as Embed objects. `city`, `country` or both.
   */
  searchEvents(params: EmbedSearchEventsParams): CursorList<EmbedEvent> {
    const { cursor: start, ...query } = params;
    return new CursorList<EmbedEvent>(async (cursor) => {
      const data = await this.data<{ events: EmbedEvent[]; pagination: CursorPagination }>('/events', { ...query, ...(cursor !== undefined ? { cursor } : {}) });
      return { items: data.events, pagination: data.pagination };
    }, start);
  }

  /** GET /events.ics: a place's events (from the week before today to 30 days on) as an iCalendar feed. `city`, `country` or both. */
  placeFeed(params: EmbedPlaceFeedParams): Promise<string> {
    return this.text('/events.ics', 'text/calendar', params);
  }

  /** GET /openapi.json: the API's own description. */
  async openapi(): Promise<EmbedOpenApiDocument> {
    const answer = await this.transport.get('/openapi.json');
    if (answer.status === 200 && answer.json) return answer.json as EmbedOpenApiDocument;
    throw toError(answer);
  }
}

export const createEmbedClient = (options?: EmbedClientOptions): EmbedClient => new EmbedClient(options);
