/**
 * The outbound guard: everything that connects to an address someone else chose (a webhook's URL) goes through it
 * (ARCHITECTURE rule 13, PRODUCT P18's security list). A leaf: Node and ipaddr.js only, no store, no feed.
 * See docs/design.md, "The outbound guard".
 */
export type { GuardPolicy, Resolver } from './policy.js';
export { checkUrl, checkUrlSyntax, MAX_URL_LENGTH, type UrlCheck } from './url-check.js';
export { guardedPost, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_TIMEOUT_MS, type PostOptions, type PostOutcome, type PostRequest } from './post.js';
export { classifyAddress, describeAddress, type AddressVerdict, type RefusedKind } from './address-classes.js';
