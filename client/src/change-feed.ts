/**
 * A changes feed (the API's `/changes/…` routes) as an async iterable of
 * changes: `for await (const change of feed)` reads page after page until the
 * feed is up to date (`has_more: false`), and `feed.cursor` is, after each
 * page, the cursor to save: a consumer that stores it with what it applied
 * resumes exactly there after a restart. An expired cursor throws
 * CursorExpiredError: start again without one (and drop what the fresh start
 * does not show).
 */

export interface FeedPage<C> {
  changes: C[];
  next_cursor: string;
  has_more: boolean;
}

export type FeedPageReader<C> = (cursor: string | undefined, limit: number | undefined) => Promise<FeedPage<C>>;

export class ChangeFeed<C> implements AsyncIterable<C> {
  private saved: string | undefined;

  constructor(
    private readonly read: FeedPageReader<C>,
    cursor: string | undefined,
    private readonly limit: number | undefined,
  ) {
    this.saved = cursor;
  }

  /**
   * The cursor to save: the one given, then each page's `next_cursor` once
   * every change of that page has been yielded (so a consumer that saves it
   * after applying a change never skips one of that page).
   */
  get cursor(): string | undefined {
    return this.saved;
  }

  /** One page from the current cursor; advances the cursor. */
  async page(): Promise<FeedPage<C>> {
    const page = await this.read(this.saved, this.limit);
    this.saved = page.next_cursor;
    return page;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<C> {
    for (;;) {
      const page = await this.read(this.saved, this.limit);
      yield* page.changes;
      this.saved = page.next_cursor;
      if (!page.has_more) return;
    }
  }
}
