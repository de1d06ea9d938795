/**
 * The orderings of PRODUCT P7. Every one ends with event id ascending, compared
 * by UTF-16 code unit like JavaScript's default sort, so pages are stable.
 * Datetimes are all fixed-width ISO strings, so string order is time order.
 */
interface Ordered {
  event_id: string;
  start_date: string;
  created_at: string;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Upcoming lists: earliest start first. */
export const byStartAscending = (a: Ordered, b: Ordered): number =>
  cmp(a.start_date, b.start_date) || cmp(a.event_id, b.event_id);

/** Past lists: most recent start first. */
export const byStartDescending = (a: Ordered, b: Ordered): number =>
  cmp(b.start_date, a.start_date) || cmp(a.event_id, b.event_id);

/** Profile and created lists: most recently created first. */
export const byCreatedDescending = (a: Ordered, b: Ordered): number =>
  cmp(b.created_at, a.created_at) || cmp(a.event_id, b.event_id);
