/**
 * The first three calls of docs/client.md, runnable:
 *
 *   PUBLIC_API_KEY=pk_… PUBLIC_API_BASE_URL=http://127.0.0.1:3000/api/public/v1 npx tsx client/examples/first-calls.ts alice
 *
 * A consumer imports from 'public-events-client'; inside this repository the
 * example imports the sources so it runs without a build.
 * test/e2e/client-example.test.ts runs it against the local server.
 */
import { ApiError, createPublicClient } from '../src/index.js';

const username = process.argv[2] ?? 'alice';
// The key and the base URL come from PUBLIC_API_KEY and PUBLIC_API_BASE_URL.
const client = createPublicClient();

// 1. A user's upcoming events, page by page (5 a request), until `total`.
const ids: string[] = [];
for await (const event of client.users.events(username, { type: 'upcoming', limit: 5 })) {
  ids.push(event.id);
  console.log(`${event.start_date} ${event.id} ${event.title}`);
}

// 2. One event by id: the envelope's `data`, typed as PublicEvent.
if (ids[0] !== undefined) {
  const event = await client.events.get(ids[0]);
  console.log(`first: ${event.title} at ${event.location} (${event.timezone})`);
}

// 3. A failure is a typed error: status, message and per-field errors.
try {
  await client.events.get('evt_does_not_exist');
} catch (error) {
  if (!(error instanceof ApiError)) throw error;
  console.log(`error: ${error.status} ${error.message}`);
}
