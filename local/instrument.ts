/**
 * Counts the DynamoDB calls a client makes, and when each is answered: the
 * data-model tests and the benchmark hold the access-pattern table (calls and
 * round trips) to it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Told of each call as it is sent; a function it answers is called when the call's answer (or error) is back. */
export type CallListener = (commandName: string) => void | (() => void);

export function onDynamoCall(client: DynamoDBDocumentClient, listener: CallListener): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const done = listener(String(context.commandName ?? 'unknown'));
      try {
        return await next(args);
      } finally {
        if (done) done();
      }
    },
    { step: 'initialize', name: 'countDynamoCalls' },
  );
}

/** When a call was sent and answered, in a count of events shared by the calls measured together. */
export interface CallSpan {
  start: number;
  end: number;
}

/**
 * Round trips: the longest chain of calls each sent after the previous one
 * was answered. Calls sent together (Promise.all) are one round trip.
 */
export function roundTrips(spans: readonly CallSpan[]): number {
  const depth: number[] = [];
  spans.forEach((s, i) => {
    depth[i] = 1 + Math.max(0, ...spans.slice(0, i).flatMap((p, j) => (p.end < s.start ? [depth[j]!] : [])));
  });
  return Math.max(0, ...depth);
}
