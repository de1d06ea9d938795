/**
 * A throttle window on BatchGetItem, as DynamoDB shows one: while it is open
 * (for its next `calls` BatchGetItem calls), a call of several keys reads
 * only its first and leaves the rest in `UnprocessedKeys`; a call of one key
 * fails as DynamoDB fails a batch it can read none of
 * (ProvisionedThroughputExceededException, here after the SDK's retries:
 * the middleware sits before them). Other commands pass untouched.
 */
import type { BatchGetCommand, BatchGetCommandOutput, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ThrottleError } from './throttle-window.js';

export interface BatchGetWindow {
  /** BatchGetItem calls sent so far (through the window or not). */
  readonly calls: number;
  /** Opens the window for the next `calls` BatchGetItem calls. */
  open(calls: number): void;
}

export function unprocessedKeysWindow(client: DynamoDBDocumentClient): BatchGetWindow {
  let calls = 0;
  let left = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'BatchGetItemCommand') return next(args);
      calls++;
      const throttled = left > 0;
      if (throttled) left--;
      const input = (args as { input: BatchGetCommand['input'] }).input;
      const [table, request] = Object.entries(input.RequestItems!)[0]!;
      const keys = request.Keys!;
      if (!throttled) return next(args);
      if (keys.length === 1) throw new ThrottleError();
      // Read all, answer the first: what the caller sees is what DynamoDB's partial answer would be.
      const out = await next(args);
      const output = out.output as BatchGetCommandOutput;
      const first = keys[0]!;
      const answered = (output.Responses?.[table] ?? []).filter((item) => item.pk === first.pk && item.sk === first.sk);
      return { ...out, output: { ...output, Responses: { [table]: answered }, UnprocessedKeys: { [table]: { ...request, Keys: keys.slice(1) } } } };
    },
    { step: 'initialize', name: 'unprocessedKeysWindow' },
  );
  return {
    get calls() {
      return calls;
    },
    open(n) {
      left = n;
    },
  };
}

/**
 * What one chunk of `keys` keys (at most 100) comes to under a window of
 * `window` calls with `attempts` attempts: the calls sent, and the page or
 * the error that ends the read (batch-get.ts's rule, played out).
 */
export function chunkOutcome(keys: number, window: number, attempts: number): { calls: number; ends: 'page' | 'UnprocessedKeysError' | 'ProvisionedThroughputExceededException' } {
  let left = keys;
  for (let call = 1; ; call++) {
    if (call > attempts) return { calls: attempts, ends: 'UnprocessedKeysError' };
    if (call > window) return { calls: call, ends: 'page' };
    if (left === 1) return { calls: call, ends: 'ProvisionedThroughputExceededException' };
    left--;
  }
}
