/**
 * Counts the DynamoDB calls a client makes: the data-model tests and the
 * benchmark hold the access-pattern table to it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export type CallListener = (commandName: string) => void;

export function onDynamoCall(client: DynamoDBDocumentClient, listener: CallListener): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      listener(String(context.commandName ?? 'unknown'));
      return next(args);
    },
    { step: 'initialize', name: 'countDynamoCalls' },
  );
}
