/**
 * A fault that lasts: while the window is open, every call it matches (one
 * partition, one item, one kind of write) fails as DynamoDB fails a throttled
 * call once the SDK's retries are used up, without landing. It closes after a
 * stretch of failed calls, or when the test closes it: the adversary of the
 * "faults that last" tests, beside the single failed call of the fault sweeps.
 *
 * Used as the explorations' intercept (direct-dynalite.ts) or as middleware on
 * an SDK client (attach), at the `initialize` step, before the SDK's retry
 * strategy: what reaches the caller is the error after every retry.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Intercept } from './direct-dynalite.js';

export type CallMatch = (command: string, input: Record<string, unknown>) => boolean;

export class ThrottleError extends Error {
  override name = 'ProvisionedThroughputExceededException';
  readonly $retryable = { throttling: true };
  constructor() {
    super('The level of configured provisioned throughput for the table was exceeded (simulated: a throttle window)');
  }
}

/** The partition key a call names (Key, Item, or a Query's :pk), if any. */
export function partitionOf(input: Record<string, unknown>): string | undefined {
  const key = (input.Key ?? input.Item) as { pk?: unknown } | undefined;
  if (key?.pk !== undefined) return String(key.pk);
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  return values?.[':pk'] === undefined ? undefined : String(values[':pk']);
}

/** Every call to partitions whose key starts with `prefix`. */
export const toPartition =
  (prefix: string): CallMatch =>
  (_command, input) =>
    partitionOf(input)?.startsWith(prefix) ?? false;

export class ThrottleWindow {
  /** Calls failed so far, in all windows. */
  failed = 0;
  private left = 0;
  private isOpen = false;

  constructor(private readonly matches: CallMatch) {}

  /** Opens the window: for `calls` matched calls, or until close(). */
  open(calls = Number.POSITIVE_INFINITY): void {
    this.isOpen = true;
    this.left = calls;
  }

  close(): void {
    this.isOpen = false;
  }

  get opened(): boolean {
    return this.isOpen;
  }

  /** Whether this call fails; counts it down. */
  fails(command: string, input: Record<string, unknown>): boolean {
    if (!this.isOpen || !this.matches(command, input)) return false;
    this.failed++;
    if (--this.left <= 0) this.isOpen = false;
    return true;
  }

  readonly intercept: Intercept = async (command, input, send) => {
    if (this.fails(command, input)) throw new ThrottleError();
    return send();
  };

  /** The window on an SDK client, before its retries. */
  attach(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (this.fails(String(context.commandName), (args as { input: Record<string, unknown> }).input)) throw new ThrottleError();
        return next(args);
      },
      { step: 'initialize', name: 'throttleWindow' },
    );
    return client;
  }

  static isThrottle(error: unknown): boolean {
    return error instanceof ThrottleError || (error as { name?: string } | null)?.name === 'ProvisionedThroughputExceededException';
  }
}
