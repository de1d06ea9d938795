/**
 * Keeps a copy of a host's public events in a JSON file (docs/keeping-in-sync.md):
 *
 *   PUBLIC_API_KEY=pk_… PUBLIC_API_BASE_URL=http://127.0.0.1:3000/api/public/v1 npx tsx client/examples/keep-in-sync.ts alice [FILE]
 *
 * FILE defaults to mirror.json beside this script (client/examples/, ignored
 * by git), wherever it is run from.
 *
 * Run it as often as you like (a timer, a cron job): each run reads what
 * changed since the last one and saves the events with the cursor, in one
 * file written atomically, so a restart resumes exactly where the last
 * completed run stopped. test/e2e/client-example.test.ts runs it against the
 * local server.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CursorExpiredError, createPublicClient, type PublicEvent } from '../src/index.js';

interface Mirror {
  /** The feed's cursor after the last applied change; absent before the first run. */
  cursor?: string;
  events: Record<string, PublicEvent>;
}

const [username = 'alice', file = fileURLToPath(new URL('mirror.json', import.meta.url))] = process.argv.slice(2);
const client = createPublicClient();
const saved: Mirror = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Mirror) : { events: {} };

/** Applies the feed from `start` to `events` until it is up to date; answers the cursor to save. */
async function follow(events: Record<string, PublicEvent>, start: string | undefined): Promise<{ cursor: string | undefined; applied: number }> {
  const feed = client.changes.userEvents(username, { cursor: start });
  let applied = 0;
  for await (const change of feed) {
    if (change.change === 'upserted') events[change.id] = change.event;
    else delete events[change.id];
    applied++;
  }
  return { cursor: feed.cursor, applied };
}

let mirror: Mirror = { cursor: saved.cursor, events: { ...saved.events } };
let outcome;
try {
  outcome = await follow(mirror.events, mirror.cursor);
} catch (error) {
  if (!(error instanceof CursorExpiredError)) throw error;
  // Too long since the last run: start again; the fresh start holds every current event, so drop the rest.
  console.log('cursor expired: starting again');
  mirror = { events: {} };
  outcome = await follow(mirror.events, undefined);
}
mirror.cursor = outcome.cursor;

// Write the copy and its cursor together: a crash leaves the previous file whole.
writeFileSync(`${file}.tmp`, `${JSON.stringify(mirror, null, 2)}\n`);
renameSync(`${file}.tmp`, file);
console.log(`applied ${outcome.applied} changes; ${Object.keys(mirror.events).length} events in ${relative(process.cwd(), file)}`);
