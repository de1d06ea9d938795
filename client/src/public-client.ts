/**
 * The Public API client: one method per route. Single reads resolve to the
 * envelope's `data`; paginated lists are PagedLists (async iterables that stop
 * at `total`), discovery a CursorList (it follows `next_cursor`), the changes
 * feeds ChangeFeeds. Failures throw ApiError (or RateLimitError / NetworkError).
 *
 * Keys stay server-side: in a browser the client refuses to be built with a
 * key unless `dangerouslyAllowBrowser` is set.
 */
import { toError, unwrap } from './envelope.js';
import { envVar, inBrowser, segment } from './environment.js';
import { PagedList, type Page, type Pagination } from './paged-list.js';
import { ChangeFeed, type FeedPage } from './change-feed.js';
import { CursorList, type CursorPagination } from './cursor-list.js';
import { Transport, type Query, type RetryOptions, type TransportHooks } from './transport.js';
import type {
  ChangeFeedParams,
  EventChange,
  GuestChange,
  EventGuestsParams,
  FollowPlaceParams,
  Guest,
  PublicEvent,
  PublicOpenApiDocument,
  SearchEventsParams,
  UserEventsParams,
  UserPastEventsParams,
  UserProfileEventsParams,
  UserUpcomingEventsParams,
} from './types.js';

export interface PublicClientOptions extends RetryOptions, TransportHooks {
  /** The key; `PUBLIC_API_KEY` from the environment when absent (or undefined). */
  apiKey?: string | undefined;
  /** E.g. `https://api.example.com/api/public/v1`; `PUBLIC_API_BASE_URL` when absent (or undefined). */
  baseUrl?: string | undefined;
  /**
   * The header that carries the key: `authorization` (default, sent as
   * `Bearer <key>`) or the service's `x-<service>-api-key` header.
   */
  keyHeader?: string | undefined;
  /** Send the key from a browser anyway (it becomes public there). Default false. */
  dangerouslyAllowBrowser?: boolean | undefined;
}

export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

export class PublicClient {
  private readonly transport: Transport;

  constructor(options: PublicClientOptions = {}) {
    if (inBrowser() && !options.dangerouslyAllowBrowser) {
      throw new ConfigurationError('The Public API key must stay on a server: this looks like a browser. Use the Embed API here, or set dangerouslyAllowBrowser.');
    }
    const apiKey = options.apiKey ?? envVar('PUBLIC_API_KEY');
    if (!apiKey) throw new ConfigurationError('No API key: pass apiKey or set PUBLIC_API_KEY');
    const baseUrl = options.baseUrl ?? envVar('PUBLIC_API_BASE_URL');
    if (!baseUrl) throw new ConfigurationError('No base URL: pass baseUrl or set PUBLIC_API_BASE_URL');
    const header = (options.keyHeader ?? 'authorization').toLowerCase();
    this.transport = new Transport({
      ...options,
      baseUrl,
      headers: { [header]: header === 'authorization' ? `Bearer ${apiKey}` : apiKey },
    });
  }

  private async data<T>(path: string, query?: Query): Promise<T> {
    return unwrap(await this.transport.get(path, query)).data as T;
  }

  /** A list whose pages come as `{data: T[], pagination}`. */
  private list<T>(path: string, params: Query & { limit?: number | undefined; offset?: number | undefined }): PagedList<T> {
    const { limit, offset, ...rest } = params;
    return new PagedList<T>(async (size, from): Promise<Page<T>> => {
      const body = unwrap(await this.transport.get(path, { ...rest, limit: size, offset: from }));
      return { items: body.data as T[], pagination: body.pagination as Pagination };
    }, limit, offset);
  }

  readonly events = {
    /** GET /events/{eventId} */
    get: (eventId: string): Promise<PublicEvent> => this.data(`/events/${segment('eventId', eventId)}`),
    /** GET /events/{eventId}/guests: the linked guests, paginated. */
    guests: (eventId: string, params: EventGuestsParams = {}): PagedList<Guest> =>
      this.list(`/events/${segment('eventId', eventId)}/guests`, params),
  };

