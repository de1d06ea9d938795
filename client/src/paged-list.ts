/**
 * An offset-paginated list: `for await` walks every item, page by page, and
 * stops exactly at the API's `total`; `page()` reads one page.
 */

export interface Pagination {
  limit: number;
  offset: number;
  total: number;
}

export interface Page<T> {
  items: T[];
  pagination: Pagination;
}

export type PageReader<T> = (limit: number | undefined, offset: number) => Promise<Page<T>>;

export class PagedList<T> implements AsyncIterable<T> {
  constructor(
    private readonly read: PageReader<T>,
    /** Page size; the API's default (20) when undefined. */
    private readonly limit: number | undefined,
    private readonly offset: number = 0,
  ) {}

  /** One page, from `offset` (the list's own starting offset by default). */
  page(offset: number = this.offset): Promise<Page<T>> {
    return this.read(this.limit, offset);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let offset = this.offset;
    for (;;) {
      const { items, pagination } = await this.read(this.limit, offset);
      // Never past `total`, even if a page held more; an empty page ends the
      // walk too (the list shrank while we read it), so it cannot loop forever.
      const remaining = Math.max(0, pagination.total - offset);
      yield* items.slice(0, remaining);
      offset += items.length;
      if (items.length === 0 || offset >= pagination.total) return;
    }
  }

  /** Every item, in order. */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}
