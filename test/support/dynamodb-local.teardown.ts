/**
 * jest globalTeardown of the "dynamodb-local" project: stops the JVMs that
 * globalSetup (dynamodb-local.ts) started. Jest loads global hooks with plain
 * `require`, outside the test module mapper, so this file imports nothing
 * relative; the key is the same Symbol.for string.
 */
interface Running {
  close(): Promise<void>;
}
const RUNNING = Symbol.for('public-events-api.dynamodb-local');

export default async function globalTeardown(): Promise<void> {
  const holder = globalThis as { [RUNNING]?: Running[] };
  const stores = holder[RUNNING] ?? [];
  delete holder[RUNNING];
  await Promise.all(stores.map((s) => s.close()));
}
