/** The browser entry (`public-events-client/embed`): the Embed API client alone, with its errors and types. */
export { EmbedClient, createEmbedClient, type EmbedClientOptions } from './embed-client.js';
export { ApiError, NetworkError, RateLimitError, type FieldError } from './errors.js';
export type { RetryEvent, RetryOptions, TransportHooks } from './transport.js';
export { CursorList, type CursorPage, type CursorPagination } from './cursor-list.js';
export type { EmbedEvent, EmbedOpenApiDocument, EmbedPlaceFeedParams, EmbedSearchEventsParams, EmbedUserEventsParams } from './types.js';
