/**
 * A cursor-paginated list (discovery's `GET /events`, PRODUCT P17): `for
 * await` walks every item, page after page, passing each page's
 * `next_cursor` to the next request until `has_more` is false; `page()`
 * reads one page. Unlike an offset list there is no `total` to stop at: the
 * API says when the list ends. A cursor is a position in the list's order,
 * not a snapshot: an item that stays where it is is given exactly once; one
 * that moves across the cursor between pages may be given again or not at
 * all (a place's changes feed, `followPlace`, is exact under change).
 */

export interface CursorPagination {
  limit: number;
  has_more: boolean;
  /** Present exactly when `has_more` is true. */
  next_cursor?: string;
}

export interface CursorPage<T> {
  items: T[];
  pagination: CursorPagination;
}

export type CursorPageReader<T> = (cursor: string | undefined) => Promise<CursorPage<T>>;

export class CursorList<T> implements AsyncIterable<T> {
  constructor(
    private readonly read: CursorPageReader<T>,
    /** Where the walk starts: a `next_cursor` saved from an earlier page, or undefined for the first page. */
    private readonly cursor: string | undefined,
  ) {}

  /** One page: from `cursor` (a page's `next_cursor`), else where the list starts. */
  page(cursor: string | undefined = this.cursor): Promise<CursorPage<T>> {
    return this.read(cursor);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let cursor = this.cursor;
    for (;;) {
      const { items, pagination } = await this.read(cursor);
      yield* items;
      // A page that says "more" without a cursor to get it cannot be followed: stop rather than restart from the top.
      if (!pagination.has_more || pagination.next_cursor === undefined) return;
      cursor = pagination.next_cursor;
    }
  }

  /** Every item, in order. */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}
