/** Both clients, their errors and the API's types. */
export { PublicClient, createPublicClient, ConfigurationError, type PublicClientOptions } from './public-client.js';
export { EmbedClient, createEmbedClient, type EmbedClientOptions } from './embed-client.js';
export { ApiError, CursorExpiredError, NetworkError, RateLimitError, type FieldError } from './errors.js';
export { ChangeFeed, type FeedPage } from './change-feed.js';
export { PagedList, type Page, type Pagination } from './paged-list.js';
export { CursorList, type CursorPage, type CursorPagination } from './cursor-list.js';
export { Transport, RETRY_DEFAULTS, type Answer, type NoAnswer, type Query, type RetryEvent, type RetryOptions, type TransportHooks, type TransportOptions } from './transport.js';
export { backoffMs, isRetryableStatus, rateLimitResetMs, retryAfterMs } from './retry.js';
export { failureMessage, isSuccess, unwrap } from './envelope.js';
export { verifyWebhook, WebhookVerificationError, WEBHOOK_TOLERANCE_SECONDS, type VerifiedWebhook, type VerifyWebhookOptions, type WebhookDelivery, type WebhookHeaders, type WebhookScope, type WebhookVerificationReason } from './webhooks.js';
export type * from './types.js';
