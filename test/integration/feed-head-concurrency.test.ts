/**
 * The feed heads' size and an append's cost with many appenders at once
 * (issue 44, item 3: "hot items stay small"; docs/data-model.md "Changes
 * feeds", docs/performance.md "The feed head").
 *
 * An entry stays in a head from its append until a chunk holding it is
 * written and the head trimmed: two more round trips after the append. With
 * N appenders appending back to back a head therefore holds about 2·N
 * entries on top of its flush size (Little's law). With one head per scope,
 * 16 appenders and ids of the contract's 68 characters kept it at 1.6 KB on
 * average (2.5 KB at most), so an append was billed 2.7 write units and one
 * event's guest feed took about 370 appends a second. The head shards share
 * those entries: a scope's appends spread over FEED_SHARDS heads by member
 * id, so each holds about 2·N/FEED_SHARDS.
 *
 * Held here, on dynalite, with the bench's own metering (scripts/bench-head.ts:
 * billed from the images the writes return, so the race is not perturbed):
 * 16 appenders × 64 appends, ids of a UUID's length and of the longest, the
 * mean head at an append at most 1 KB and at most 1.3 billed write units an
 * append, its flushes included. The largest head is printed, not held: a
 * head may pass 1 KB for a moment when several appenders land on one shard
 * at once (hashing shares them out on average, not at every instant).
 */
import { describe, expect, it } from '@jest/globals';
import { headFigure } from '../../scripts/bench-head.js';

const APPENDERS = 16;
const APPENDS_EACH = 64;

describe('the feed heads with 16 appenders at once', () => {
  for (const idLength of [36, 68]) {
    it(`ids of ${idLength} characters: the mean head at an append is at most 1 KB, and an append bills at most 1.3 write units, flushes included`, async () => {
      const f = await headFigure(idLength, APPENDERS, APPENDS_EACH);
      console.log(
        `${idLength}-character ids, ${APPENDERS} appenders × ${APPENDS_EACH}, ${f.shards} head shards: mean head ${f.meanHead.toFixed(0)} B, largest ${f.largestHead} B, ${f.wcuPerAppend.toFixed(3)} WCU an append`,
      );
      expect({ meanHead: f.meanHead <= 1024, wcuPerAppend: f.wcuPerAppend <= 1.3 }).toEqual({ meanHead: true, wcuPerAppend: true });
    }, 60_000);
  }
});
