// globalTeardown of jest's "dynamodb-local" project: stops the run's DynamoDB
// Local JVMs, which its globalSetup (dynamodb-local.ts) left under this key.
export default async function globalTeardown() {
  await globalThis[Symbol.for('public-events.dynamodb-local-pool')]?.close();
}
