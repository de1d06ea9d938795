/**
 * The most an unpaginated list (variant A, /profile-events) answers with.
 * Lambda refuses a response over 6 MB; these bounds keep every answer well
 * under it, and bound the read too: at most UNPAGINATED_MAX_EVENTS + 1 items
 * are read, whatever the window holds. The use cases enforce them
 * (queries.ts) and the response schemas state them (response-schemas.ts), so
 * they live below both.
 */
export const UNPAGINATED_MAX_EVENTS = 500;
/** Serialised events, in the bytes Lambda's response takes for them (lambdas/core/response-size.ts). */
export const UNPAGINATED_MAX_BYTES = 4_000_000;
