/**
 * A wave: calls the write side sends together because none needs another's
 * answer (docs/data-model.md, "A change in waves"). DynamoDB may land them in
 * any order, and the safety argument holds for every order and every subset
 * that lands before a crash.
 *
 * `all` waits for every call of the wave before it answers or throws: a
 * failure (a throttle the SDK's retries did not outlast) is thrown only once
 * the others have landed or failed too. Promise.all would give up at the
 * first one and leave the others running behind the change's back, into the
 * redelivery, or into the next invocation of a Lambda frozen with them
 * pending.
 */
export async function all<T extends readonly unknown[]>(work: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** `all` over a list of the same kind of work. */
export async function each<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  return all(items.map(work));
}
