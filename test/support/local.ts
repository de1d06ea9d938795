import { type CallSpan } from '../../local/instrument.js';
export { roundTrips } from '../../local/instrument.js';
import { fixedClock } from '../../lambdas/core/clock.js';
import { startLocalServer, type LocalServer, type LocalServerOptions } from '../../local/server.js';
import { forgetDocuments } from './contract.js';
import { assertLocalEndpoint } from './store.js';
import { DEMO_FILE, NOW } from './fixtures.js';
import { TEST_CURSOR_KEY } from './feed-keys.js';

export interface TestServer extends LocalServer {
  /** DynamoDB command names sent since the last reset. */
  calls: string[];
  /** When each of those calls was sent and answered (in a shared count of events; `end` Infinity while in flight). */
  spans: CallSpan[];
  responses: number[];
}

/** The real local server on an ephemeral port, clock pinned to NOW, cursors signed with the tests' key. */
export async function startTestServer(opts: Partial<LocalServerOptions> = {}): Promise<TestServer> {
  const calls: string[] = [];
  const spans: CallSpan[] = [];
  let events = 0;
  const responses: number[] = [];
  const server = await startLocalServer({
    dataFile: DEMO_FILE,
    port: 0,
    clock: fixedClock(NOW),
    onDynamoCall: (name) => {
      calls.push(name);
      const span = { start: events++, end: Infinity };
      spans.push(span);
      return () => {
        span.end = events++;
      };
    },
    onResponse: ({ status }) => responses.push(status),
    cursorKey: TEST_CURSOR_KEY,
    ...opts,
  });
  assertLocalEndpoint(server.storeEndpoint);
  const close = server.close;
  // A later server may get this port; it must not be checked against this one's documents.
  server.close = async () => {
    forgetDocuments(server.url);
    await close();
  };
  return Object.assign(server, { calls, spans, responses });
}
