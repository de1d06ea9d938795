/**
 * The changes feeds' parts (PRODUCT P16, docs/data-model.md "Changes feeds"),
 * one module for the rest of the store to import:
 * - feed-layout.ts: the partition, its heads, chunks and members, their keys and bounds;
 * - feed-scopes.ts: which scopes a derived item's versions owe an entry;
 * - feed-append.ts: membership and appends (FeedWriter), and feed-flush.ts: a head's flush;
 * - feed-entries.ts: the ranges a page reads and the entries they hold (feed-reads.ts reads them).
 */
export * from './feed-layout.js';
export * from './feed-scopes.js';
export * from './feed-append.js';
export * from './feed-flush.js';
export * from './feed-entries.js';