  readonly users = {
    /**
     * GET /users/{username}/events, paginated. Its pages are `{events,
     * pagination}`; a deployment configured for the dated variant answers
     * the whole list at once, read here as a single page.
     */
    events: (username: string, params: UserEventsParams = {}): PagedList<PublicEvent> => {
      const path = `/users/${segment('username', username)}/events`;
      const { limit, offset, ...rest } = params;
      return new PagedList<PublicEvent>(async (size, from) => {
        const data = unwrap(await this.transport.get(path, { ...rest, limit: size, offset: from })).data as
          | { events: PublicEvent[]; pagination: Pagination }
          | PublicEvent[];
        if (Array.isArray(data)) return { items: data, pagination: { limit: data.length, offset: 0, total: data.length } };
        return { items: data.events, pagination: data.pagination };
      }, limit, offset);
    },
    /** GET /users/{username}/profile-events: hosted and attended events, the whole list (not paginated). */
    profileEvents: (username: string, params: UserProfileEventsParams = {}): Promise<PublicEvent[]> =>
      this.data(`/users/${segment('username', username)}/profile-events`, params),
    /** GET /users/{username}/upcoming-events, paginated. */
    upcomingEvents: (username: string, params: UserUpcomingEventsParams = {}): PagedList<PublicEvent> =>
      this.list(`/users/${segment('username', username)}/upcoming-events`, params),
    /** GET /users/{username}/past-events, paginated. */
    pastEvents: (username: string, params: UserPastEventsParams = {}): PagedList<PublicEvent> =>
      this.list(`/users/${segment('username', username)}/past-events`, params),
  };

  /**
   * GET /events (discovery): a place's public events by local start date,
   * earliest first, every page (`limit` is the page size; `cursor` a saved
   * `next_cursor` to resume from). `city`, `country` or both.
   */
  searchEvents(params: SearchEventsParams): CursorList<PublicEvent> {
    const { cursor: start, ...query } = params;
    return new CursorList<PublicEvent>(async (cursor) => {
      const data = unwrap(await this.transport.get('/events', { ...query, ...(cursor !== undefined ? { cursor } : {}) })).data as { events: PublicEvent[]; pagination: CursorPagination };
      return { items: data.events, pagination: data.pagination };
    }, start);
  }

  /**
   * GET /changes/places/events: what changed in a place's public events (past
   * ones included) since the cursor; an event that moves away, goes private
   * or is deleted comes as `removed`. `city`, `country` or both.
   */
  followPlace(params: FollowPlaceParams): ChangeFeed<EventChange> {
    const { city, country, ...feed } = params;
    return this.feed('/changes/places/events', feed, { city, country });
  }

  private feed<C>(path: string, params: ChangeFeedParams, scope: Query = {}): ChangeFeed<C> {
    return new ChangeFeed<C>(
      async (cursor, limit) => unwrap(await this.transport.get(path, { ...scope, ...(cursor !== undefined ? { cursor } : {}), ...(limit !== undefined ? { limit } : {}) })).data as FeedPage<C>,
      params.cursor,
      params.limit,
    );
  }

  /**
   * The changes feeds: `for await (const change of client.changes.events({ cursor }))`
   * reads until up to date; save `feed.cursor` with what you applied. An
   * expired cursor throws CursorExpiredError.
   */
  readonly changes = {
    /** GET /changes/events: every public event. */
    events: (params: ChangeFeedParams = {}): ChangeFeed<EventChange> => this.feed('/changes/events', params),
    /** GET /changes/users/{username}/events: the events a user hosts (the cursor follows the user across renames). */
    userEvents: (username: string, params: ChangeFeedParams = {}): ChangeFeed<EventChange> =>
      this.feed(`/changes/users/${segment('username', username)}/events`, params),
    /** GET /changes/events/{eventId}/guests: an event's guests (scope guests:read). */
    guests: (eventId: string, params: ChangeFeedParams = {}): ChangeFeed<GuestChange> =>
      this.feed(`/changes/events/${segment('eventId', eventId)}/guests`, params),
  };

  /** GET /openapi.json: the API's own description. */
  async openapi(): Promise<PublicOpenApiDocument> {
    const answer = await this.transport.get('/openapi.json');
    if (answer.status === 200 && answer.json) return answer.json as PublicOpenApiDocument;
    throw toError(answer);
  }
}

export const createPublicClient = (options?: PublicClientOptions): PublicClient => new PublicClient(options);
