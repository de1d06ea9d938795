/**
 * dynalite 4.0.0 turns its store's iterators into streams and, when a stream
 * ends or is destroyed, closes the iterator with `iterator.return()` if there
 * is one; abstract-level's iterators have `close()` and no `return()`, so
 * every Scan and Query left its iterator open: the store kept it (and the
 * snapshot it reads) until the store closed, about 3 KB of buffers per call
 * that never came back (20,000 Scans of an empty table: 65 MB). This gives
 * the iterators of the very abstract-level copy dynalite's memory-level uses
 * the `return()` dynalite calls, so each is closed when its stream is done.
 * Imported, for its effect, wherever dynalite is started.
 */
import { createRequire } from 'node:module';

interface IteratorClass {
  prototype: { close(): Promise<void>; return?: () => Promise<void> };
}

const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
const fromMemoryLevel = createRequire(fromDynalite.resolve('memory-level'));
const level = fromMemoryLevel('abstract-level') as Record<'AbstractIterator' | 'AbstractKeyIterator' | 'AbstractValueIterator', IteratorClass>;

for (const name of ['AbstractIterator', 'AbstractKeyIterator', 'AbstractValueIterator'] as const) {
  const proto = level[name].prototype;
  proto.return ??= function (this: { close(): Promise<void> }) {
    return this.close();
  };
}
