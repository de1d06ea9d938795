/**
 * The feed heads' size and what an append bills, by appenders at once and id
 * length (`npm run bench`; docs/performance.md "The feed head"), with the
 * scope's FEED_SHARDS head shards (each appender's members spread over them
 * by their ids, as a change's are). Appenders append back to back, nothing
 * else between their appends: the worst case for a head, which holds every
 * entry from its append until a chunk holding it is written and the head
 * trimmed (two more round trips). `BENCH_HEAD_SHARDS=1` measures a single
 * head, as the feeds were before the shards.
 *
 * Billed without perturbing the race (no reads around the writes, unlike the
 * change tables' meter): an append by the head it returns (its size before
 * is that less the entries it added), a chunk by its size, a trim by the
 * head before it (the entries it removed added back), a refused write at
 * least 1 unit; 1 write unit per KB of the larger image (write-billing.ts).
 */
import { fixedClock } from '../lambdas/core/clock.js';
import { FEED_SHARDS, FeedWriter, MAX_CHUNK_ENTRIES, MAX_TAIL_ENTRIES, TAIL_FLUSH_BYTES } from '../lambdas/store/feeds/feed.js';
import { TableIO, type Item, type Key } from '../lambdas/store/table/table-io.js';
import { ensureTable } from '../local/dynalite.js';
import { directClient } from '../test/support/direct-dynalite.js';
import { startInProcessDynalite } from '../test/support/in-process-dynalite.js';
import { itemSize } from './write-billing.js';

const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const clock = fixedClock('2026-11-21T12:00:00.000Z');

class BilledFeedIO extends TableIO {
  /** An entry's bytes in a list (1 and the id's length): what a trim removed. */
  entryBytes = 1;
  billed = 0;
  appends = 0;
  headBytes = 0;
  largest = 0;
  override async put(item: Item): Promise<void> {
    this.billed += units(itemSize(item));
    return super.put(item);
  }
  override async updateIf(key: Key, update: string, condition: string, values: Record<string, unknown> = {}, names: Record<string, string> = {}): Promise<Item | undefined> {
    const after = await super.updateIf(key, update, condition, values, names);
    if (!after) {
      this.billed += 1;
      return after;
    }
    const size = itemSize(after);
    if (update.includes('list_append')) {
      this.appends++;
      this.headBytes += size;
      this.largest = Math.max(this.largest, size);
      this.billed += units(size);
    } else {
      // A trim: the head before it also held the entries it removed.
      const removed = (update.match(/#tail\[/g) ?? []).length;
      this.billed += units(size + removed * this.entryBytes);
    }
    return after;
  }
}

export interface HeadFigure {
  idLength: number;
  appenders: number;
  shards: number;
  meanHead: number;
  largestHead: number;
  wcuPerAppend: number;
}

/** Each of `appenders` appends `each` members of `idLength` characters to one scope of `shards` head shards, back to back. */
export async function headFigure(idLength: number, appenders: number, each = Number(process.env.BENCH_HEAD_APPENDS ?? 256), shards = Number(process.env.BENCH_HEAD_SHARDS ?? FEED_SHARDS)): Promise<HeadFigure> {
  const store = await startInProcessDynalite();
  try {
    const table = 'head';
    await ensureTable(directClient(store.call), table);
    const ios = Array.from({ length: appenders }, () => Object.assign(new BilledFeedIO(directClient(store.call), table), { entryBytes: 1 + idLength }));
    await Promise.all(
      ios.map(async (io, a) => {
        const writer = new FeedWriter(io, clock, TAIL_FLUSH_BYTES, MAX_CHUNK_ENTRIES, MAX_TAIL_ENTRIES, shards);
        for (let i = 0; i < each; i++) await writer.append('GUESTS#evt_head', [`usr_${a}_${i}_`.padEnd(idLength, 'x')]);
      }),
    );
    const appends = ios.reduce((n, io) => n + io.appends, 0);
    const billed = ios.reduce((n, io) => n + io.billed, 0);
    return {
      idLength,
      appenders,
      shards,
      meanHead: ios.reduce((n, io) => n + io.headBytes, 0) / appends,
      largestHead: Math.max(...ios.map((io) => io.largest)),
      wcuPerAppend: billed / appends,
    };
  } finally {
    await store.close();
  }
}

export async function headFigures(): Promise<string[]> {
  const rows = [
    '| Id length | Appenders at once | Head shards | Mean head at an append (bytes) | Largest head (bytes) | Billed write units per append (flushes included) | Appends a second the scope takes (its partition\'s 1,000 WCU/s) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const idLength of [12, 36, 68]) {
    for (const appenders of [1, 4, 16]) {
      const f = await headFigure(idLength, appenders);
      rows.push(`| ${idLength} | ${appenders} | ${f.shards} | ${f.meanHead.toFixed(0)} | ${f.largestHead} | ${f.wcuPerAppend.toFixed(2)} | ${Math.floor(1000 / f.wcuPerAppend)} |`);
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(`${(await headFigures()).join('\n')}\n`);
