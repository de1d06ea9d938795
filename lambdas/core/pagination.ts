import type * as z from 'zod';
import type { paginationSchema } from './response-schemas.js';

export type Pagination = z.infer<typeof paginationSchema>;

export interface Page<T> {
  items: T[];
  pagination: Pagination;
}

/** Offset pagination over a fully ordered list; clients stop when offset + limit >= total. */
export function paginate<T>(all: readonly T[], limit: number, offset: number): Page<T> {
  return { items: all.slice(offset, offset + limit), pagination: { limit, offset, total: all.length } };
}
